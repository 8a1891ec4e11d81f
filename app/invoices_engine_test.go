package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// Finalization through the engine (app/invoices.go: load → remit.PlanFinalization → persist →
// number and emit), each outcome on its own customer of one merchant account, so that the numbers
// the finalizations take are checked across all of them: INV-000001, INV-000002, … in order.
func TestEngineFinalize(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		finalizeZeroTotal(e)
		finalizeCoveredByPrepaidBalance(e)
		finalizeSendInvoice(e)
		finalizeCharged(e)
		finalizeDeclined(e)
		finalizeRequiresAction(e)
		finalizeWithoutWriteOwner(e)
		finalizeTwice(e)
		e.wantNumbers()
	})
}

// wantPaidAtOnce checks an invoice finalization paid in its own transaction: paid, numbered, no
// hosted page, no payment attempt, and its events finalized then paid.
func wantPaidAtOnce(e *engine, inv remit.Invoice, number string) {
	e.t.Helper()
	if inv.Status != remit.InvoicePaid || inv.Number == nil || *inv.Number != number || inv.AmountRemaining != 0 ||
		inv.PaidAt == nil || inv.FinalizedAt == nil || inv.PaymentURL != nil || inv.LatestPaymentID != nil {
		e.t.Fatalf("paid at once: %s", brief(inv))
	}
	if got := e.stored(inv.InvoiceID); got.Status != remit.InvoicePaid || deref(got.Number) != number {
		e.t.Fatalf("stored: %s", brief(got))
	}
	if ps := e.payments(inv.InvoiceID); len(ps) != 0 {
		e.t.Fatalf("a paid-at-once invoice has %s", briefPayments(ps))
	}
	e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoicePaid)
}

// A zero total is paid at once.
func finalizeZeroTotal(e *engine) {
	e.customer("zero", remit.ChargeAutomatically)
	inv := e.invoiceOf("zero", 0)
	wantPaidAtOnce(e, inv, "INV-000001")
}

// Prepaid balance covering the whole invoice pays it at once, even with a card to charge: the
// application is a ledger entry against the grant, naming the invoice.
func finalizeCoveredByPrepaidBalance(e *engine) {
	e.customer("prepaid", remit.ChargeAutomatically)
	e.attachCard("prepaid", "pm_card_visa")
	grant := e.grant("prepaid", 5000)
	inv := e.invoiceOf("prepaid", 3000)
	wantPaidAtOnce(e, inv, "INV-000002")
	if inv.Subtotal != 3000 || inv.PrepaidApplied != 3000 || inv.Total != 0 || inv.AmountPaid != 0 || inv.Lines[0].PrepaidApplied != 3000 {
		e.t.Fatalf("prepaid figures: %s", brief(inv))
	}
	entries, err := e.read().ListBalanceEntries(context.Background(), e.m.ID, "prepaid")
	if err != nil {
		e.t.Fatal(err)
	}
	var applied []remit.BalanceEntry
	for _, be := range entries {
		switch {
		case be.Type == remit.EntryApplication:
			applied = append(applied, be)
		case be.EntryID == grant.EntryID && (be.Remaining == nil || *be.Remaining != 2000):
			e.t.Fatalf("the grant after the application: %+v", be)
		}
	}
	if len(applied) != 1 || applied[0].Amount != -3000 || applied[0].InvoiceID == nil || *applied[0].InvoiceID != inv.InvoiceID ||
		applied[0].SourceEntryID == nil || *applied[0].SourceEntryID != grant.EntryID {
		e.t.Fatalf("applications: %+v", applied)
	}
	if charges, err := e.app.DB.SandboxCharges().List(context.Background()); err != nil || len(charges) != 0 {
		e.t.Fatalf("sandbox charges %+v, %v", charges, err)
	}
}

// send_invoice: open with its hosted payment page, and not charged, even with a card.
func finalizeSendInvoice(e *engine) {
	e.customer("sender", remit.SendInvoice)
	e.attachCard("sender", "pm_card_visa")
	inv := e.invoiceOf("sender", 4200)
	if inv.Status != remit.InvoiceOpen || *inv.Number != "INV-000003" || inv.AmountRemaining != 4200 || inv.LatestPaymentID != nil || inv.PaidAt != nil {
		e.t.Fatalf("send_invoice: %s", brief(inv))
	}
	prefix := publicURL + "/customer-portal/invoices/" + inv.InvoiceID + "/pay?token="
	if inv.PaymentURL == nil || !strings.HasPrefix(*inv.PaymentURL, prefix) {
		e.t.Fatalf("paymentUrl %v, want %s…", inv.PaymentURL, prefix)
	}
	tok, _, err := e.app.Access.ResolveHostedToken(context.Background(), strings.TrimPrefix(*inv.PaymentURL, prefix))
	if err != nil || tok.Kind != remit.HostedInvoice || tok.ResourceID != inv.InvoiceID {
		e.t.Fatalf("the paymentUrl's token: %+v, %v", tok, err)
	}
	if ps := e.payments(inv.InvoiceID); len(ps) != 0 {
		e.t.Fatalf("send_invoice was charged: %s", briefPayments(ps))
	}
	e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized)
}

