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
