package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// docLines is a pair of lines with every field of a stored line set one way or the other: a meter
// or none, periods in another zone and finer than a microsecond (the columns keep microseconds),
// taxes nil (stored as []) or not, a tier breakdown nil, empty or not, usage quantity and seq.
func docLines() []remit.InvoiceLine {
	i64 := func(v int64) *int64 { return &v }
	meter := "api_calls"
	zone := time.FixedZone("UTC+2", 2*3600)
	start := time.Date(2026, 3, 1, 10, 0, 0, 123456789, zone)
	end := start.AddDate(0, 1, 0)
	return []remit.InvoiceLine{
		{InvoiceLineID: "il_1", LineType: "recurring", PriceID: "price_basic", PriceType: "fixed_recurring",
			Description: `Basic <plan> & "more"`, Quantity: 2, UnitAmount: 2000, Amount: 4000, PeriodStart: &start, PeriodEnd: &end,
			TierBreakdown: []remit.TierBreakdown{}},
		{InvoiceLineID: "il_2", LineType: "usage", PriceID: "price_api", PriceType: "usage_metered", MeterID: &meter,
			Description: "API calls", Quantity: 1500, UnitAmount: 3, UnitOverride: true, Amount: 4500, DiscountAmount: 100,
			TaxAmount: 350, Taxes: []remit.LineTax{{Jurisdiction: "US-CA", Rate: 0.0725, RatePPM: 72500, TaxableAmount: 4400, TaxAmount: 319}},
			TierBreakdown: []remit.TierBreakdown{{UpTo: i64(1000), Quantity: 1000, UnitAmount: 3, Amount: 3000},
				{Quantity: 500, UnitAmount: 3, Amount: 1500}},
			UsageQuantity: i64(1500), UsageSeq: i64(42)},
	}
}

// checkLinesDoc fails unless the invoice's lines_doc is kept and gives exactly the lines its
// invoice_lines rows give, and GetInvoice (which reads the doc) gives them too. It returns them.
func checkLinesDoc(t *testing.T, ctx context.Context, db *store.DB, after string) []remit.InvoiceLine {
	t.Helper()
	q := db.Read(ctx)
	fromDoc, fromTable, kept, err := q.InvoiceLinesBothWays(ctx, "ma_1", "inv_1")
	if err != nil {
		t.Fatal(err)
	}
	if !kept {
		t.Fatalf("after %s: lines_doc is not kept", after)
	}
	if !reflect.DeepEqual(fromDoc, fromTable) {
		t.Fatalf("after %s: lines_doc gives\n  %#v\nthe table gives\n  %#v", after, fromDoc, fromTable)
	}
	inv, err := q.GetInvoice(ctx, "ma_1", "inv_1", store.Unlocked)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inv.Lines, fromTable) {
		t.Fatalf("after %s: GetInvoice gives\n  %#v\nthe table gives\n  %#v", after, inv.Lines, fromTable)
	}
	return fromTable
}

