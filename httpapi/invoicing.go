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
			return s.eng.Invoicing.CreateInvoice(ctx, r.Merchant, remit.InvoiceDraftInput{
				InvoiceID: deref(body.InvoiceId), CustomerID: body.CustomerId, BillingAccountID: body.BillingAccountId,
				Currency: body.Currency, PeriodStart: body.PeriodStart, PeriodEnd: body.PeriodEnd, Metadata: metadata(body.Metadata),
				CouponIDs: derefSlice(body.CouponIds), Lines: lineInputs(body.Lines),
			})
		}),
		"getInvoice":     byPath("invoiceId", s.eng.Invoicing.GetInvoice),
		"refreshInvoice": byPath("invoiceId", s.eng.Invoicing.RefreshInvoice),
		"finalizeInvoice": decoded(func(ctx context.Context, r *Request, body api.InvoiceFinalizeRequest) (any, error) {
			return s.eng.Invoicing.FinalizeInvoice(ctx, r.Merchant, r.Path("invoiceId"), body.FinalizedByRef)
		}),
		"voidInvoice": byPath("invoiceId", s.eng.Invoicing.VoidInvoice),
		"listTaxTransactions": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Invoicing.ListTaxTransactions(ctx, r.Merchant, r.Query("status"), r.Query("sourceDocumentId"), r.Query("limit"), r.Query("cursor"))
		},
		"getTaxTransaction":      byPath("taxTransactionId", s.eng.Invoicing.GetTaxTransaction),
		"finalizeTaxTransaction": byPath("taxTransactionId", s.eng.Invoicing.CommitTaxTransaction),
	}
}
