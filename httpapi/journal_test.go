package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// booksRun is a sandbox-clock run of several months with every money movement: a subscription
// paid by card (fees, settlements, payouts), renewals, a credit note refunding part of it and one
// crediting the balance, a free grant spent, a send_invoice invoice left open, one voided, one
// written off by a one-time write-off (marked uncollectible through dunning is the same rule).
func booksRun(t *testing.T, e *testkit.Env) {
	t.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "plan", "name": "Plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 3100})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "seat", "productId": "seat", "name": "Seat", "priceType": "fixed_one_time",
		"currency": "USD", "unitAmount": 500})
	for id, method := range map[string]string{"card": "charge_automatically", "terms": "send_invoice"} {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD",
			"collectionMethod": method})
	}
	defaultCard(t, e, "card", "ba-card")
	e.Must(201, "POST", "/v1/customers/card/balance/grant", map[string]any{"currency": "USD", "amount": 500})
	q := e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "card", line("plan"))).Data()
	e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{})
	// A second subscriber, of three seats, who changes and then cancels.
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "ch", "name": "Changer"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-ch", "customerId": "ch", "currency": "USD"})
	defaultCard(t, e, "ch", "ba-ch")
	q = e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "ch", line("plan", "quantity", 3))).Data()
	changer := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()["subscriptionId"].(string)
	e.AdvanceClock(3 * 86400) // the first invoice finalized and paid, its settlement closed
	paid := invoicesOf(t, e, "card", "paid")
	if len(paid) == 0 {
		t.Fatal("no paid subscription invoice")
	}
	first := paid[len(paid)-1]
	lineID := first["lines"].([]any)[0].(map[string]any)["invoiceLineId"].(string)
	e.AdvanceClock(7 * 86400)
	e.Must(200, "POST", "/v1/credit-notes", map[string]any{"invoiceId": first["invoiceId"], "reason": "order_change",
		"lines": []any{map[string]any{"invoiceLineId": lineID, "bucket": "refund", "amount": 1100, "description": "Refund"},
			map[string]any{"invoiceLineId": lineID, "bucket": "credit", "amount": 300, "description": "Goodwill"}}})
	e.Must(200, "POST", "/v1/subscriptions/"+changer+"/change", map[string]any{"items": []any{map[string]any{"priceId": "plan", "quantity": 1}}})
	// Usage billed, then a void of part of it: a usage_correction credit note.
	mk := newMeteringKit(t, e, "meter")
	e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "api", "aggregation": "sum"})
	mk.price(map[string]any{"priceId": "calls", "priceType": "usage_metered", "meterId": "api", "unitAmount": 3})
	now := clockNow(t, e)
	from, to := now.Add(-3*time.Hour), now.Add(-time.Hour)
	mk.usage("u1", "meter", "api", 100, from.Add(10*time.Minute), nil)
	mk.usage("u2", "meter", "api", 40, from.Add(20*time.Minute), nil)
	usageInvoice := mk.draft("meter", from, to, map[string]any{"priceId": "calls"})["invoiceId"].(string)
	e.Must(200, "POST", "/v1/invoices/"+usageInvoice+"/finalize", map[string]any{})
	e.Must(200, "POST", "/v1/usage-events/u2/void", map[string]any{})
	invoice := func(qty int) string {
		id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "terms", "billingAccountId": "ba-terms", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "seat", "quantity": qty}}}).Data()["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
		return id
	}
	open := invoice(2)
	e.Must(200, "POST", "/v1/credit-notes", map[string]any{"invoiceId": open, "reason": "order_change",
		"lines": []any{map[string]any{"bucket": "offset", "amount": 200, "description": "Discount"}}})
	e.Must(200, "POST", "/v1/invoices/"+invoice(1)+"/void", map[string]any{})
	e.AdvanceClock(40 * 86400) // a jump: renewals, recognition catching up
	e.Must(200, "POST", "/v1/subscriptions/"+changer+"/cancel", map[string]any{"at": "now"})
	e.AdvanceClock(25 * 86400)
	e.Must(200, "POST", "/v1/credit-notes", map[string]any{"invoiceId": open, "reason": "order_change",
		"lines": []any{map[string]any{"bucket": "credit", "amount": 100, "description": "Goodwill"}}})
}

