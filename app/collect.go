package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// collectAtFinalize is the collection step of finalization for an open invoice with an amount
// remaining: charge_automatically with a default payment method → a payment attempt (success: paid
// with a receipt; decline: stays open with lastPaymentError, and the finalization still succeeds).
// Otherwise, and in production without a processor connector, the invoice stays open for the
// customer to pay through its paymentUrl.
func (a *App) collectAtFinalize(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	if inv.CollectionMethod != remit.ChargeAutomatically {
		return nil
	}
	proc := a.processorFor(m)
	if proc == nil {
		return nil
	}
	pm, err := a.defaultPaymentMethod(ctx, tx, m, *inv)
	if err != nil || pm == nil {
		return err
	}
	_, err = a.attemptCharge(ctx, tx, m, inv, proc, *pm, remit.SourceFinalize, now)
	return err
}

// refundInvoice returns amount of the invoice's payments to the customer through the processor,
// records the refunds (receipts, settlement) and returns their IDs. Credit notes call it for their
// refund bucket, after checking that amount is at most what was paid and not yet refunded. The
// payments capability implements it.
func (a *App) refundInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, amount int64, creditNoteID string, now time.Time) ([]string, error) {
	return nil, remit.Errorf(remit.ENotImplemented, "Refunds through the processor are not available in this version.")
}