// charge_automatically with pm_card_visa: the finalize answers the invoice paid by its one
// attempt, with one receipt and one charge at the processor.
func finalizeCharged(e *engine) {
	e.customer("visa", remit.ChargeAutomatically)
	e.attachCard("visa", "pm_card_visa")
	inv := e.invoiceOf("visa", 12345)
	if inv.Status != remit.InvoicePaid || *inv.Number != "INV-000004" || inv.AmountPaid != 12345 || inv.AmountRemaining != 0 ||
		inv.PaymentURL != nil || inv.AttemptCount != 1 {
		e.t.Fatalf("charged at finalize: %s", brief(inv))
	}
	p := e.onePayment(inv)
	if p.Status != remit.PaymentSucceeded || p.Source != remit.SourceFinalize || p.Attempt != 1 || p.Amount != 12345 ||
		p.FeeAmount != remit.SandboxFee(12345) || p.SettlementID == nil || p.ProcessorReference == nil || *p.ProcessorReference != "sbch_"+p.PaymentID {
		e.t.Fatalf("%s", briefPayment(p))
	}
	rc := e.receipts(inv.InvoiceID)
	if len(rc) != 1 || rc[0].PaymentID != p.PaymentID || rc[0].Amount != 12345 || rc[0].ReceiptNumber != "RCPT-000001" ||
		rc[0].InvoiceNumber == nil || *rc[0].InvoiceNumber != *inv.Number {
		e.t.Fatalf("receipts: %+v", rc)
	}
	e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoicePaid)
	e.wantEvents(p.PaymentID, remit.EventPaymentProcessing, remit.EventPaymentSucceeded)
	charges, err := e.app.DB.SandboxCharges().List(context.Background())
	if err != nil || len(charges) != 1 || charges[0].IdempotencyRef != p.PaymentID {
		e.t.Fatalf("sandbox charges %+v, %v", charges, err)
	}
}

// A declined card: the finalization still succeeds; the invoice stays open with its
// lastPaymentError, and dunning schedules the first retry (docs/dunning.md: the first failure plus
// the schedule's first step, 3 days by default).
func finalizeDeclined(e *engine) {
	e.customer("declined", remit.ChargeAutomatically)
	e.attachCard("declined", "pm_card_chargeDeclined")
	inv := e.invoiceOf("declined", 700)
	p := e.onePayment(inv)
	if p.Status != remit.PaymentFailed || p.FailureCode == nil || *p.FailureCode != "card_declined" {
		e.t.Fatalf("%s", briefPayment(p))
	}
	lpe := inv.LastPaymentError
	if inv.Status != remit.InvoiceOpen || *inv.Number != "INV-000005" || inv.AmountRemaining != 700 || inv.PaymentURL == nil ||
		lpe == nil || lpe.Code != "card_declined" || lpe.PaymentID != p.PaymentID || inv.AttemptCount != 1 {
		e.t.Fatalf("declined at finalize: %s", brief(inv))
	}
	got := e.stored(inv.InvoiceID)
	if got.DunningStatus != remit.DunningRetrying || got.DunningStartedAt == nil || got.NextPaymentAttemptAt == nil ||
		!got.NextPaymentAttemptAt.Equal(got.DunningStartedAt.Add(72*time.Hour)) {
		e.t.Fatalf("dunning: %s from %v, next %v", got.DunningStatus, got.DunningStartedAt, got.NextPaymentAttemptAt)
	}
	jobs, err := e.read().ListJobs(context.Background(), e.m.ID, store.JobFilter{Kind: remit.JobDunningRetry, ListPage: store.ListPage{Limit: 10}})
	if err != nil || len(jobs) != 1 || jobs[0].Status != remit.JobPending || !jobs[0].DueAt.Equal(*got.NextPaymentAttemptAt) ||
		!strings.Contains(string(jobs[0].Payload), inv.InvoiceID) {
		e.t.Fatalf("dunning jobs %+v, %v", jobs, err)
	}
	e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoicePaymentFailed)
	e.wantEvents(p.PaymentID, remit.EventPaymentProcessing, remit.EventPaymentFailed)
}

