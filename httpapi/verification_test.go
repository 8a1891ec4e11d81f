package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// verificationWorkload gives the sandbox merchant account a bit of everything the money checks
// read: a card invoice paid at finalization and partly refunded by a credit note, an invoice paid
// out of band, a prepaid grant applied to an invoice, a taxed invoice with a credit note reversing
// part of its tax, and settlements closed and paid out by advancing the clock.
func verificationWorkload(t *testing.T, e *testkit.Env) {
	t.Helper()
	k := newPayKit(t, e)
	k.account("card", "charge_automatically")
	k.attach("card", "pm_card_visa")
	paid := k.invoice("card", 5000)
	if paid["status"] != "paid" {
		t.Fatalf("card invoice: %v", paid["status"])
	}
	line := paid["lines"].([]any)[0].(map[string]any)["invoiceLineId"].(string)
	e.Must(200, "POST", "/v1/credit-notes", creditNote(paid["invoiceId"].(string), cnLine(line, "refund", 1200)))

	k.account("oob", "send_invoice")
	open := k.invoice("oob", 3000)
	e.Must(200, "POST", "/v1/invoices/"+open["invoiceId"].(string)+"/pay", map[string]any{"outOfBand": true})

	k.account("prepaid", "send_invoice")
	k.grant("prepaid", map[string]any{"currency": "USD", "amount": 700})
	k.invoice("prepaid", 2000)

	taxed, lines := openBCInvoice(t, e)
	cn := e.Must(200, "POST", "/v1/credit-notes", creditNote(taxed, cnLine(lines[0], "credit", 1000))).Data()
	// Voiding it reverses the tax the credit note left, not the whole sale again.
	e.Must(200, "POST", "/v1/invoices/"+taxed+"/void", nil)
	var txns struct{ Items []remit.TaxTransaction }
	e.Must(200, "GET", "/v1/tax-transactions?sourceDocumentId="+taxed, nil).Decode(t, &txns)
	var reversed []int64
	for _, x := range txns.Items {
		if x.Type == remit.TaxReversal {
			reversed = append(reversed, x.TotalTax)
		}
	}
	if len(reversed) != 1 || reversed[0] != -(2083-num(cn["taxTotal"])) {
		t.Fatalf("void after a credit note reversing %v of 2083 tax reversed %v", cn["taxTotal"], reversed)
	}
	e.AdvanceClock(3 * 86400)
}

func verify(t *testing.T, e *testkit.Env, opts ...testkit.Opt) remit.Verification {
	t.Helper()
	var v remit.Verification
	e.Must(200, "GET", "/v1/verification", nil, opts...).Decode(t, &v)
	return v
}

// wantClean fails with every violation unless the verification passed.
func wantClean(t *testing.T, v remit.Verification) {
	t.Helper()
	if len(v.Checks) != len(remit.VerificationChecks) {
		t.Errorf("%d checks, want %d", len(v.Checks), len(remit.VerificationChecks))
	}
	for i, c := range v.Checks {
		if c.Name != remit.VerificationChecks[i] {
			t.Errorf("check %d is %s, want %s", i, c.Name, remit.VerificationChecks[i])
		}
		for _, x := range c.Violations {
			t.Errorf("%s: %s %s: %s", c.Name, x.Resource, x.ID, x.Detail)
		}
	}
	if !v.OK {
		t.Errorf("verification not ok")
	}
}

// wantViolation fails unless check reports a violation of resource id (detail containing part).
func wantViolation(t *testing.T, v remit.Verification, check, resource, id, part string) {
	t.Helper()
	if v.OK {
		t.Errorf("%s: verification ok after tampering with %s %s", check, resource, id)
	}
	for _, c := range v.Checks {
		if c.Name != check {
			continue
		}
		for _, x := range c.Violations {
			if x.Resource == resource && x.ID == id && strings.Contains(x.Detail, part) {
				return
			}
		}
		t.Errorf("%s reports %v, want %s %s (%q)", check, c.Violations, resource, id, part)
		return
	}
	t.Errorf("no check %s", check)
}