// Every store function that writes invoice_lines writes the invoice's lines_doc in the same
// transaction, and the doc reads back as exactly the lines the table gives: after an insert, a
// header-only update, a replacement of the lines, a change of one line's figures and a usage
// correction. An invoice whose doc is not kept reads its lines from the table, and
// FillInvoiceLinesDocs keeps it again.
func TestInvoiceLinesDoc(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		inv := remit.Invoice{MerchantAccountID: "ma_1", InvoiceID: "inv_1", CustomerID: "cus_1", BillingAccountID: "ba_1",
			Currency: "USD", Status: remit.InvoiceDraft, CollectionMethod: remit.SendInvoice, CreatedAt: now, UpdatedAt: now,
			Lines: docLines()}
		write := func(what string, fn func(tx *store.Tx) error) []remit.InvoiceLine {
			t.Helper()
			if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error { return fn(tx) }); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return checkLinesDoc(t, ctx, db, what)
		}

		lines := write("insert", func(tx *store.Tx) error { return tx.InsertInvoice(ctx, inv) })
		if len(lines) != 2 || lines[1].Taxes[0].TaxAmount != 319 || *lines[1].UsageSeq != 42 || lines[0].Taxes == nil {
			t.Fatalf("inserted lines: %#v", lines)
		}

		inv.Status = remit.InvoiceOpen
		write("header update", func(tx *store.Tx) error { return tx.UpdateInvoice(ctx, inv, false) })

		inv.Lines = docLines()[1:]
		inv.Lines[0].Description = "API calls, revised"
		if lines = write("lines update", func(tx *store.Tx) error { return tx.UpdateInvoice(ctx, inv, true) }); len(lines) != 1 || lines[0].Description != "API calls, revised" {
			t.Fatalf("replaced lines: %#v", lines)
		}

		l := lines[0]
		l.PrepaidApplied, l.CreditedAmount, l.CreditedTax, l.Taxes[0].Reversed = 500, 1000, 70, 70
		if lines = write("figures update", func(tx *store.Tx) error { return tx.UpdateInvoiceLineFigures(ctx, "ma_1", "inv_1", l) }); lines[0].CreditedAmount != 1000 || lines[0].Taxes[0].Reversed != 70 {
			t.Fatalf("line after its figures changed: %#v", lines[0])
		}

		cn := "cn_1"
		c := remit.UsageCorrection{EventID: "ev_1", InvoiceID: "inv_1", InvoiceLineID: l.InvoiceLineID, UsageBefore: 1500, UsageAfter: 1400, Amount: 300, CreditNoteID: &cn}
		if lines = write("usage correction", func(tx *store.Tx) error { return tx.AddLineUsageCorrection(ctx, "ma_1", "inv_1", lines[0], c) }); len(lines[0].UsageCorrections) != 1 {
			t.Fatalf("line after a usage correction: %#v", lines[0])
		}

		inv.Lines = nil
		if lines = write("lines removed", func(tx *store.Tx) error { return tx.UpdateInvoice(ctx, inv, true) }); lines != nil {
			t.Fatalf("no lines: %#v", lines)
		}

		// A doc not kept (a row written around the store): the table answers, and the fill keeps it.
		inv.Lines = docLines()
		write("lines restored", func(tx *store.Tx) error { return tx.UpdateInvoice(ctx, inv, true) })
		if _, err := db.SQL().ExecContext(ctx, `UPDATE invoices SET lines_doc = NULL`); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read(ctx).GetInvoice(ctx, "ma_1", "inv_1", store.Unlocked)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Lines) != 2 || got.Lines[1].InvoiceLineID != "il_2" {
			t.Fatalf("lines without a doc: %#v", got.Lines)
		}
		write("fill", func(tx *store.Tx) error {
			n, err := tx.FillInvoiceLinesDocs(ctx)
			if err == nil && n != 1 {
				t.Errorf("filled %d docs, want 1", n)
			}
			return err
		})
		if !reflect.DeepEqual(got.Lines, checkLinesDoc(t, ctx, db, "fill")) {
			t.Fatal("the fallback and the doc differ")
		}
	})
}

// Migration 28 keeps the lines_doc of the invoices stored before it: with lines, and without.
func TestLinesDocMigration(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			ctx := context.Background()
			db := storeBefore(t, s, 27)
			for _, id := range []string{"inv_1", "inv_2"} {
				if _, err := db.SQL().ExecContext(ctx, `INSERT INTO invoices (merchant_account_id, id, customer_id, billing_account_id,
					currency, status, collection_method, created_at, updated_at) VALUES ('ma_1', $1, 'cus_1', 'ba_1', 'USD', 'open',
					'send_invoice', 1, 1)`, id); err != nil {
					t.Fatal(err)
				}
			}
			for i, id := range []string{"il_b", "il_a"} { // position, not ID, orders them
				if _, err := db.SQL().ExecContext(ctx, `INSERT INTO invoice_lines (merchant_account_id, invoice_id, id, position, line_type,
					price_id, price_type, meter_id, description, quantity, unit_amount, amount, taxes, period_start, tier_breakdown, usage_seq)
					VALUES ('ma_1', 'inv_1', $1, $2, 'usage', 'price_api', 'usage_metered', 'api_calls', 'API', 3, 1, 3,
					'[{"jurisdiction":"US-CA","rate":0.0725,"ratePpm":72500,"taxableAmount":3,"taxAmount":0,"reversedAmount":0}]',
					1772359200123456, '[]', 7)`, id, i); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			lines := checkLinesDoc(t, ctx, db, "migration")
			if len(lines) != 2 || lines[0].InvoiceLineID != "il_b" || lines[0].TierBreakdown == nil || *lines[0].UsageSeq != 7 {
				t.Fatalf("migrated lines: %#v", lines)
			}
			fromDoc, _, kept, err := db.Read(ctx).InvoiceLinesBothWays(ctx, "ma_1", "inv_2")
			if err != nil || !kept || fromDoc != nil {
				t.Fatalf("an invoice without lines: %v, kept %v, %#v", err, kept, fromDoc)
			}
		})
	}
}
