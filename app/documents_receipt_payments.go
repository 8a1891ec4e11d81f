package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/store"
)

// receiptFactsForPDF reads a payment receipt's figures and the invoice it paid, for its PDF.
//
// Errors: not_found.
func receiptFactsForPDF(ctx context.Context, q store.Q, m remit.MerchantAccount, receiptID string) (document.ReceiptFacts, string, error) {
	r, err := q.GetReceipt(ctx, m.ID, receiptID)
	if err != nil {
		return document.ReceiptFacts{}, "", err
	}
	method := "Paid outside Remit"
	if r.PaymentMethod.Type != remit.MethodOutOfBand {
		brand, last4 := "", ""
		if r.PaymentMethod.Brand != nil {
			brand = *r.PaymentMethod.Brand
		}
		if r.PaymentMethod.Last4 != nil {
			last4 = *r.PaymentMethod.Last4
		}
		method = CardLabel(brand, last4)
	}
	return document.ReceiptFacts{ReceiptID: r.ReceiptID, ReceiptNumber: r.ReceiptNumber, PaymentID: r.PaymentID, Amount: r.Amount,
		AmountRefunded: r.AmountRefunded, Currency: r.Currency, Status: r.Status, PaidAt: r.CreatedAt, PaymentMethod: method}, r.InvoiceID, nil
}
