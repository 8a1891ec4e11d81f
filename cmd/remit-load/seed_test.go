package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// TestSeed: a small seed on each store has the requested sizes and is consistent the way Remit's
// own writes are: per customer the ledger's entries add up to its lots' remaining, and no lot is
// negative; paid invoices have a receipt for what they charged; the numbering counters continue
// after the seeded numbers; card payments have the sandbox processor's charge; and every check of
// `remit verify` passes. It also keeps the harness's bulk INSERTs in step with the schema.
func TestSeed(t *testing.T) {
	for _, kind := range testkit.Stores() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			url := testkit.NewStoreURL(t, kind)
			sz := Sizes{Customers: 40, Invoices: 400, Entries: 4001}
			fx, err := seed(ctx, url, "http://127.0.0.1:1", sz, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if len(fx.Customers) != sz.Customers || len(fx.Invoices) != sz.Invoices || fx.Counts["balance_entries"] != sz.Entries {
				t.Fatalf("seeded %d customers, %d invoices, %d entries; want %+v", len(fx.Customers), len(fx.Invoices), fx.Counts["balance_entries"], sz)
			}
			if len(fx.Drafts) != sz.Invoices*3/10 {
				t.Fatalf("%d drafts, want 30%% of %d", len(fx.Drafts), sz.Invoices)
			}
			db, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			one := func(query string, args ...any) int64 {
				t.Helper()
				var n int64
				if err := db.SQL().QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", query, err)
				}
				return n
			}
			if n := one(`SELECT COUNT(*) FROM (SELECT customer_id FROM balance_entries GROUP BY customer_id
				HAVING SUM(amount) <> SUM(COALESCE(remaining, 0))) AS unbalanced`); n != 0 {
				t.Fatalf("%d customers' ledgers do not add up to their lots' remaining", n)
			}
			if n := one(`SELECT COUNT(*) FROM balance_entries WHERE remaining < 0`); n != 0 {
				t.Fatalf("%d negative lots", n)
			}
			if n := one(`SELECT COUNT(*) FROM invoices i LEFT JOIN payment_receipts r ON r.merchant_account_id = i.merchant_account_id
				AND r.invoice_id = i.id WHERE i.status = 'paid' AND (r.id IS NULL OR r.amount <> i.amount_paid)`); n != 0 {
				t.Fatalf("%d paid invoices without a matching receipt", n)
			}
			if got, want := one(`SELECT value FROM counters WHERE scope = $1 AND name = 'invoice'`, fx.MerchantID),
				one(`SELECT COUNT(*) FROM invoices WHERE number IS NOT NULL`); got != want {
				t.Fatalf("invoice counter %d, %d numbered invoices", got, want)
			}
			if n := one(`SELECT COUNT(*) FROM invoices WHERE status = 'paid' AND prepaid_applied = 0`); n != 0 {
				t.Fatalf("%d paid invoices took no prepaid balance", n)
			}
			// Its money movements' events: one invoice.finalized per numbered invoice, one
			// payment.succeeded per payment, all chained and dispatched already (the bootstrap's own
			// events are the engine's, left to the webhook worker).
			if got, want := one(`SELECT COUNT(*) FROM events WHERE type = 'invoice.finalized'`),
				one(`SELECT COUNT(*) FROM invoices WHERE number IS NOT NULL`); got != want {
				t.Fatalf("%d invoice.finalized events, %d finalized invoices", got, want)
			}
			if got, want := one(`SELECT COUNT(*) FROM events WHERE type = 'payment.succeeded'`), one(`SELECT COUNT(*) FROM payments`); got != want {
				t.Fatalf("%d payment.succeeded events, %d payments", got, want)
			}
			if n := one(`SELECT COUNT(*) FROM events WHERE type IN ('invoice.finalized', 'payment.succeeded',
				'customer_balance.applied', 'customer_balance.expired', 'payout.created') AND (dispatched_at IS NULL OR sequence IS NULL)`); n != 0 {
				t.Fatalf("%d events undispatched or unchained", n)
			}
			if n := one(`SELECT COUNT(*) FROM sandbox_charges`); n == 0 || n != one(`SELECT COUNT(*) FROM payments WHERE method = 'card'`) {
				t.Fatalf("%d sandbox charges for the card payments", n)
			}
			verifySeed(t, url, fx.MerchantID)
		})
	}
}

// verifySeed runs the ledger backfill, then every check of `remit verify` (general_ledger
// included) over the seeded merchant account, and fails with each violation.
func verifySeed(t *testing.T, url, merchantID string) {
	t.Helper()
	cfg := wire.Defaults()
	cfg.DatabaseURL = url
	r, err := wire.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The seed writes its money movements' events, so the backfill posts the journal from them
	// (docs/ledger.md "The backfill on the harness's full seed") and general_ledger then holds.
	var replayed int
	if err := r.App.Journal.Backfill(context.Background(), merchantID, func(b app.BackfillResult) error {
		replayed = b.Events
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if replayed == 0 {
		t.Fatal("the backfill replayed no event of the seed")
	}
	ran := 0
	err = r.App.Verification.VerifyAll(context.Background(), merchantID, func(v remit.Verification) error {
		ran++
		for _, c := range v.Checks {
			for _, x := range c.Violations {
				t.Errorf("%s: %s %s: %s", c.Name, x.Resource, x.ID, x.Detail)
			}
		}
		if !v.OK {
			t.Errorf("verification of the seed failed")
		}
		return nil
	})
	if err != nil || ran != 1 {
		t.Fatalf("verify: %v (%d accounts)", err, ran)
	}
}
