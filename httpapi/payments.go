package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// payInvoice handles POST /v1/invoices/{invoiceId}/pay.
func (s *Server) payInvoice(ctx context.Context, r *Request, body api.InvoicePayRequest) (any, error) {
	return s.eng.Payments.PayInvoice(ctx, r.Merchant, r.Path("invoiceId"), body.OutOfBand != nil && *body.OutOfBand)
}

// listPaymentReceipts handles GET /v1/payment-receipts.
func (s *Server) listPaymentReceipts(ctx context.Context, r *Request) (any, error) {
	return s.eng.Payments.ListPaymentReceipts(ctx, r.Merchant, remit.ReceiptQuery{
		Customer: r.Query("customer"), CustomerID: r.Query("customerId"), CustomerExternalID: r.Query("customerExternalId"),
		BillingAccountID: r.Query("billingAccountId"), Invoice: r.Query("invoice"), InvoiceID: r.Query("invoiceId"),
		PaymentID: r.Query("paymentId"), PaymentIntentID: r.Query("paymentIntentId"), Status: r.Query("status"),
		Limit: r.Query("limit"), Offset: r.Query("offset"), CreatedFrom: r.Query("createdFrom"), CreatedTo: r.Query("createdTo"),
	})
}

// listSettlements handles GET /v1/merchant-accounts/{merchantAccountId}/settlements.
func (s *Server) listSettlements(ctx context.Context, r *Request) (any, error) {
	return s.eng.Payments.ListSettlements(ctx, r.Scope, r.Path("merchantAccountId"), remit.SettlementQuery{Scope: r.Query("scope"), ListQuery: remit.ListQueryOf(r.Query)})
}

// listPayments handles GET /v1/payments.
func (s *Server) listPayments(ctx context.Context, r *Request) (any, error) {
	return s.eng.Payments.ListPayments(ctx, r.Merchant, remit.PaymentQuery{InvoiceID: r.Query("invoiceId"), CustomerID: r.Query("customerId"),
		Status: r.Query("status"), ListQuery: remit.ListQueryOf(r.Query)})
}

// receiveStripeWebhook handles POST /processor-webhooks/stripe: the raw body and its signature go
// to the engine, which verifies them.
func (s *Server) receiveStripeWebhook(ctx context.Context, r *Request) (any, error) {
	return s.eng.Payments.StripeWebhook(ctx, r.Body, r.HTTP.Header.Get("Stripe-Signature"))
}