// tamper changes the store behind the engine's back, as an intruder with database access would.
func tamper(t *testing.T, e *testkit.Env, query string, args ...any) {
	t.Helper()
	for _, account := range []string{e.Tenant.Sandbox, e.Tenant.Production} { // PostgreSQL chains after commit, in the background
		if err := e.App.DB.ChainBeforeRead(context.Background(), account); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.App.DB.SQL().ExecContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("tamper %q: %v", query, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tamper %q changed %d rows", query, n)
	}
}

func listEvents(t *testing.T, e *testkit.Env, opts ...testkit.Opt) []remit.Event {
	t.Helper()
	var out []remit.Event
	cursor := ""
	for {
		var page struct {
			Items      []remit.Event
			NextCursor *string
		}
		path := "/v1/events?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		e.Must(200, "GET", path, nil, opts...).Decode(t, &page)
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		cursor = *page.NextCursor
	}
}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Every event of a merchant account has its place in the account's chain: sequences 1..n without a
// gap, each hash the SHA-256 of its predecessor's hash and its canonical JSON; a workload of every
// kind of money movement passes every check; the other merchant account's chain is its own.
func TestVerificationClean(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		verificationWorkload(t, e)
		wantClean(t, verify(t, e))

		events := listEvents(t, e)
		if len(events) < 20 {
			t.Fatalf("only %d events", len(events))
		}
		bySeq := map[int64]remit.Event{}
		for _, ev := range events {
			if !hexHash.MatchString(ev.Hash) {
				t.Fatalf("event %s hash %q", ev.ID, ev.Hash)
			}
			bySeq[ev.Sequence] = ev
		}
		prev := ""
		for seq := int64(1); seq <= int64(len(events)); seq++ {
			ev, ok := bySeq[seq]
			if !ok {
				t.Fatalf("no event with sequence %d of %d", seq, len(events))
			}
			if detail := remit.ChainLink(seq, prev, ev); detail != "" {
				t.Fatalf("event %d (%s) %s", seq, ev.ID, detail)
			}
			prev = ev.Hash
		}
		// The production account has a chain of its own, starting at 1.
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "prod-1", "name": "Prod"}, testkit.Production())
		prod := listEvents(t, e, testkit.Production())
		if len(prod) == 0 || prod[len(prod)-1].Sequence != 1 {
			t.Fatalf("production chain: %+v", prod)
		}
		wantClean(t, verify(t, e, testkit.Production()))
	})
}

// Changing a stored event's payload, type or time, or removing one, is reported naming the event;
// the chain is read on from the stored hashes, so one changed event is one violation.
func TestVerificationEventTampering(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		for i := range 5 {
			k.account(fmt.Sprintf("c%d", i), "send_invoice")
		}
		events := listEvents(t, e) // newest first
		seqOf := func(i int) remit.Event { return events[len(events)-i] }
		one, two, three := seqOf(2), seqOf(4), seqOf(6)

		tamper(t, e, `UPDATE events SET data = REPLACE(data, 'Customer c', 'Customer X') WHERE id = $1`, one.ID)
		tamper(t, e, `UPDATE events SET type = 'customer.updated' WHERE id = $1`, two.ID)
		tamper(t, e, `DELETE FROM events WHERE id = $1`, three.ID)
		v := verify(t, e)
		wantViolation(t, v, remit.CheckEventChain, "event", one.ID, "does not match")
		wantViolation(t, v, remit.CheckEventChain, "event", two.ID, "does not match")
		next := seqOf(7)
		wantViolation(t, v, remit.CheckEventChain, "event", next.ID, "missing or was reordered")
		if c := v.Checks[0]; c.ViolationCount != 3 {
			t.Errorf("event_chain: %d violations, want 3: %+v", c.ViolationCount, c.Violations)
		}
		// An event pushed out of the chain (its sequence removed) leaves a gap, named at the event
		// after it.
		tamper(t, e, `UPDATE events SET sequence = NULL WHERE id = $1`, seqOf(9).ID)
		wantViolation(t, verify(t, e), remit.CheckEventChain, "event", seqOf(10).ID, "missing or was reordered")
	})
}

// Verification reads one snapshot: run while the API takes writes of every kind, it never reports
// a violation that is not there (a payment seen without its invoice's new amount paid, a number
// counted before its document).
func TestVerificationWhileWriting(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		const writers, rounds = 4, 6
		for w := range writers {
			k.account(fmt.Sprintf("w%d", w), "charge_automatically")
			k.attach(fmt.Sprintf("w%d", w), "pm_card_visa")
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("w%d", w)
				for range rounds {
					inv := e.Do("POST", "/v1/invoices", map[string]any{"customerId": id, "billingAccountId": "ba-" + id, "currency": "USD",
						"lines": []any{map[string]any{"priceId": "item", "unitAmount": 1500}}}).Data()
					e.Do("POST", "/v1/invoices/"+inv["invoiceId"].(string)+"/finalize", map[string]any{})
					e.Do("POST", "/v1/customers/"+id+"/balance/grant", map[string]any{"currency": "USD", "amount": 300})
				}
			}()
		}
		go func() { wg.Wait(); close(done) }()
		runs := 0
		for waiting := true; waiting; runs++ {
			select {
			case <-done:
				waiting = false
			default:
			}
			wantClean(t, verify(t, e))
		}
		if runs < 2 {
			t.Logf("only %d verifications ran beside the writers", runs)
		}
	})
}