// The 3-D Secure test card: the attempt waits for the customer (requires_action, its next action
// on the portal) and the invoice stays open; nothing else may charge or void it meanwhile; the
// customer's authentication pays it.
func finalizeRequiresAction(e *engine) {
	e.customer("3ds", remit.ChargeAutomatically)
	e.attachCard("3ds", "pm_card_threeDSecureRequired")
	inv := e.invoiceOf("3ds", 2000)
	p := e.onePayment(inv)
	prefix := publicURL + "/customer-portal/payments/" + p.PaymentID + "/authenticate?token="
	if inv.Status != remit.InvoiceOpen || *inv.Number != "INV-000006" || p.Status != remit.PaymentRequiresAction ||
		p.NextAction == nil || p.NextAction.Type != "redirect_to_url" || !strings.HasPrefix(p.NextAction.URL, prefix) {
		e.t.Fatalf("requires_action: %s; %s", brief(inv), briefPayment(p))
	}
	e.wantEvents(p.PaymentID, remit.EventPaymentProcessing, remit.EventPaymentRequiresAction)
	e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoicePaymentActionRequired)
	inProgress := map[string]any{"reason": "payment_in_progress", "paymentId": p.PaymentID}
	_, err := e.pay(inv.InvoiceID)
	wantConflict(e.t, err, inProgress)
	_, err = e.void(inv.InvoiceID)
	wantConflict(e.t, err, inProgress)

	tok, m, err := e.app.Access.ResolveHostedToken(context.Background(), strings.TrimPrefix(p.NextAction.URL, prefix))
	if err != nil {
		e.t.Fatal(err)
	}
	paid := mustWrite(e, func(ctx context.Context) (remit.Invoice, error) {
		return e.app.Payments.AuthenticatePayment(ctx, tok, m, p.PaymentID, "succeed")
	})
	if paid.Status != remit.InvoicePaid || e.onePayment(paid).Status != remit.PaymentSucceeded || len(e.receipts(inv.InvoiceID)) != 1 {
		e.t.Fatalf("authenticated: %s", brief(paid))
	}
}

// Called outside App.Write, a finalization that must charge has no one to run the charge after
// its commit (app/followup.go): it is an internal error and rolls back whole, so the draft stays a
// draft and takes no number. Through the write path it is finalized with the next number.
func finalizeWithoutWriteOwner(e *engine) {
	e.customer("direct", remit.ChargeAutomatically)
	e.attachCard("direct", "pm_card_visa")
	id := e.draft("direct", 600)
	if _, err := e.app.Invoicing.FinalizeInvoice(context.Background(), e.m, id, nil); remit.ErrorCode(err) != remit.EInternal {
		e.t.Fatalf("finalize outside a write: %v", err)
	}
	if got := e.stored(id); got.Status != remit.InvoiceDraft || got.Number != nil || len(e.payments(id)) != 0 {
		e.t.Fatalf("after the refused finalize: %s", brief(got))
	}
	if inv := must[remit.Invoice](e.t)(e.finalize(id)); inv.Status != remit.InvoicePaid || *inv.Number != "INV-000007" {
		e.t.Fatalf("finalized through the write path: %s", brief(inv))
	}
}

// Only a draft is finalized: a finalized invoice is a conflict naming its state, and takes no
// number (wantNumbers finds no gap).
func finalizeTwice(e *engine) {
	for _, c := range []struct{ customer, state string }{{"sender", "open"}, {"visa", "paid"}} {
		invs, err := e.read().ListInvoices(context.Background(), e.m.ID, store.InvoiceFilter{CustomerID: c.customer, ListPage: store.ListPage{Limit: 10}})
		if err != nil || len(invs) != 1 {
			e.t.Fatalf("invoices of %s: %d, %v", c.customer, len(invs), err)
		}
		_, err = e.finalize(invs[0].InvoiceID)
		wantConflict(e.t, err, map[string]any{"currentState": c.state, "reason": "invalid_state"})
	}
}

// raced runs finalize and void on one draft at once, each through the write path.
func raced(e *engine, invoiceID string) (finalized, voided remit.Invoice, finalizeErr, voidErr error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		finalized, finalizeErr = write(e, func(ctx context.Context) (remit.Invoice, error) {
			return e.app.Invoicing.FinalizeInvoice(ctx, e.m, invoiceID, nil)
		})
	}()
	go func() { defer wg.Done(); <-start; voided, voidErr = e.void(invoiceID) }()
	close(start)
	wg.Wait()
	return
}

