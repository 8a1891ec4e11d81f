package app_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// BenchmarkSettlementsPage measures one page (limit 20) of GET /v1/merchant-accounts/{id}/settlements
// through the engine (cursor check, keyset query, next cursor) on a merchant account with 200,000
// settlements: the first page (depth 0) and the page after the 100,000th row (depth 100,000, with
// 100,000 older rows still behind it). Keyset
// paging makes both cost the same. For contrast, offset-100000 runs the same page as
// LIMIT/OFFSET SQL, the cost keyset paging avoids. Figures: docs/performance.md "Settlements paging".
//
//	go test -run '^$' -bench SettlementsPage -benchtime 2s ./app/
//	REMIT_TEST_POSTGRES_URL=... go test -run '^$' -bench SettlementsPage -benchtime 2s ./app/
//
// REMIT_BENCH_SETTLEMENT_ROWS replaces the 200,000 rows (the page is read at half of them):
// .ci/run, which runs every benchmark once only so that none rots, seeds 2,000.
func BenchmarkSettlementsPage(b *testing.B) {
	rows, limit := 200_000, 20
	if n, err := strconv.Atoi(os.Getenv("REMIT_BENCH_SETTLEMENT_ROWS")); err == nil && n >= 4*limit {
		rows = n
	}
	depth := rows / 2
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			ctx := context.Background()
			scope := remit.Scope{OrganizationID: e.Tenant.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: e.Tenant.Sandbox}
			ids, created := seedSettlements(b, e.App.DB, e.Tenant.Sandbox, rows)
			// Row i is the (rows-i)th newest: the page at depth 100,000 starts after row rows-depth.
			after := rows - depth
			cursor, err := e.App.NextCursor(ctx, scope, "settlements:all", app.Page{Limit: limit}, true, created[after], ids[after])
			if err != nil {
				b.Fatal(err)
			}
			page := func(b *testing.B, cur string, wantFirst string) {
				l, err := e.App.Payments.ListSettlements(ctx, scope, scope.MerchantAccountID, remit.SettlementQuery{Scope: "all", ListQuery: remit.ListQuery{Limit: fmt.Sprint(limit), Cursor: cur}})
				if err != nil {
					b.Fatal(err)
				}
				if len(l.Items) != limit || l.Items[0].SettlementID != wantFirst || l.NextCursor == nil {
					b.Fatalf("page: %d items, first %s, want %s", len(l.Items), l.Items[0].SettlementID, wantFirst)
				}
			}
			b.Run("depth-0", func(b *testing.B) {
				for b.Loop() {
					page(b, "", ids[rows-1])
				}
			})
			b.Run(fmt.Sprintf("depth-%d", depth), func(b *testing.B) {
				for b.Loop() {
					page(b, *cursor, ids[after-1])
				}
			})
			b.Run(fmt.Sprintf("offset-%d", depth), func(b *testing.B) {
				q := e.App.DB.Read(ctx)
				for b.Loop() {
					r, err := q.Query(ctx, `SELECT id FROM settlements WHERE merchant_account_id = $1
						ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, scope.MerchantAccountID, limit+1, depth)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for r.Next() {
						n++
					}
					r.Close()
					if n != limit+1 {
						b.Fatalf("offset page: %d rows", n)
					}
				}
			})
		})
	}
}

// seedSettlements inserts n paid settlements in bulk (multi-row INSERTs, one transaction) and returns
// their IDs and creation times, oldest first.
func seedSettlements(b *testing.B, db *store.DB, merchantID string, n int) ([]string, []time.Time) {
	b.Helper()
	ids, created := make([]string, n), make([]time.Time, n)
	day0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 500
	err := db.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		for first := 0; first < n; first += batch {
			var sb strings.Builder
			var args []any
			sb.WriteString(`INSERT INTO settlements (merchant_account_id, id, currency, status, period_start, period_end,
				gross_amount, fee_amount, payment_count, closed_at, paid_at, payout_id, created_at, updated_at) VALUES `)
			for i := first; i < min(first+batch, n); i++ {
				ids[i] = remit.NewID("stl")
				start := day0.AddDate(0, 0, i)
				created[i] = start.Add(12 * time.Hour)
				if i > first {
					sb.WriteString(", ")
				}
				p := len(args)
				fmt.Fprintf(&sb, "($%d, $%d, 'USD', 'paid', $%d, $%d, 10000, 320, 1, $%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
				end := remit.Micros(start.AddDate(0, 0, 1))
				args = append(args, merchantID, ids[i], remit.Micros(start), end, end, end+1, "po_"+ids[i][4:], remit.Micros(created[i]), end+1)
			}
			if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `ANALYZE settlements`)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return ids, created
}
