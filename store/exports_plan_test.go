package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// TestExportPlans: every export, with each of its filters and a creation range, reads its rows in
// the order it writes them from one index range (SQLite's plans): no table scan and no sort of the
// rows, so that its first row comes at once and nothing holds its rows before they are written.
// The usage pre-aggregates are merged, not sorted.
func TestExportPlans(t *testing.T) {
	rec := sqliteRecorder(t)
	runExports(t, Q{q: rec, d: SQLite})
	for _, p := range rec.plans {
		if testing.Verbose() {
			t.Log(p)
		}
		plan, query, _ := strings.Cut(p, "   <- ")
		for _, step := range strings.Split(plan, " | ") {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") {
				t.Errorf("a table scan: %s\n  in %s", step, query)
			}
			// ("FOR LAST TERM OF ORDER BY" only orders rows that tie on the index's columns: one
			// invoice's lines, one customer's hours of one meter.)
			if strings.Contains(step, "USE TEMP B-TREE") && !strings.Contains(step, "FOR LAST TERM") {
				t.Errorf("a sort: %s\n  in %s", step, query)
			}
		}
	}
}

// TestExportPlansPostgres is TestExportPlans on PostgreSQL, when REMIT_TEST_POSTGRES_URL is set,
// with sorts off as ExportSnapshot turns them off (and sequential scans, which the empty tables
// invite): no Seq Scan and no Sort node; the usage pre-aggregates are a Merge Append.
func TestExportPlansPostgres(t *testing.T) {
	base := os.Getenv("REMIT_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("REMIT_TEST_POSTGRES_URL not set")
	}
	rec := postgresRecorder(t, base, `SET enable_seqscan = off`, `SET enable_sort = off`)
	runExports(t, Q{q: rec, d: Postgres})
	for _, p := range rec.plans {
		if strings.Contains(p, "FROM usage_hourly") && !strings.Contains(p, "Merge Append") {
			t.Errorf("the usage pre-aggregates are not merged: %s", p)
		}
		if testing.Verbose() {
			t.Log(p)
		}
		plan, query, _ := strings.Cut(p, "   <- ")
		for _, step := range strings.Split(plan, " | ") {
			node := strings.TrimPrefix(step, "->  ")
			// (An Incremental Sort, like SQLite's "FOR LAST TERM", only orders ties: one invoice's
			// lines.)
			if strings.HasPrefix(node, "Seq Scan") || strings.HasPrefix(node, "Sort  (") {
				t.Errorf("a table scan or a sort: %s\n  in %s", step, query)
			}
		}
	}
}

// runExports runs every export, with and without each filter and a range, through q.
func runExports(t *testing.T, q Q) {
	ctx := context.Background()
	const m = "ma_1"
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	filters := func(more ...remit.ExportFilter) []remit.ExportFilter {
		return append([]remit.ExportFilter{{}, {From: from}, {To: to}, {From: from, To: to}, {CustomerID: "c", From: from, To: to}}, more...)
	}
	for _, f := range filters(remit.ExportFilter{CustomerID: "c"}, remit.ExportFilter{BillingAccountID: "b"}, remit.ExportFilter{SubscriptionID: "s"},
		remit.ExportFilter{Status: "paid"}, remit.ExportFilter{Number: "INV-000001"}) {
		must(q.ExportInvoices(ctx, m, f, func(*remit.InvoiceRecord) error { return nil }))
	}
	for _, f := range filters(remit.ExportFilter{InvoiceID: "i"}, remit.ExportFilter{CustomerID: "c"}, remit.ExportFilter{BillingAccountID: "b"},
		remit.ExportFilter{SubscriptionID: "s"}, remit.ExportFilter{Status: "paid"}) {
		must(q.ExportInvoiceLines(ctx, m, f, func(*remit.InvoiceLineRecord) error { return nil }))
	}
	for _, f := range filters(remit.ExportFilter{InvoiceID: "i"}, remit.ExportFilter{CustomerID: "c"}, remit.ExportFilter{Status: "failed"}) {
		must(q.ExportPayments(ctx, m, f, func(*remit.PaymentRecord) error { return nil }))
	}
	for _, f := range []remit.ExportFilter{{}, {From: from, To: to}, {PaymentID: "p"}, {InvoiceID: "i"}, {CreditNoteID: "cn"}, {Status: "pending"}} {
		must(q.ExportRefunds(ctx, m, f, func(*remit.RefundRecord) error { return nil }))
	}
	for _, f := range filters(remit.ExportFilter{InvoiceID: "i"}, remit.ExportFilter{CustomerID: "c"}) {
		must(q.ExportCreditNotes(ctx, m, f, func(*remit.CreditNoteRecord) error { return nil }))
	}
	for _, f := range filters(remit.ExportFilter{CustomerID: "c"}, remit.ExportFilter{Type: "grant"}, remit.ExportFilter{Currency: "USD"}) {
		must(q.ExportBalanceEntries(ctx, m, f, func(*remit.BalanceEntryRecord) error { return nil }))
	}
	for _, f := range filters(remit.ExportFilter{CustomerID: "c"}, remit.ExportFilter{MeterID: "api"}, remit.ExportFilter{CustomerID: "c", MeterID: "api"}) {
		must(q.ExportUsageHours(ctx, m, f, func(*remit.UsageHour) error { return nil }))
	}
}
