package app_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// Hot paths of the engine, each on every configured store (SQLite; PostgreSQL when
// REMIT_TEST_POSTGRES_URL is set). CI runs them once (-benchtime 1x) so that they keep working;
// docs/performance.md has figures.
//
//	go test -run '^$' -bench 'AuthScope|Idempotency|LedgerAppend' -benchtime 2s ./app/

// BenchmarkAuthScope: what every authenticated, scoped request does before its own work — the
// API key and the merchant account read in one statement (AuthenticateScoped), the secret checked,
// the scope resolved (ResolveScopeWith).
func BenchmarkAuthScope(b *testing.B) {
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				p, m, err := e.App.Access.AuthenticateScoped(ctx, e.Tenant.APIKey, e.Tenant.Sandbox)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := e.App.Access.ResolveScopeWith(p, remit.Sandbox, e.Tenant.Sandbox, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdempotency: the Idempotency-Key check of a write, inside its transaction.
//   - new-key: a key never seen: claimed and completed with a small answer in one commit;
//   - replay: a key already answered: the remembered answer is found (nothing is written).
func BenchmarkIdempotency(b *testing.B) {
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			ctx := context.Background()
			scope := remit.Scope{OrganizationID: e.Tenant.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: e.Tenant.Sandbox}
			body := []byte(`{"currency":"USD","amount":500,"metadata":{"order":"1234"}}`)
			answer := []byte(`{"data":{"object":"balance_entry"},"requestId":"req_x"}`)
			const route = "POST /v1/customers/cus_1/balance/grant"
			claim := func(b *testing.B, key string) *app.StoredResponse {
				var replay *app.StoredResponse
				err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
					c, rep, err := e.App.ClaimIdempotent(ctx, tx, scope, key, route, remit.BodyFingerprint(body))
					if err != nil || rep != nil {
						replay = rep
						return err
					}
					return e.App.FinishIdempotent(ctx, tx, scope, key, c, 201, answer)
				})
				if err != nil {
					b.Fatal(err)
				}
				return replay
			}
			b.Run("new-key", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if claim(b, "bench-new-"+strconv.Itoa(i)) != nil {
						b.Fatal("a new key was replayed")
					}
				}
			})
			b.Run("replay", func(b *testing.B) {
				claim(b, "bench-replay")
				b.ReportAllocs()
				for b.Loop() {
					if r := claim(b, "bench-replay"); r == nil || r.Status != 201 {
						b.Fatal("no replay")
					}
				}
			})
		})
	}
}

// BenchmarkLedgerAppend: one prepaid balance grant (app.GrantBalance): the customer's check, the
// entry and its event, committed durably (serial: one commit each).
func BenchmarkLedgerAppend(b *testing.B) {
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			ctx := context.Background()
			m, err := e.App.DB.Read(ctx).GetMerchantAccount(ctx, e.Tenant.Sandbox, store.Unlocked)
			if err != nil {
				b.Fatal(err)
			}
			c, err := e.App.Catalog.CreateCustomer(ctx, m, remit.Customer{Name: "Bench"})
			if err != nil {
				b.Fatal(err)
			}
			desc := "Prepaid credit"
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.App.Ledger.GrantBalance(ctx, m, c.CustomerID, remit.GrantInput{Currency: "USD", Amount: 500, Description: &desc}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
