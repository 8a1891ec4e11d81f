package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// collectAtFinalize is the collection step of finalization for an open invoice with an amount
// remaining: charge_automatically with a default payment method → a payment attempt, charged once
// the finalization committed (success: paid with a receipt; decline: stays open with
// lastPaymentError, and the finalization still succeeds).
// Otherwise, and in production without a processor connector, the invoice stays open for the
// customer to pay through its paymentUrl.
func (ps *Payments) collectAtFinalize(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	if inv.CollectionMethod != remit.ChargeAutomatically {
		return nil
	}
	proc := ps.processorFor(m)
	if proc == nil {
		return nil
	}
	pm, err := ps.defaultPaymentMethod(ctx, tx, m, *inv)
	if err != nil || pm == nil {
		return err
	}
	return ps.openAttempt(ctx, tx, m, inv, proc, *pm, remit.SourceFinalize, now)
}

// refundInvoice returns amount of the invoice's payments to the customer, first payment first:
// card payments through the processor (a failed refund fails the credit note), out-of-band
// payments recorded only (the merchant returns that money itself). Each refunded payment gets a
// refund (re_), its receipt's amountRefunded and status, and — for card payments — a refund in the
// open settlement; refund.created is emitted. Credit notes call it for their refund bucket after
// checking that amount is at most what was paid and not yet refunded.
//
// Errors: conflict (the processor refused, details.reason refund_failed), not_implemented (a
// production card payment without a processor connector).
func (ps *Payments) refundInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, amount int64, creditNoteID string, now time.Time) ([]string, error) {
	payments, err := tx.ListInvoicePayments(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return nil, err
	}
	left := amount
	var ids []string
	for _, p := range payments {
		if left == 0 {
			break
		}
		refundable := p.Amount - p.AmountRefunded
		if p.Status != remit.PaymentSucceeded || refundable <= 0 {
			continue
		}
		amt := min(left, refundable)
		ref := remit.Refund{Object: "refund", RefundID: remit.NewID("re"), PaymentID: p.PaymentID, InvoiceID: inv.InvoiceID,
			CreditNoteID: creditNoteID, Amount: amt, Currency: p.Currency, Status: "succeeded", Environment: m.Environment,
			MerchantAccountID: m.ID, CreatedAt: now}
		if p.Method == remit.MethodCard {
			proc := ps.processorFor(m)
			if proc == nil {
				return nil, remit.Errorf(remit.ENotImplemented, "Refunding card payments in production needs a processor connector, and none is configured.")
			}
			if p.ProcessorReference == nil {
				return nil, remit.Internal(fmt.Errorf("payment %s has no processor reference", p.PaymentID))
			}
			res, err := proc.Refund(ctx, processor.RefundRequest{Amount: amt, Currency: p.Currency, ChargeReference: *p.ProcessorReference,
				IdempotencyRef: creditNoteID + "/" + p.PaymentID})
			if err != nil {
				return nil, remit.Internal(fmt.Errorf("processor refund: %w", err))
			}
			if res.Status != processor.Succeeded {
				return nil, remit.Errorf(remit.EConflict, "The processor refused the refund of payment '%s': %s", p.PaymentID, res.FailureMessage).
					With("reason", "refund_failed").With("failureCode", res.FailureCode).With("paymentId", p.PaymentID)
			}
			if res.Reference != "" {
				r := res.Reference
				ref.ProcessorReference = &r
			}
		}
		if _, err := ps.RecordReceiptRefund(ctx, tx, m, p.PaymentID, amt, now); err != nil {
			return nil, err
		}
		if p.Settled() {
			if _, err := ps.RecordSettlementRefund(ctx, tx, m, p.Currency, amt, now); err != nil {
				return nil, err
			}
		}
		if err := tx.InsertRefund(ctx, ref); err != nil {
			return nil, err
		}
		if err := ps.Emit(ctx, tx, scopeOf(m), now, remit.EventRefundCreated, ref.RefundID, ref); err != nil {
			return nil, err
		}
		ids = append(ids, ref.RefundID)
		left -= amt
	}
	if left > 0 {
		return nil, remit.CreditLimit(fmt.Sprintf("Only %d of the refund could be made against the invoice's payments.", amount-left),
			"refund_exceeds_paid", "refundAmount", amount-left)
	}
	return ids, nil
}