// invoicesOf lists a customer's invoices of a status (newest first).
func invoicesOf(t *testing.T, e *testkit.Env, customer, status string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range e.Must(200, "GET", "/v1/invoices?limit=100&customerId="+customer+"&status="+status, nil).Data()["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// journalEntries reads every journal entry, page by page.
func journalEntries(t *testing.T, e *testkit.Env, query string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		path := "/v1/ledger/entries?limit=100" + query
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		d := e.Must(200, "GET", path, nil).Data()
		for _, it := range d["items"].([]any) {
			out = append(out, it.(map[string]any))
		}
		if d["hasMore"] != true {
			return out
		}
		cursor = d["nextCursor"].(string)
	}
}

// ledgerBalances is each account's balance in USD (GET /v1/ledger/balances).
func ledgerBalances(t *testing.T, e *testkit.Env) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	var dr, cr int64
	for _, it := range e.Must(200, "GET", "/v1/ledger/balances", nil).Data()["balances"].([]any) {
		b := it.(map[string]any)
		if b["currency"] == "USD" {
			out[b["account"].(string)] = num(b["balance"])
			dr, cr = dr+num(b["debit"]), cr+num(b["credit"])
		}
	}
	if dr != cr {
		t.Errorf("trial balance: debits %d, credits %d", dr, cr)
	}
	return out
}

func TestLedgerAgreesWithTheMoneyState(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		booksRun(t, e)
		entries := journalEntries(t, e, "")
		kinds := map[string]int{}
		for _, je := range entries {
			var dr, cr int64
			for _, l := range je["lines"].([]any) {
				dr, cr = dr+num(l.(map[string]any)["debit"]), cr+num(l.(map[string]any)["credit"])
			}
			if dr != cr || dr == 0 {
				t.Errorf("entry %v (%v): debits %d, credits %d", je["entryId"], je["source"], dr, cr)
			}
			kinds[je["source"].(map[string]any)["type"].(string)]++
		}
		for _, k := range []string{"invoice.finalized", "customer_balance.applied", "payment.succeeded", "payout.created", "credit_note.created",
			"invoice.voided", "revenue.recognized"} {
			if kinds[k] == 0 {
				t.Errorf("no %s entry (entries by source: %v)", k, kinds)
			}
		}
		bal := ledgerBalances(t, e)
		var open int64
		for _, c := range []string{"card", "terms", "ch", "meter"} {
			for _, inv := range invoicesOf(t, e, c, "open") {
				open += num(inv["amountRemaining"])
			}
		}
		// The change's proration, the usage correction, the refund and the offset each issued a credit note.
		cns := e.Must(200, "GET", "/v1/credit-notes?limit=100", nil)
		if n := len(cns.Data()["items"].([]any)); n < 4 || !strings.Contains(string(cns.Body), `"reason":"usage_correction"`) {
			t.Errorf("%d credit notes in the run: %s", n, cns.Body)
		}
		if bal["accounts_receivable"] != open || open == 0 {
			t.Errorf("receivable %d, open invoices' remaining %d", bal["accounts_receivable"], open)
		}
		var credit int64
		for _, c := range []string{"card", "terms", "ch", "meter"} {
			for _, it := range e.Must(200, "GET", "/v1/customers/"+c+"/balance", nil).Data()["entries"].([]any) {
				be := it.(map[string]any)
				if be["type"] == "credit_note" || be["type"] == "top_up" {
					credit += num(be["remaining"])
				}
			}
		}
		if bal["customer_credit"] != credit || credit == 0 {
			t.Errorf("customer credit %d, paid prepaid balance %d", bal["customer_credit"], credit)
		}
		deferred, err := e.App.DB.Read(context.Background()).DeferredRevenueTotals(context.Background(), e.Tenant.Sandbox)
		if err != nil {
			t.Fatal(err)
		}
		if bal["deferred_revenue"] != deferred["USD"] {
			t.Errorf("deferred revenue %d, not yet recognized %d", bal["deferred_revenue"], deferred["USD"])
		}
		if bal["processor_fees"] <= 0 || bal["bank"] <= 0 || bal["refunds"] <= 0 || bal["discounts"] != 500 {
			t.Errorf("balances: %v", bal)
		}
		// One account's entries: each has a line on it.
		for _, je := range journalEntries(t, e, "&account=bank") {
			if !strings.Contains(string(mustJSON(t, je["lines"])), `"bank"`) {
				t.Errorf("entry %v has no bank line", je["entryId"])
			}
		}
		got := e.Must(200, "GET", "/v1/ledger/entries/"+entries[0]["entryId"].(string), nil).Data()
		if got["entryId"] != entries[0]["entryId"] || len(got["lines"].([]any)) != len(entries[0]["lines"].([]any)) {
			t.Errorf("get: %v", got)
		}
		e.Must(404, "GET", "/v1/ledger/entries/je_missing", nil)
		if r := e.Must(422, "GET", "/v1/ledger/entries?account=cash", nil); !strings.Contains(strings.Join(r.FieldErrors(), ","), "account") {
			t.Errorf("account=cash: %s", r.Body)
		}
		checkJournalExport(t, e, entries)
		wantClean(t, verify(t, e))
	})
}

