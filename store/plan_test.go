package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// planRecorder runs every statement for real and records the query plan of each query: SQLite's
// EXPLAIN QUERY PLAN, or PostgreSQL's EXPLAIN (one node a line).
type planRecorder struct {
	t     *testing.T
	db    queryer // a *sql.DB (SQLite) or the one *sql.Conn its session settings apply to (PostgreSQL)
	d     Dialect
	plans []string
}

func (r *planRecorder) plan(query string, args []any) {
	explain := "EXPLAIN QUERY PLAN "
	if r.d == Postgres {
		explain = "EXPLAIN "
	}
	rows, err := r.db.QueryContext(context.Background(), explain+query, args...)
	if err != nil {
		r.t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if r.d == Postgres {
			err = rows.Scan(&detail)
		} else {
			err = rows.Scan(&id, &parent, &unused, &detail)
		}
		if err != nil {
			r.t.Fatal(err)
		}
		lines = append(lines, strings.TrimSpace(detail))
	}
	r.plans = append(r.plans, strings.Join(lines, " | ")+"   <- "+strings.Join(strings.Fields(query), " "))
}

func (r *planRecorder) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.db.ExecContext(ctx, query, args...)
}

func (r *planRecorder) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r.plan(query, args)
	return r.db.QueryContext(ctx, query, args...)
}

func (r *planRecorder) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	r.plan(query, args)
	return r.db.QueryRowContext(ctx, query, args...)
}

// TestListPlans: every list and every filter of a list reads one index range in the order it
// answers (SQLite's plans; TestListPlansPostgres checks PostgreSQL's on the same indexes): no table
// scan, and no sort of all the matching rows before a page's LIMIT — so a filtered page costs the
// same however large the table, and a cursor page the same at any depth. A customer's balance
// entries in one currency are a range of their own (balance_entries_currency), not the customer's
// range filtered, so such a page costs the same however many entries other currencies have.
func TestListPlans(t *testing.T) {
	rec := sqliteRecorder(t)
	runLists(t, Q{q: rec, d: SQLite})
	for _, p := range rec.plans {
		if testing.Verbose() {
			t.Log(p)
		}
		plan, query, _ := strings.Cut(p, "   <- ")
		if strings.Contains(query, "FROM balance_entries") && strings.Contains(query, "currency = $3") && !strings.Contains(plan, "currency=?") {
			t.Errorf("the currency is filtered, not part of the index range: %s\n  in %s", plan, query)
		}
		for _, step := range strings.Split(plan, " | ") {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") {
				t.Errorf("a table scan: %s\n  in %s", step, query)
			}
			// ("FOR LAST TERM OF ORDER BY" only orders rows that tie on the index's columns.)
			if strings.Contains(step, "USE TEMP B-TREE FOR ORDER BY") && strings.Contains(query, "LIMIT") {
				t.Errorf("every matching row is sorted before the LIMIT: %s\n  in %s", step, query)
			}
		}
	}
}

// TestListPlansPostgres is TestListPlans on PostgreSQL, when REMIT_TEST_POSTGRES_URL is set. Its
// tables are empty, on which the planner rightly prefers a sequential scan (or a bitmap scan); with
// those disabled for the session, what remains to check is that an index gives every list its order: no Seq Scan, and
// no Sort node under a LIMIT (an Incremental Sort, like SQLite's "FOR LAST TERM", only orders ties).
func TestListPlansPostgres(t *testing.T) {
	base := os.Getenv("REMIT_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("REMIT_TEST_POSTGRES_URL not set")
	}
	ctx := context.Background()
	db := postgresSchema(t, base)
	conn, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	// Nor a bitmap scan, which reads an index out of its order: on an empty table a first page of
	// the account's whole range is estimated at 2 rows, which makes sorting them look free.
	if _, err := conn.ExecContext(ctx, `SET enable_bitmapscan = off`); err != nil {
		t.Fatal(err)
	}
	rec := &planRecorder{t: t, db: conn, d: Postgres}
	runLists(t, Q{q: rec, d: Postgres})
	for _, p := range rec.plans {
		if testing.Verbose() {
			t.Log(p)
		}
		plan, query, _ := strings.Cut(p, "   <- ")
		if strings.Contains(query, "dispatched_at IS NULL") {
			// ClaimUndispatchedEvents is a queue, not a list: its index (dispatched_at, created_at)
			// leaves PostgreSQL to sort the few undispatched rows by id under FOR UPDATE.
			continue
		}
		if strings.Contains(query, "FROM balance_entries") && strings.Contains(plan, "Filter:") {
			t.Errorf("a filter outside the index range: %s\n  in %s", plan, query)
		}
		for _, step := range strings.Split(plan, " | ") {
			node := strings.TrimPrefix(step, "->  ")
			if strings.HasPrefix(node, "Seq Scan") {
				t.Errorf("a table scan: %s\n  in %s", step, query)
			}
			if strings.HasPrefix(node, "Sort  (") && strings.Contains(query, "LIMIT") {
				t.Errorf("every matching row is sorted before the LIMIT: %s\n  in %s", step, query)
			}
		}
	}
}

