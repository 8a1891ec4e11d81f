package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// BenchmarkInvoiceListPage measures one page of GET /v1/invoices (the default 20 items, each with
// its lines) through the whole HTTP pipeline, with REMIT_BENCH_INVOICE_ROWS invoices of the
// merchant account in the store (default 2,000: .ci/run runs every benchmark once; the target,
// p99 under 15 ms, is for 1,000,000): the first page and a page at half the list's depth, each
// without a filter and with one (a customer's invoices, the open ones). It reports the p50 and p99
// of the requests it made. Figures and the command: docs/performance.md "List pages".
//
//	REMIT_BENCH_INVOICE_ROWS=1000000 go test -run '^$' -bench InvoiceListPage -benchtime 2000x ./httpapi/
//	REMIT_TEST_POSTGRES_URL=... REMIT_BENCH_INVOICE_ROWS=1000000 go test -run '^$' -bench 'InvoiceListPage/postgres' -benchtime 2000x ./httpapi/
//
// The invoices are written straight into the store in one statement (seedInvoices): through the
// API a million would take hours.
func BenchmarkInvoiceListPage(b *testing.B) {
	rows := max(benchEnvInt("REMIT_BENCH_INVOICE_ROWS", 2_000), 1000)
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			ctx := context.Background()
			scope := remit.Scope{OrganizationID: e.Tenant.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: e.Tenant.Sandbox}
			start := time.Now()
			seed := seedInvoices(b, e, rows)
			b.Logf("%s: %d invoices seeded in %s", kind, rows, time.Since(start).Round(time.Millisecond))
			// The page at half the depth starts after the middle row (of the customer's, of the
			// open ones): its cursor is the one the page before it would have answered.
			cursor := func(i int) string {
				c, err := e.App.NextCursor(ctx, scope, "invoices", app.Page{Limit: 20}, true, seed.created(i), seed.id(i))
				if err != nil {
					b.Fatal(err)
				}
				return "&cursor=" + url.QueryEscape(*c)
			}
			mid := rows / 2
			customer := seed.customer(mid)
			open := mid - mid%4 + 1 // i%4 == 1: open
			// The floor: the same pipeline answering the merchant clock, which reads no table; on a
			// shared machine its tail is the scheduler's, which every page's tail includes.
			b.Run("floor", func(b *testing.B) {
				percentiles(b, e, e.Server.URL+clockPath+"?environment=sandbox&merchantAccountId="+url.QueryEscape(e.Tenant.Sandbox))
			})
			for _, c := range []struct {
				name, query string
				first       string // the page's first invoice
			}{
				{"first", "", "inv_bench_model"},
				{"deep", cursor(mid), seed.id(mid - 1)},
				{"customer-first", "&customerId=" + customer, seed.id(rows - 1 - (rows-1-mid%seed.customers)%seed.customers)},
				{"customer-deep", "&customerId=" + customer + cursor(mid), seed.id(mid - seed.customers)},
				{"open-first", "&status=open", seed.id(rows - 1 - (rows-1-1)%4)},
				{"open-deep", "&status=open" + cursor(open), seed.id(open - 4)},
			} {
				b.Run(c.name, func(b *testing.B) {
					page := e.Must(200, "GET", "/v1/invoices?"+c.query[min(1, len(c.query)):], nil).Data()["items"].([]any)
					if len(page) != 20 || page[0].(map[string]any)["invoiceId"] != c.first {
						b.Fatalf("%d items, the first %v, want 20 from %s", len(page), page[0].(map[string]any)["invoiceId"], c.first)
					}
					percentiles(b, e, e.Server.URL+"/v1/invoices?environment=sandbox&merchantAccountId="+url.QueryEscape(e.Tenant.Sandbox)+c.query)
				})
			}
		})
	}
}