// Void racing finalize on one draft. A draft cannot be voided (remit.InvoiceStates: void from open
// only), so the finalization always wins and the void's outcome depends on which ran first: before
// it, a conflict naming the draft (the invoice stays open); after it, the voided invoice keeps the
// number it was finalized with. The store never holds a void invoice without a number, nor a
// number taken twice or skipped.
func TestEngineVoidRacingFinalize(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		e.customer("race", remit.SendInvoice)
		for range 8 {
			id := e.draft("race", 1500)
			finalized, voided, ferr, verr := raced(e, id)
			if ferr != nil || finalized.Number == nil {
				t.Fatalf("finalize lost to a void of a draft: %v", ferr)
			}
			e.numbers = append(e.numbers, *finalized.Number)
			got := e.stored(id)
			if got.Number == nil || *got.Number != *finalized.Number {
				t.Fatalf("stored number %s, finalized with %s", deref(got.Number), *finalized.Number)
			}
			if verr != nil {
				wantConflict(t, verr, map[string]any{"currentState": "draft"})
				if got.Status != remit.InvoiceOpen || got.VoidedAt != nil {
					t.Fatalf("void refused, stored: %s", got.Status)
				}
				continue
			}
			if voided.Number == nil || *voided.Number != *got.Number || got.Status != remit.InvoiceVoid || got.VoidedAt == nil ||
				got.AmountRemaining != 0 || got.PaymentURL != nil {
				t.Fatalf("voided: answered %s; stored %s", brief(voided), brief(got))
			}
			e.wantEvents(id, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoiceVoided)
		}
		e.wantNumbers()
	})
}

// Two finalizations of one draft at once: exactly one wins, the other is a conflict naming the
// state the winner left; one number is taken.
func TestEngineConcurrentFinalize(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		e.customer("twice", remit.SendInvoice)
		for range 4 {
			id := e.draft("twice", 900)
			var wg sync.WaitGroup
			invs, errs := make([]remit.Invoice, 2), make([]error, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					invs[i], errs[i] = write(e, func(ctx context.Context) (remit.Invoice, error) {
						return e.app.Invoicing.FinalizeInvoice(ctx, e.m, id, nil)
					})
				}()
			}
			wg.Wait()
			won := 0
			if errs[1] == nil {
				won = 1
			}
			if errs[won] != nil || errs[1-won] == nil {
				t.Fatalf("two finalizations: %v, %v", errs[0], errs[1])
			}
			wantConflict(t, errs[1-won], map[string]any{"currentState": "open"})
			e.numbers = append(e.numbers, *invs[won].Number)
		}
		e.wantNumbers()
	})
}

// A processor slower than the processor timeout (docs/payments.md "Payments as intents"): the
// finalize answers the open invoice naming a processing attempt, which the reconciler leaves alone
// until the attempt's lease ran out and then records from the processor's own record: one charge,
// one success, one receipt.
func TestEngineFinalizeLeftProcessingIsReconciled(t *testing.T) {
	const timeout = 500 * time.Millisecond
	runEngine(t, engineOptions{fixedClock: true, processorTimeout: timeout, sandboxLatency: time.Hour}, func(t *testing.T, e *engine) {
		e.customer("slow", remit.ChargeAutomatically)
		e.attachCard("slow", "pm_card_visa")
		inv := e.invoiceOf("slow", 3300)
		p := e.onePayment(inv)
		if inv.Status != remit.InvoiceOpen || p.Status != remit.PaymentProcessing || len(e.receipts(inv.InvoiceID)) != 0 {
			t.Fatalf("past the timeout: invoice %s, payment %s", inv.Status, p.Status)
		}
		e.wantEvents(p.PaymentID, remit.EventPaymentProcessing)
		if c, found, err := e.app.DB.SandboxCharges().Get(context.Background(), p.PaymentID); err != nil || !found || c.Status != processor.Succeeded {
			t.Fatalf("the processor's record: %+v, %v, %v", c, found, err)
		}
		reconcile := func(want int) {
			t.Helper()
			if n, err := e.app.Payments.Reconcile(context.Background()); err != nil || n != want {
				t.Fatalf("reconcile: %d looked at, %v; want %d", n, err, want)
			}
		}
		reconcile(0) // the attempt's lease (the processor timeout after the call) has not run out
		e.clock.Add(timeout + time.Second)
		reconcile(1)
		got := e.stored(inv.InvoiceID)
		if p := e.onePayment(got); got.Status != remit.InvoicePaid || p.Status != remit.PaymentSucceeded || len(e.receipts(got.InvoiceID)) != 1 {
			t.Fatalf("reconciled: invoice %s, payment %s", got.Status, p.Status)
		}
		e.wantEvents(p.PaymentID, remit.EventPaymentProcessing, remit.EventPaymentSucceeded)
		if charges, err := e.app.DB.SandboxCharges().List(context.Background()); err != nil || len(charges) != 1 {
			t.Fatalf("sandbox charges %+v, %v", charges, err)
		}
		reconcile(0) // nothing is left open
		e.wantNumbers()
	})
}
