package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// collectAtFinalize is the collection step of finalization when its plan says to collect
// (remit.PlanFinalization: an open invoice of a charge_automatically account with an amount
// remaining): with a default payment method → a payment attempt, charged once
// the finalization committed (success: paid with a receipt; decline: stays open with
// lastPaymentError, and the finalization still succeeds).
// Otherwise, and in production without a processor connector, the invoice stays open for the
// customer to pay through its paymentUrl.
func (ps *Payments) collectAtFinalize(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
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