// percentiles times a GET of u per iteration (200 expected) and reports the p50 and p99.
func percentiles(b *testing.B, e *testkit.Env, u string) {
	client := e.Server.Client()
	var took []time.Duration
	for b.Loop() {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		t0 := time.Now()
		doBench(b, client, req, 200)
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[min(len(took)-1, len(took)*99/100)]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// invoiceSeed says what row i of seedInvoices is.
type invoiceSeed struct {
	base      int64
	customers int // row i is of customer i mod customers
}

func (s invoiceSeed) id(i int) string       { return fmt.Sprintf("inv_bench_%07d", i) }
func (s invoiceSeed) customer(i int) string { return fmt.Sprintf("cus_bench_%03d", i%s.customers) }
func (s invoiceSeed) created(i int) time.Time {
	return remit.FromMicros(s.base + int64(i)*1_000_000)
}

// seedInvoices writes n invoices of the sandbox account in one INSERT … SELECT over generated
// numbers (PostgreSQL's generate_series, SQLite's recursive CTE), a second apart, over n/1000
// customers (row i: cus_bench_<i mod customers>: 1,000 invoices each), a quarter each draft, open
// (i mod 4 = 1) and paid (the other two), each with the lines of one invoice made through the API (a two-line document), then
// analyzes the table.
func seedInvoices(b *testing.B, e *testkit.Env, n int) invoiceSeed {
	b.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "bench-plan", "productId": "bench", "name": "Pro plan",
		"priceType": "fixed_recurring", "currency": "USD", "unitAmount": 4900, "billingInterval": "month"})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "bench-seat", "productId": "bench", "name": "Seats",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1200})
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "cus_bench_model", "name": "Model"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_bench", "customerId": "cus_bench_model", "currency": "USD"})
	model := create(b, e, "/v1/invoices", map[string]any{"invoiceId": "inv_bench_model", "customerId": "cus_bench_model", "billingAccountId": "ba_bench",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "bench-plan"}, map[string]any{"priceId": "bench-seat", "quantity": 5}}})
	ctx := context.Background()
	db := e.App.DB
	var doc string
	if err := db.SQL().QueryRowContext(ctx, `SELECT lines_doc FROM invoices WHERE id = $1`, model["invoiceId"]).Scan(&doc); err != nil {
		b.Fatal(err)
	}
	seed := invoiceSeed{base: remit.Micros(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)), customers: max(1, n/1000)}
	numbers := `SELECT i FROM generate_series(0, $1::bigint - 1) AS g(i)`
	prefix := ""
	if db.Dialect() == store.SQLite {
		prefix = `WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i + 1 < $1) `
		numbers = `SELECT i FROM g`
	}
	pad := func(width int) string { // i as text, zero-padded to width (as invoiceSeed writes it)
		return `substr('0000000' || i, length('0000000' || i) - ` + fmt.Sprint(width-1) + `)`
	}
	query := prefix + `INSERT INTO invoices (merchant_account_id, id, number, customer_id, billing_account_id, currency, status,
		collection_method, subtotal, total, amount_due, amount_paid, amount_remaining, created_at, updated_at, finalized_at, paid_at, lines_doc)
		SELECT $2, 'inv_bench_' || ` + pad(7) + `,
			CASE WHEN i % 4 = 0 THEN NULL ELSE 'BENCH-' || ` + pad(7) + ` END,
			'cus_bench_' || ` + `substr('000' || (i % $5), length('000' || (i % $5)) - 2)` + `, 'ba_bench', 'USD',
			CASE i % 4 WHEN 0 THEN 'draft' WHEN 1 THEN 'open' ELSE 'paid' END, 'charge_automatically',
			10900, 10900, 10900, CASE WHEN i % 4 >= 2 THEN 10900 ELSE 0 END, CASE WHEN i % 4 = 1 THEN 10900 ELSE 0 END,
			$3 + i * 1000000, $3 + i * 1000000,
			CASE WHEN i % 4 = 0 THEN NULL ELSE $3 + i * 1000000 END, CASE WHEN i % 4 >= 2 THEN $3 + i * 1000000 END, $4
		FROM (` + numbers + `) AS s`
	if _, err := db.SQL().ExecContext(ctx, query, n, e.Tenant.Sandbox, seed.base, doc, seed.customers); err != nil {
		b.Fatalf("seed: %v", err)
	}
	if _, err := db.SQL().ExecContext(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	// The seed is what invoiceSeed says it is.
	for _, i := range []int{0, n / 2, n - 1} {
		got, err := db.Read(ctx).GetInvoice(ctx, e.Tenant.Sandbox, seed.id(i), store.Unlocked)
		if err != nil || got.CustomerID != seed.customer(i) || !got.CreatedAt.Equal(seed.created(i)) || len(got.Lines) != 2 {
			b.Fatalf("row %d: %+v %v", i, got, err)
		}
	}
	return seed
}
