package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// Refunds (docs/payments.md "Refunds") are intents, like payment attempts:
//
//  1. refundInvoice, in the credit note's transaction: each refunded payment gets a refund (re_)
//     and everything the refund changes is recorded at once (the payment's and the receipt's
//     amountRefunded, the refund in the open settlement), so that two credit notes can never
//     refund one payment twice. A refund of a card payment is pending; one of a payment received
//     out of band succeeded (the merchant returns that money itself).
//  2. sendRefund, a follow-up once that transaction committed, with none open: the processor is
//     asked to refund, with the refund's ID as its idempotency reference.
//  3. settleRefund, a second transaction: succeeded records the processor's reference
//     (refund.succeeded); failed undoes step 1's amounts and credits the customer's prepaid balance
//     instead, so that the credit note still gives the customer what it says (refund.failed).
//
// A refund left pending (a crash, a fault, a timeout) is sent again by the reconciler; Refund is
// idempotent on the reference, so it is never made twice.

// refundInvoice returns amount of the invoice's payments to the customer, first payment first, and
// answers the refunds' IDs. Credit notes call it for their refund bucket after checking that amount
// is at most what was paid and not yet refunded.
//
// Errors: not_implemented (a production card payment without a processor connector).
func (ps *Payments) refundInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, amount int64, creditNoteID string, now time.Time) ([]string, error) {
	payments, err := tx.ListInvoicePayments(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return nil, err
	}
	left := amount
	var ids []string
	for _, p := range payments {
		refundable := p.Amount - p.AmountRefunded
		if left == 0 || !p.Status.Refundable() || refundable <= 0 {
			continue
		}
		ref, err := ps.openRefund(ctx, tx, m, inv, p, min(left, refundable), creditNoteID, now)
		if err != nil {
			return nil, err
		}
		ids = append(ids, ref.RefundID)
		left -= ref.Amount
	}
	if left > 0 {
		return nil, remit.CreditLimit(fmt.Sprintf("Only %d of the refund could be made against the invoice's payments.", amount-left),
			"refund_exceeds_paid", "refundAmount", amount-left)
	}
	return ids, nil
}

