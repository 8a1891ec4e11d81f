package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Paying an open invoice through the engine (Payments.PayInvoice, POST /v1/invoices/{id}/pay):
// the state is checked after the invoice's lock, a card payment is one attempt of its own, and
// a declined one is recorded and still answered as a conflict (docs/payments.md).
func TestEnginePayInvoice(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		e.customer("payer", remit.SendInvoice)
		_, err := e.pay(e.draft("payer", 800))
		wantConflict(t, err, map[string]any{"currentState": "draft", "reason": "invalid_state"})

		inv := e.invoiceOf("payer", 2500) // send_invoice: open, not charged
		_, err = e.pay(inv.InvoiceID)
		wantConflict(t, err, map[string]any{"reason": "no_payment_method", "currentState": "open"})

		e.attachCard("payer", "pm_card_chargeDeclined")
		_, err = e.pay(inv.InvoiceID)
		declined := e.onePayment(e.stored(inv.InvoiceID))
		wantConflict(t, err, map[string]any{"reason": "payment_failed", "failureCode": "card_declined", "paymentId": declined.PaymentID})
		if declined.Status != remit.PaymentFailed || declined.Source != remit.SourceAPI || e.stored(inv.InvoiceID).LastPaymentError == nil {
			t.Fatalf("the declined attempt: %s", briefPayment(declined))
		}

		e.attachCard("payer", "pm_card_visa")
		paid, err := e.pay(inv.InvoiceID)
		if err != nil || paid.Status != remit.InvoicePaid || paid.AmountPaid != 2500 || paid.LastPaymentError != nil || paid.AttemptCount != 2 {
			t.Fatalf("pay: %s, %v", brief(paid), err)
		}
		ps := e.payments(inv.InvoiceID)
		if len(ps) != 2 || ps[1].Status != remit.PaymentSucceeded || ps[1].Attempt != 2 || ps[1].Source != remit.SourceAPI ||
			deref(paid.LatestPaymentID) != ps[1].PaymentID {
			t.Fatalf("%s", briefPayments(ps))
		}
		if rc := e.receipts(inv.InvoiceID); len(rc) != 1 || rc[0].PaymentID != ps[1].PaymentID {
			t.Fatalf("receipts: %+v", rc)
		}
		_, err = e.pay(inv.InvoiceID)
		wantConflict(t, err, map[string]any{"currentState": "paid", "reason": "invalid_state"})
		if len(e.payments(inv.InvoiceID)) != 2 {
			t.Fatal("paying a paid invoice made an attempt")
		}
		e.wantEvents(inv.InvoiceID, remit.EventInvoiceCreated, remit.EventInvoiceFinalized, remit.EventInvoicePaymentFailed, remit.EventInvoicePaid)
		e.wantNumbers()
	})
}

// A credit note's refund bucket on a paid invoice (docs/payments.md "Refunds"): the refund is
// recorded pending with the credit note, sent to the processor once that committed, and recorded
// succeeded; the payment and its receipt show what was refunded. A refund of more than is left is
// a conflict that changes nothing.
func TestEngineRefunds(t *testing.T) {
	runEngine(t, engineOptions{}, func(t *testing.T, e *engine) {
		e.customer("refunded", remit.ChargeAutomatically)
		e.attachCard("refunded", "pm_card_visa")
		inv := e.invoiceOf("refunded", 5000)
		p := e.onePayment(inv)

		cn := mustRefund(e, inv.InvoiceID, 2000)
		wantRefunded(e, inv.InvoiceID, p.PaymentID, 2000, remit.ReceiptPartiallyRefunded)
		wantRefundSent(e, cn.RefundIDs[0], 2000)

		// 5000 paid, 2000 refunded: 3000 is left to credit. The check on the invoice's totals comes
		// first (remit.PlanCreditNote), and on a paid invoice what is left to credit is never more
		// than what is left to refund, so it is the one that answers.
		_, err := e.refund(inv.InvoiceID, 3001)
		wantConflict(t, err, map[string]any{"reason": "total_exceeds_invoice", "remaining": 3000})
		wantRefunded(e, inv.InvoiceID, p.PaymentID, 2000, remit.ReceiptPartiallyRefunded)

		cn = mustRefund(e, inv.InvoiceID, 3000)
		wantRefunded(e, inv.InvoiceID, p.PaymentID, 5000, remit.ReceiptRefunded)
		wantRefundSent(e, cn.RefundIDs[0], 3000)
		if refunds, err := e.app.DB.SandboxCharges().ListRefunds(context.Background()); err != nil || len(refunds) != 2 {
			t.Fatalf("sandbox refunds %+v, %v", refunds, err)
		}

		// An open invoice has nothing paid to refund.
		e.customer("unpaid", remit.SendInvoice)
		open := e.invoiceOf("unpaid", 1000)
		_, err = e.refund(open.InvoiceID, 1)
		wantConflict(t, err, map[string]any{"reason": "refund_exceeds_paid", "remaining": 0})
		e.wantNumbers()
	})
}

// mustRefund issues a refund credit note of amount on the invoice; it refunds one payment.
func mustRefund(e *engine, invoiceID string, amount int64) remit.CreditNote {
	e.t.Helper()
	cn, err := e.refund(invoiceID, amount)
	if err != nil || cn.RefundAmount != amount || len(cn.RefundIDs) != 1 {
		e.t.Fatalf("refund credit note: %+v, %v", cn, err)
	}
	return cn
}

// wantRefunded checks what the invoice's one payment, its receipt and the invoice show refunded.
func wantRefunded(e *engine, invoiceID, paymentID string, refunded int64, status remit.ReceiptStatus) {
	e.t.Helper()
	p := must[remit.Payment](e.t)(e.read().GetPayment(context.Background(), e.m.ID, paymentID, store.Unlocked))
	rc := e.receipts(invoiceID)
	inv := e.stored(invoiceID)
	if p.AmountRefunded != refunded || len(rc) != 1 || rc[0].AmountRefunded != refunded || rc[0].Status != status ||
		inv.RefundedTotal != refunded || inv.CreditedTotal != refunded || inv.Status != remit.InvoicePaid {
		e.t.Fatalf("refunded %d: payment %d, receipts %+v, invoice %s refunded %d credited %d",
			refunded, p.AmountRefunded, rc, inv.Status, inv.RefundedTotal, inv.CreditedTotal)
	}
}

// wantRefundSent checks that the refund was recorded pending (its refund.created event) and, once
// the processor answered, succeeded with the processor's reference (refund.succeeded).
func wantRefundSent(e *engine, refundID string, amount int64) {
	e.t.Helper()
	e.wantEvents(refundID, remit.EventRefundCreated, remit.EventRefundSucceeded)
	evs := must[[]remit.Event](e.t)(e.read().ListEventsByObject(context.Background(), e.m.ID, refundID))
	var created struct{ Object remit.Refund }
	if err := json.Unmarshal(evs[0].Data, &created); err != nil || created.Object.Status != remit.RefundPending {
		e.t.Fatalf("refund.created: %s, %v", evs[0].Data, err)
	}
	ref := must[remit.Refund](e.t)(e.read().GetRefund(context.Background(), e.m.ID, refundID, store.Unlocked))
	if ref.Status != remit.RefundSucceeded || ref.Amount != amount || ref.ProcessorReference == nil || *ref.ProcessorReference != "sbre_"+refundID {
		e.t.Fatalf("refund: %+v", ref)
	}
}