// The periodic round of `remit serve` (VerifyRound, hourly) exports the violations it found to
// Prometheus and records verification.failed in the account that has them; a clean round records
// nothing. On PostgreSQL a round another process is running is skipped, not run twice.
func TestVerificationRound(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
		}
		gauge := func() string {
			t.Helper()
			_, body := get(t, e, "/metrics")
			for _, l := range strings.Split(string(body), "\n") {
				if strings.HasPrefix(l, `remit_verify_violations{check="event_chain"}`) {
					return strings.Fields(l)[1]
				}
			}
			t.Fatalf("no remit_verify_violations for event_chain in /metrics")
			return ""
		}
		failures := func() []remit.Event {
			var page struct{ Items []remit.Event }
			e.Must(200, "GET", "/v1/events?type=verification.failed", nil).Decode(t, &page)
			return page.Items
		}
		if err := e.App.Verification.VerifyRound(ctx); err != nil {
			t.Fatal(err)
		}
		if g := gauge(); g != "0" || len(failures()) != 0 {
			t.Fatalf("clean round: gauge %s, %d verification.failed", g, len(failures()))
		}
		evs := listEvents(t, e)
		tamper(t, e, `UPDATE events SET data = REPLACE(data, 'Customer a', 'Customer Z') WHERE id = $1`, evs[len(evs)-1].ID)

		if e.Store == testkit.Postgres {
			// Another process's round holds the lock: this one is skipped.
			held := make(chan struct{})
			release := make(chan struct{})
			ended := make(chan struct{}) // the holder's transaction is over: the lock is free
			go func() {
				defer close(ended)
				_ = e.App.DB.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
					if ok, err := q.VerifyLock(ctx); !ok || err != nil {
						t.Errorf("lock: %v %v", ok, err)
					}
					close(held)
					<-release
					return nil
				})
			}()
			<-held
			if err := e.App.Verification.VerifyRound(ctx); err != nil {
				t.Fatal(err)
			}
			close(release)
			<-ended
			if g := gauge(); g != "0" || len(failures()) != 0 {
				t.Fatalf("a round ran beside another: gauge %s", g)
			}
		}
		if err := e.App.Verification.VerifyRound(ctx); err != nil {
			t.Fatal(err)
		}
		if g := gauge(); g != "1" {
			t.Errorf("gauge after tampering: %s", g)
		}
		fs := failures()
		if len(fs) != 1 {
			t.Fatalf("%d verification.failed events", len(fs))
		}
		var data struct{ Object remit.Verification }
		if err := json.Unmarshal(fs[0].Data, &data); err != nil || data.Object.OK || data.Object.Checks[0].Violations[0].ID != evs[len(evs)-1].ID {
			t.Errorf("verification.failed data: %v %s", err, fs[0].Data)
		}
	})
}

