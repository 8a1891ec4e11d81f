package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// invoicingHandlers registers the invoicing area: invoices and their tax transactions.
func (s *Server) invoicingHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"createInvoice": decoded(func(ctx context.Context, r *Request, body api.InvoiceCreateRequest) (any, error) {
			in := remit.InvoiceDraftInput{
				InvoiceID: deref(body.InvoiceId), CustomerID: body.CustomerId, BillingAccountID: body.BillingAccountId,
				Currency: body.Currency, PeriodStart: body.PeriodStart, PeriodEnd: body.PeriodEnd, Metadata: metadata(body.Metadata),
			}
			if body.CouponIds != nil {
				in.CouponIDs = *body.CouponIds
			}
			for _, l := range body.Lines {
				in.Lines = append(in.Lines, remit.InvoiceLineInput{PriceID: l.PriceId, Quantity: l.Quantity, UnitAmount: l.UnitAmount, Description: l.Description})
			}
			return s.eng.Invoicing.CreateInvoice(ctx, r.Merchant, in)
		}),
		"getInvoice": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.GetInvoice(ctx, r.Merchant, r.Path("invoiceId"))
		},
		"refreshInvoice": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.RefreshInvoice(ctx, r.Merchant, r.Path("invoiceId"))
		},
		"finalizeInvoice": decoded(func(ctx context.Context, r *Request, body api.InvoiceFinalizeRequest) (any, error) {
			return s.eng.Invoicing.FinalizeInvoice(ctx, r.Merchant, r.Path("invoiceId"), body.FinalizedByRef)
		}),
		"voidInvoice": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.VoidInvoice(ctx, r.Merchant, r.Path("invoiceId"))
		},
		"listTaxTransactions": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.ListTaxTransactions(ctx, r.Merchant, r.Query("status"), r.Query("sourceDocumentId"), r.Query("limit"), r.Query("cursor"))
		},
		"getTaxTransaction": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.GetTaxTransaction(ctx, r.Merchant, r.Path("taxTransactionId"))
		},
		"finalizeTaxTransaction": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.CommitTaxTransaction(ctx, r.Merchant, r.Path("taxTransactionId"))
		},
	}
}
