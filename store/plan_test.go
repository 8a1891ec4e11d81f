package store

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// planRecorder runs every statement for real and records SQLite's query plan of each query.
type planRecorder struct {
	t     *testing.T
	db    *sql.DB
	plans []string
}

func (r *planRecorder) plan(query string, args []any) {
	rows, err := r.db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		r.t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			r.t.Fatal(err)
		}
		lines = append(lines, detail)
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
// answers (SQLite's plans; PostgreSQL has the same indexes): no table scan, and no sort of all
// the matching rows before a page's LIMIT — so a filtered page costs the same however large the
// table, and a cursor page the same at any depth.
func TestListPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+t.TempDir()+"/plans.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rec := &planRecorder{t: t, db: db.read}
	q := Q{q: rec, d: SQLite}
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
	for _, f := range []TaxFilter{{}, {Status: "quoted"}, {SourceDocumentID: "inv"}, {Status: "committed", AfterCreated: at, AfterID: "txn_1"}, {AfterCreated: at, AfterID: "txn_1"}} {
		f.Limit = 20
		must(q.ListTaxTransactions(ctx, m, f))
	}
	for _, f := range []SettlementFilter{{Limit: 20}, {Status: "open", Limit: 20}, {Status: "paid", AfterCreated: at, AfterID: "stl_1", Limit: 20}, {AfterCreated: at, AfterID: "stl_1"}} {
		must(q.ListSettlements(ctx, m, f))
	}
	must(q.ListEvents(ctx, m, "", 0, "", 21))
	must(q.ListEvents(ctx, m, "invoice.paid", at, "evt_1", 21))
	must(q.ListWebhookEndpoints(ctx, m, at, "we_1", 21))
	must(q.ListWebhookDeliveries(ctx, m, "evt_1", at, "wd_1", 21))
	must(q.ListBalanceEntries(ctx, m, "cus_1"))
	must(q.ListInvoicePayments(ctx, m, "inv_1"))
	_, _ = q.GetInvoice(ctx, m, "inv_1", Unlocked) // not found: only the invoice's own query
	_, _ = q.GetCustomer(ctx, m, "cus_1")
	must(q.ClaimUndispatchedEvents(ctx, 100))

	if len(rec.plans) < 20 {
		t.Fatalf("only %d queries were planned", len(rec.plans))
	}
	for _, p := range rec.plans {
		if testing.Verbose() {
			t.Log(p)
		}
		plan, query, _ := strings.Cut(p, "   <- ")
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