// Tampering with a stored amount or status of any money record is reported, naming the record;
// each change is undone after it was seen, and the store verifies clean again (verification
// itself changed nothing).
func TestVerificationMoneyTampering(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		verificationWorkload(t, e)
		wantClean(t, verify(t, e))
		ma := e.Tenant.Sandbox
		id := func(query string) string {
			t.Helper()
			var v string
			if err := e.App.DB.SQL().QueryRow(query, ma).Scan(&v); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			return v
		}
		cardInvoice := id(`SELECT id FROM invoices WHERE merchant_account_id = $1 AND customer_id = 'card'`)
		oobInvoice := id(`SELECT id FROM invoices WHERE merchant_account_id = $1 AND customer_id = 'oob'`)
		cardPayment := id(`SELECT id FROM payments WHERE merchant_account_id = $1 AND customer_id = 'card' AND status = 'succeeded'`)
		receipt := id(`SELECT id FROM payment_receipts WHERE merchant_account_id = $1 AND customer_id = 'card'`)
		lot := id(`SELECT id FROM balance_entries WHERE merchant_account_id = $1 AND customer_id = 'prepaid' AND type = 'grant'`)
		note := id(`SELECT id FROM credit_notes WHERE merchant_account_id = $1 AND customer_id = 'card'`)
		settlement := id(`SELECT id FROM settlements WHERE merchant_account_id = $1 AND payment_count > 0`)
		reversal := id(`SELECT id FROM tax_transactions WHERE merchant_account_id = $1 AND type = 'reversal'`)
		for _, tc := range []struct {
			name, table, column, key string
			value                    any
			check, resource, id      string
		}{
			{"an invoice's amount paid", "invoices", "amount_paid", cardInvoice, 4000, remit.CheckInvoicePayments, "invoice", cardInvoice},
			{"an invoice's status", "invoices", "status", oobInvoice, "open", remit.CheckInvoicePayments, "invoice", oobInvoice},
			{"an invoice's number", "invoices", "number", oobInvoice, "INV-000099", remit.CheckDocumentNumbers, "invoice", oobInvoice},
			{"a payment's status", "payments", "status", cardPayment, "failed", remit.CheckInvoicePayments, "invoice", cardInvoice},
			{"a payment's amount", "payments", "amount", cardPayment, 9000, remit.CheckReceipts, "payment", cardPayment},
			{"a receipt's amount", "payment_receipts", "amount", receipt, 4999, remit.CheckReceipts, "payment", cardPayment},
			{"a lot's remaining", "balance_entries", "remaining", lot, 650, remit.CheckBalances, "balance_entry", lot},
			{"a credit note's total", "credit_notes", "total", note, 1300, remit.CheckCreditNotes, "credit_note", note},
			{"a settlement's gross", "settlements", "gross_amount", settlement, 1, remit.CheckSettlements, "settlement", settlement},
			{"a tax reversal's total", "tax_transactions", "total_tax", reversal, -1, remit.CheckTaxReversals, "tax_transaction", reversal},
			{"a processor charge's status", "sandbox_charges", "status", cardPayment, "failed", remit.CheckProcessorCharges, "payment", cardPayment},
			{"an invoice's lines as kept with it", "invoices", "lines_doc", cardInvoice, "[]", remit.CheckInvoiceLines, "invoice", cardInvoice},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// The row's condition with its parameters numbered from n.
				where := func(n int) (string, []any) {
					if tc.table == "sandbox_charges" {
						return fmt.Sprintf(` WHERE idempotency_ref = $%d`, n), []any{tc.key}
					}
					return fmt.Sprintf(` WHERE merchant_account_id = $%d AND id = $%d`, n, n+1), []any{ma, tc.key}
				}
				cond, args := where(1)
				var was any
				if err := e.App.DB.SQL().QueryRow(`SELECT `+tc.column+` FROM `+tc.table+cond, args...).Scan(&was); err != nil {
					t.Fatal(err)
				}
				cond, args = where(2)
				tamper(t, e, `UPDATE `+tc.table+` SET `+tc.column+` = $1`+cond, append([]any{tc.value}, args...)...)
				wantViolation(t, verify(t, e), tc.check, tc.resource, tc.id, "")
				tamper(t, e, `UPDATE `+tc.table+` SET `+tc.column+` = $1`+cond, append([]any{was}, args...)...)
			})
		}
		wantClean(t, verify(t, e))
	})
}

// An event that lost its link (on PostgreSQL: the chaining pass after its commit failed; made here
// by removing its sequence and hash) is not verified and not dispatched until it is chained again:
// by the webhook worker at its next pass, or by the next read of the account's events, at the end
// of the chain. Then it is listed and delivered with its place.
func TestEventChainedByTheWorker(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		rc := newReceiver(t, nil)
		createEndpoint(t, e, rc.URL, "invoice.paid")
		before := listEvents(t, e)
		id := emitEvents(t, e, "invoice.paid", 1)[0]
		tamper(t, e, `UPDATE events SET sequence = NULL, hash = NULL WHERE id = $1`, id)
		wantClean(t, verify(t, e))

		deliverUntil(t, e, "the delivery", func() bool { return len(rc.Hits()) == 1 })
		var ev remit.Event
		e.Must(200, "GET", "/v1/events/"+id, nil).Decode(t, &ev)
		want := int64(1)
		for _, b := range before {
			want = max(want, b.Sequence+1)
		}
		if ev.Sequence != want || ev.Hash == "" {
			t.Fatalf("chained later: sequence %d hash %q, want sequence %d", ev.Sequence, ev.Hash, want)
		}
		var body remit.Event
		if err := json.Unmarshal(rc.Hits()[0].Body, &body); err != nil || body.Sequence != ev.Sequence || body.Hash != ev.Hash {
			t.Fatalf("delivered %s (%v), want sequence %d hash %s", rc.Hits()[0].Body, err, ev.Sequence, ev.Hash)
		}
		wantClean(t, verify(t, e))
	})
}