// checkJournalExport checks journal-entries.csv column by column against the general-journal
// import format (Date, JournalNo, Account, Debit, Credit, Description, Reference): a row per line,
// the entry's lines under one JournalNo, decimal amounts on one side only.
func checkJournalExport(t *testing.T, e *testkit.Env, entries []map[string]any) {
	t.Helper()
	header, rows := export(t, e, "/v1/exports/journal-entries.csv")
	if want := []string{"Date", "JournalNo", "Account", "Debit", "Credit", "Description", "Reference"}; strings.Join(header, ",") != strings.Join(want, ",") {
		t.Fatalf("header %v, want %v", header, want)
	}
	byID := map[string]map[string]any{}
	lines := 0
	for _, je := range entries {
		byID[je["entryId"].(string)] = je
		lines += len(je["lines"].([]any))
	}
	if len(rows) != lines {
		t.Fatalf("%d rows, %d lines", len(rows), lines)
	}
	seen := map[string]int{}
	for _, r := range rows {
		je := byID[r["JournalNo"]]
		if je == nil {
			t.Fatalf("row of no entry: %v", r)
		}
		l := je["lines"].([]any)[seen[r["JournalNo"]]].(map[string]any)
		seen[r["JournalNo"]]++
		src := je["source"].(map[string]any)
		dec := func(v any) string {
			if num(v) == 0 {
				return ""
			}
			return strconv.FormatFloat(float64(num(v))/100, 'f', 2, 64)
		}
		want := map[string]string{"Date": je["postedAt"].(string)[:10], "Account": l["account"].(string), "Debit": dec(l["debit"]),
			"Credit": dec(l["credit"]), "Description": je["description"].(string) + " (USD)", "Reference": src["type"].(string) + " " + src["id"].(string)}
		for col, v := range want {
			if r[col] != v {
				t.Errorf("entry %s, column %s: %q, want %q", r["JournalNo"], col, r[col], v)
			}
		}
	}
}

