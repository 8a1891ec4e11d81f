package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// collectAtFinalize is the collection step of finalization for an open invoice with an amount
// remaining: charge_automatically with a default payment method → a payment attempt; otherwise the
// invoice stays open for the customer to pay through its paymentUrl. The payments capability
// implements the attempt; until then invoices stay open.
func (a *App) collectAtFinalize(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	return nil
}