// openRefund records one payment's refund with what it changes, and for a card payment registers
// the processor call (sendRefund) to run once the transaction committed.
func (ps *Payments) openRefund(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, p remit.Payment, amount int64, creditNoteID string, now time.Time) (remit.Refund, error) {
	ref := remit.Refund{Object: "refund", RefundID: remit.NewID("re"), PaymentID: p.PaymentID, InvoiceID: inv.InvoiceID,
		CreditNoteID: creditNoteID, Amount: amount, Currency: p.Currency, Status: remit.RefundSucceeded, Environment: m.Environment,
		MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	if p.Method == remit.MethodCard {
		proc := ps.processorFor(m)
		if proc == nil {
			return ref, remit.Errorf(remit.ENotImplemented, "Refunding card payments in production needs a processor connector, and none is configured.")
		}
		if p.ProcessorReference == nil {
			return ref, remit.Internal(fmt.Errorf("payment %s has no processor reference", p.PaymentID))
		}
		name, lease := proc.Name(), ps.Clock.Now().Add(ps.Config.ProcessorTimeout)
		ref.Status, ref.Processor, ref.ChargeReference, ref.ReconcileAfter = remit.RefundPending, &name, *p.ProcessorReference, &lease
	}
	if err := ps.applyRefundAmounts(ctx, tx, m, p, amount, now); err != nil {
		return ref, err
	}
	if err := tx.InsertRefund(ctx, ref); err != nil {
		return ref, err
	}
	if err := ps.Emit(ctx, tx, scopeOf(m), now, remit.EventRefundCreated, ref.RefundID, ref); err != nil {
		return ref, err
	}
	if !remit.RefundStates.Allows(ref.Status, remit.ActionResolve) {
		return ref, nil // out of band: succeeded at once
	}
	return ref, ps.after(ctx, func(ctx context.Context) (any, error) { return nil, ps.sendRefund(ctx, m, ref) })
}

// applyRefundAmounts records what a refund of amount changes: the payment's and its receipt's
// amountRefunded and, for a settled (card) payment, a refund in the open settlement.
func (ps *Payments) applyRefundAmounts(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, p remit.Payment, amount int64, now time.Time) error {
	if _, err := ps.RecordReceiptRefund(ctx, tx, m, p.PaymentID, amount, now); err != nil {
		return err
	}
	if !p.Settled() {
		return nil
	}
	_, err := ps.RecordSettlementRefund(ctx, tx, m, p.Currency, amount, now)
	return err
}

// sendRefund asks the processor to make a pending refund, with no transaction open, and records
// its answer (settleRefund). A fault or a timeout leaves the refund pending for the reconciler; it
// is logged, not answered: the credit note is issued either way.
func (ps *Payments) sendRefund(ctx context.Context, m remit.MerchantAccount, ref remit.Refund) error {
	proc := ps.processorFor(m)
	if proc == nil || ref.Processor == nil || proc.Name() != *ref.Processor {
		return nil // the payment's processor is not configured now: the refund waits for it
	}
	cctx, cancel := context.WithTimeout(ctx, ps.Config.ProcessorTimeout)
	cctx, span := processorSpan(cctx, "processor.refund", proc, ref.RefundID)
	res, err := proc.Refund(cctx, processor.RefundRequest{Amount: ref.Amount, Currency: ref.Currency, ChargeReference: ref.ChargeReference,
		IdempotencyRef: ref.RefundID, Account: m.ProcessorAccountID})
	telemetry.End(span, err)
	cancel()
	if err != nil {
		ps.Log.WarnContext(ctx, "payment processor did not answer a refund; it stays pending for the reconciler",
			"refundId", ref.RefundID, "processor", proc.Name(), "err", err.Error())
		return nil
	}
	if err := ps.settleRefund(ctx, m, ref.RefundID, res); err != nil {
		ps.Log.ErrorContext(ctx, "record a refund's outcome; it stays pending for the reconciler", "refundId", ref.RefundID, "err", err.Error())
	}
	return nil
}

// settleRefund records a processor's answer for a refund still pending, in a transaction of its
// own; a refund settled first (by the reconciler or the request) is left as it is.
func (ps *Payments) settleRefund(ctx context.Context, m remit.MerchantAccount, refundID string, res processor.RefundResult) error {
	return ps.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		ref, err := tx.GetRefund(ctx, m.ID, refundID, store.Locked)
		if err != nil || !remit.RefundStates.Allows(ref.Status, remit.ActionResolve) {
			return err
		}
		now := micro(ps.Now(m))
		ref.Environment, ref.UpdatedAt = m.Environment, now
		if res.Reference != "" {
			r := res.Reference
			ref.ProcessorReference = &r
		}
		event := remit.EventRefundSucceeded
		ref.Status = remit.RefundSucceeded
		if res.Status == processor.Failed {
			event, ref.Status = remit.EventRefundFailed, remit.RefundFailed
			code, msg := orDefault(res.FailureCode, "refund_failed"), orDefault(res.FailureMessage, "The processor refused the refund.")
			ref.FailureCode, ref.FailureMessage = &code, &msg
		}
		if ok, err := tx.SettleRefund(ctx, ref); err != nil || !ok {
			return err
		}
		if ref.Status == remit.RefundFailed {
			if err := ps.undoRefund(ctx, tx, m, ref, now); err != nil {
				return err
			}
		}
		return ps.Emit(ctx, tx, scopeOf(m), now, event, ref.RefundID, ref)
	})
}

// undoRefund takes a failed refund's amount back out of the payment, its receipt, the invoice's
// refunded total and the settlement (as a negative refund in the open one), and credits it to
// the customer's prepaid balance, where the credit note's value then is.
func (ps *Payments) undoRefund(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, ref remit.Refund, now time.Time) error {
	p, err := tx.GetPayment(ctx, m.ID, ref.PaymentID, store.Locked)
	if err != nil {
		return err
	}
	if _, err := ps.RecordReceiptRefund(ctx, tx, m, p.PaymentID, -ref.Amount, now); err != nil {
		return err
	}
	if p.Settled() {
		if _, err := ps.RecordSettlementRefund(ctx, tx, m, p.Currency, -ref.Amount, now); err != nil {
			return err
		}
	}
	inv, err := tx.GetInvoice(ctx, m.ID, ref.InvoiceID, store.Locked)
	if err != nil {
		return err
	}
	inv.RefundedTotal -= ref.Amount
	inv.UpdatedAt = now
	if err := tx.UpdateInvoice(ctx, inv, false); err != nil {
		return err
	}
	_, err = ps.ledger.CreditBalance(ctx, tx, scopeOf(m), inv.CustomerID, remit.BalanceCredit{Kind: remit.EntryCreditNote,
		Currency: ref.Currency, Amount: ref.Amount, CreditNoteID: ref.CreditNoteID,
		Description: "Refund " + ref.RefundID + " failed: credited to the balance"}, now)
	return err
}

// reconcileRefunds sends again the refunds left pending whose time has come and returns how many
// it looked at (the reconciler's second half; see reconcile.go).
func (ps *Payments) reconcileRefunds(ctx context.Context) (int, error) {
	return reconcileClaimed(ctx, ps, store.Q.AnyPendingRefundDue, (*store.Tx).ClaimPendingRefunds, func(ref remit.Refund) error {
		m, err := ps.DB.Read(ctx).GetMerchantAccount(ctx, ref.MerchantAccountID, store.Unlocked)
		if err != nil {
			return err
		}
		return ps.sendRefund(ctx, m, ref)
	})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