// `remit verify` (GET /v1/verification runs the same checks) finds a journal changed by hand: a
// line's amount (the entry no longer balances) and a line moved to another account (each entry
// still balances, but the receivable no longer agrees with the open invoices).
func TestVerificationLedgerTampering(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		verificationWorkload(t, e)
		wantClean(t, verify(t, e))
		ma := e.Tenant.Sandbox
		var entry string
		var line int
		if err := e.App.DB.SQL().QueryRow(`SELECT entry_id, line_no FROM journal_lines WHERE merchant_account_id = $1 AND account = 'accounts_receivable'
			AND debit > 0 ORDER BY entry_id LIMIT 1`, ma).Scan(&entry, &line); err != nil {
			t.Fatal(err)
		}
		cond := ` WHERE merchant_account_id = $1 AND entry_id = $2 AND line_no = $3`
		tamper(t, e, `UPDATE journal_lines SET debit = debit + 1`+cond, ma, entry, line)
		v := verify(t, e)
		wantViolation(t, v, remit.CheckGeneralLedger, "journal_entry", entry, "debits and credits differ")
		wantViolation(t, v, remit.CheckGeneralLedger, "merchant_account", ma, "accounts_receivable")
		tamper(t, e, `UPDATE journal_lines SET debit = debit - 1`+cond, ma, entry, line)
		wantClean(t, verify(t, e))
		tamper(t, e, `UPDATE journal_lines SET account = 'bank'`+cond, ma, entry, line)
		wantViolation(t, verify(t, e), remit.CheckGeneralLedger, "merchant_account", ma, "accounts_receivable")
		tamper(t, e, `UPDATE journal_lines SET account = 'accounts_receivable'`+cond, ma, entry, line)
		tamper(t, e, `INSERT INTO revenue_schedules (merchant_account_id, invoice_line_id, invoice_id, price_id, currency, period_start, period_end,
			amount, deferred, recognized_through) VALUES ($1, 'il_forged', 'inv_forged', 'plan', 'USD', 0, 86400000000, 5, 5, 0)`, ma)
		wantViolation(t, verify(t, e), remit.CheckGeneralLedger, "merchant_account", ma, "deferred_revenue")
	})
}

// The daily recognition job catches up after a 40-day clock jump, one entry a day, and is
// idempotent: running recognition again, or advancing within the day, posts nothing more; the
// journal's deferred revenue is what the schedules still defer and its revenue what they
// recognized.
func TestRevenueRecognitionCatchesUp(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "plan", "name": "Plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 3100})
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "sub", "name": "Subscriber"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-sub", "customerId": "sub", "currency": "USD",
			"collectionMethod": "send_invoice"})
		q := e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "sub", line("plan"))).Data()
		e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{})
		e.AdvanceClock(2 * 3600) // the first invoice finalizes: all of it deferred
		if bal := ledgerBalances(t, e); bal["deferred_revenue"] == 0 {
			t.Fatalf("nothing deferred after the first invoice: %v", bal)
		}
		e.AdvanceClock(40 * 86400)
		days := map[string]bool{}
		for _, je := range journalEntries(t, e, "&account=deferred_revenue") {
			if je["source"].(map[string]any)["type"] != "revenue.recognized" {
				continue
			}
			day := je["postedAt"].(string)[:10]
			if days[day] {
				t.Errorf("day %s recognized twice", day)
			}
			days[day] = true
		}
		if len(days) < 39 {
			t.Errorf("%d days recognized after a 40-day jump", len(days))
		}
		ctx := context.Background()
		read := e.App.DB.Read(ctx)
		wantBooks := func() int {
			t.Helper()
			bal := ledgerBalances(t, e)
			deferred, err := read.DeferredRevenueTotals(ctx, e.Tenant.Sandbox)
			if err != nil {
				t.Fatal(err)
			}
			if bal["deferred_revenue"] != deferred["USD"] {
				t.Errorf("deferred revenue %d, schedules defer %d", bal["deferred_revenue"], deferred["USD"])
			}
			var billed int64
			for _, st := range []string{"open", "paid"} {
				for _, inv := range invoicesOf(t, e, "sub", st) {
					billed += num(inv["subtotal"])
				}
			}
			if bal["revenue"]+bal["deferred_revenue"] != billed || bal["revenue"] < 3100 {
				t.Errorf("revenue %d + deferred %d, billed %d", bal["revenue"], bal["deferred_revenue"], billed)
			}
			return len(journalEntries(t, e, ""))
		}
		wantBooks()
		m, err := read.GetMerchantAccount(ctx, e.Tenant.Sandbox, store.Unlocked)
		if err != nil {
			t.Fatal(err)
		}
		// Recognition up to now (past the midnight job: the day since then), then again twice.
		now := ts(t, e.Must(200, "GET", "/v1/test-helpers/clock", nil).Data()["now"])
		n := 0
		for i := range 3 {
			if err := e.App.Journal.RecognizeRevenue(ctx, m, now); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				n = wantBooks()
			}
		}
		e.AdvanceClock(60)
		if again := wantBooks(); again != n {
			t.Errorf("%d entries, then %d after recognizing again", n, again)
		}
		checkRevenueReports(t, e, now)
		wantClean(t, verify(t, e))
	})
}

