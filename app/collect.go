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

// refundInvoice returns amount of the invoice's payments to the customer through the processor,
// records the refunds (receipts, settlement) and returns their IDs. Credit notes call it for their
// refund bucket, after checking that amount is at most what was paid and not yet refunded. The
// payments capability implements it.
func (a *App) refundInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, amount int64, creditNoteID string, now time.Time) ([]string, error) {
	return nil, remit.Errorf(remit.ENotImplemented, "Refunds through the processor are not available in this version.")
}