// sqliteRecorder records plans on the read pool of a fresh migrated SQLite store.
func sqliteRecorder(t *testing.T) *planRecorder {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+t.TempDir()+"/plans.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return &planRecorder{t: t, db: db.read, d: SQLite}
}

// postgresRecorder records plans on one connection of a fresh migrated schema of the PostgreSQL at
// base, with the session settings given.
func postgresRecorder(t *testing.T, base string, settings ...string) *planRecorder {
	ctx := context.Background()
	db := postgresSchema(t, base)
	conn, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, set := range settings {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	return &planRecorder{t: t, db: conn, d: Postgres}
}

// postgresSchema opens a migrated store in a fresh schema of the PostgreSQL at base, dropped when
// the test ends.
func postgresSchema(t *testing.T, base string) *DB {
	ctx := context.Background()
	admin, err := Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("plans_%d", time.Now().UnixNano())
	if _, err := admin.SQL().ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.SQL().ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`)
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	v.Set("search_path", schema)
	u.RawQuery = v.Encode()
	db, err := Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// runLists runs every list query, with and without each filter and cursor, through q.
func runLists(t *testing.T, q Q) {
	ctx := context.Background()
	const m = "ma_1"
	at := time.Now().UnixMicro()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []ReceiptFilter{{}, {CustomerID: "c"}, {CustomerExternalID: "x"}, {BillingAccountID: "b"}, {InvoiceID: "i"},
		{PaymentID: "p"}, {PaymentIntentID: "pi"}, {Status: "succeeded"}, {CustomerID: "c", Status: "refunded"}, {CustomerID: "c", Offset: 40}} {
		f.Limit = 20
		must(q.ListReceipts(ctx, m, f))
	}
	for _, f := range []TaxFilter{{}, {Status: "quoted"}, {SourceDocumentID: "inv"}, {Status: "committed", ListPage: ListPage{AfterCreated: at, AfterID: "txn_1"}}, {ListPage: ListPage{AfterCreated: at, AfterID: "txn_1"}}} {
		f.Limit = 20
		must(q.ListTaxTransactions(ctx, m, f))
	}
	after := ListPage{AfterCreated: at, AfterID: "x_1", Limit: 20}
	ranged := ListPage{CreatedFrom: at - 3600e6, CreatedTo: at, Limit: 20}
	pages := []ListPage{{Limit: 20}, after, ranged, {AfterCreated: at, AfterID: "x_1", CreatedFrom: at - 3600e6, CreatedTo: at, Limit: 20}}
	yes, no := true, false
	for _, f := range []SettlementFilter{{ListPage: ListPage{Limit: 20}}, {Status: "open", ListPage: ListPage{Limit: 20}},
		{Status: "paid", ListPage: after}, {ListPage: ListPage{AfterCreated: at, AfterID: "stl_1"}}, {Status: "closed", ListPage: ranged}} {
		must(q.ListSettlements(ctx, m, f))
	}
	for _, p := range pages {
		must(q.ListEvents(ctx, m, "", p))
		must(q.ListEvents(ctx, m, "invoice.paid", p))
		must(q.ListWebhookEndpoints(ctx, m, p))
		must(q.ListWebhookDeliveries(ctx, m, "evt_1", p))
		must(q.ListMeters(ctx, m, p))
		must(q.ListMerchantAccounts(ctx, "org_1", "sandbox", p))
		must(q.ListPaymentMethods(ctx, m, "cus_1", p))
		must(q.ListCoupons(ctx, m, CouponFilter{ListPage: p}))
		must(q.ListCoupons(ctx, m, CouponFilter{Active: &yes, ListPage: p}))
		for _, f := range []CustomerFilter{{}, {Email: "a@example.com"}} {
			f.ListPage = p
			must(q.ListCustomers(ctx, m, f))
		}
		for _, f := range []PriceFilter{{}, {PriceType: "fixed_recurring"}, {MeterID: "meter_1"}, {Currency: "USD"}, {ProductID: "prod_1"}, {Active: &yes}, {Active: &no}} {
			f.ListPage = p
			must(q.ListPrices(ctx, m, f))
		}
		for _, f := range []BillingAccountFilter{{}, {CustomerID: "cus_1"}} {
			f.ListPage = p
			must(q.ListBillingAccounts(ctx, m, f))
		}
		for _, f := range []QuoteFilter{{}, {CustomerID: "cus_1"}, {Status: "draft"}} {
			f.ListPage = p
			must(q.ListQuotes(ctx, m, f))
		}
		for _, f := range []InvoiceFilter{{}, {CustomerID: "cus_1"}, {Status: "open"}, {BillingAccountID: "ba_1"}, {SubscriptionID: "sub_1"},
			{Number: "INV-000001"}, {CustomerID: "cus_1", Status: "paid", Lines: true}} {
			f.ListPage = p
			must(q.ListInvoices(ctx, m, f))
		}
		for _, f := range []CreditNoteFilter{{}, {InvoiceID: "inv_1"}, {CustomerID: "cus_1"}} {
			f.ListPage = p
			must(q.ListCreditNotes(ctx, m, f))
		}
		for _, f := range []UsageEventFilter{{}, {CustomerID: "cus_1"}, {MeterID: "meter_1"}, {IncludeVoided: true}, {CustomerID: "cus_1", IncludeVoided: true},
			{MeterID: "meter_1", IncludeVoided: true}} {
			f.ListPage = p
			must(q.ListUsageEvents(ctx, m, f))
		}
		for _, f := range []ThresholdFilter{{}, {CustomerID: "cus_1"}, {MeterID: "meter_1"}, {Status: "active"}} {
			f.ListPage = p
			must(q.ListUsageThresholds(ctx, m, f))
		}
		for _, f := range []TaxFilter{{}, {Status: "quoted"}, {SourceDocumentID: "inv"}} {
			f.ListPage = p
			must(q.ListTaxTransactions(ctx, m, f))
		}
		for _, currency := range []string{"", "USD"} {
			must(q.PageBalanceEntries(ctx, m, "cus_1", currency, p))
		}
		for _, f := range []SubscriptionFilter{{}, {CustomerID: "cus_1"}, {Status: "active"}} {
			f.ListPage = p
			must(q.ListSubscriptions(ctx, m, f))
		}
		for _, f := range []PriceMigrationFilter{{}, {Status: "running"}} {
			f.ListPage = p
			must(q.ListPriceMigrations(ctx, m, f))
		}
	}
	must(q.ListBalanceEntries(ctx, m, "cus_1"))
	must(q.ListReceipts(ctx, m, ReceiptFilter{CustomerID: "c", CreatedFrom: at - 3600e6, CreatedTo: at, Limit: 20}))
	must(q.ListInvoicePayments(ctx, m, "inv_1"))
	_, _ = q.GetInvoice(ctx, m, "inv_1", Unlocked) // not found: only the invoice's own query
	_, _ = q.GetCustomer(ctx, m, "cus_1")
	must(q.ClaimUndispatchedEvents(ctx, 100))
	if n := len(q.q.(*planRecorder).plans); n < 200 {
		t.Fatalf("only %d queries were planned", n)
	}
}