// A store from before the general ledger (its journal emptied here) fails the general_ledger
// check; the backfill replays its history in order, after which `remit verify` passes, the
// accounts are what the live postings made them, and a second backfill posts nothing.
func TestLedgerBackfill(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		booksRun(t, e)
		live := ledgerBalances(t, e)
		for _, table := range []string{"journal_lines", "journal_entries", "revenue_schedules"} {
			if _, err := e.App.DB.SQL().ExecContext(context.Background(), `DELETE FROM `+table); err != nil {
				t.Fatal(err)
			}
		}
		wantViolation(t, verify(t, e), remit.CheckGeneralLedger, "merchant_account", e.Tenant.Sandbox, "accounts_receivable")
		backfill := func() (events, skipped int) {
			t.Helper()
			start := time.Now()
			err := e.App.Journal.Backfill(context.Background(), "", func(r app.BackfillResult) error {
				events, skipped = events+r.Events, skipped+r.Skipped
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("backfill: %d events replayed, %d skipped, in %s", events, skipped, time.Since(start))
			return events, skipped
		}
		if n, _ := backfill(); n == 0 {
			t.Fatal("the backfill replayed nothing")
		}
		wantClean(t, verify(t, e))
		got := ledgerBalances(t, e)
		for _, a := range []string{"accounts_receivable", "customer_credit", "bank", "processor_clearing", "processor_fees", "tax_payable",
			"refunds", "discounts", "bad_debt"} {
			if got[a] != live[a] {
				t.Errorf("%s: %d after the backfill, %d posted live", a, got[a], live[a])
			}
		}
		if got["revenue"]+got["deferred_revenue"] != live["revenue"]+live["deferred_revenue"] {
			t.Errorf("revenue and deferred: %d + %d after the backfill, %d + %d live", got["revenue"], got["deferred_revenue"], live["revenue"], live["deferred_revenue"])
		}
		if n, skipped := backfill(); n != 0 || skipped == 0 {
			t.Errorf("a second backfill replayed %d (skipped %d)", n, skipped)
		}
		wantClean(t, verify(t, e))
	})
}

// checkRevenueReports reads the monthly revenue reports from three months before now to now: the
// months' recognized revenue of the plan adds up to the journal's revenue, each month opens with
// what the last closed with, and the last closes with the journal's deferred revenue.
func checkRevenueReports(t *testing.T, e *testkit.Env, now time.Time) {
	t.Helper()
	bal := ledgerBalances(t, e)
	var recognized, closing int64
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -3, 0)
	for m := first; !m.After(now); m = m.AddDate(0, 1, 0) {
		r := e.Must(200, "GET", "/v1/reports/revenue?month="+m.Format("2006-01"), nil).Data()
		var opening, closed int64
		for _, it := range r["lines"].([]any) {
			l := it.(map[string]any)
			if l["priceId"] != "plan" || l["currency"] != "USD" {
				t.Errorf("%s: a line %v", m.Format("2006-01"), l)
				continue
			}
			recognized += num(l["recognized"])
			opening, closed = num(l["deferredOpening"]), num(l["deferredClosing"])
		}
		if len(r["lines"].([]any)) > 0 && opening != closing {
			t.Errorf("%s opens with %d deferred, the month before closed with %d", m.Format("2006-01"), opening, closing)
		}
		if len(r["lines"].([]any)) > 0 {
			closing = closed
		}
	}
	if recognized != bal["revenue"] || closing != bal["deferred_revenue"] {
		t.Errorf("reports: recognized %d, closing %d; journal: revenue %d, deferred %d", recognized, closing, bal["revenue"], bal["deferred_revenue"])
	}
	if r := e.Do("GET", "/v1/reports/revenue?month=2026-13", nil); r.Status != 422 {
		t.Errorf("month 2026-13: %d %s", r.Status, r.Body)
	}
}
