package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// listInvoices handles GET /v1/invoices.
func (s *Server) listInvoices(ctx context.Context, r *Request) (any, error) {
	return s.eng.Invoicing.ListInvoices(ctx, r.Merchant, remit.InvoiceQuery{CustomerID: r.Query("customerId"),
		BillingAccountID: r.Query("billingAccountId"), SubscriptionID: r.Query("subscriptionId"), Status: r.Query("status"),
		Number: r.Query("number"), ListQuery: remit.ListQueryOf(r.Query)})
}

func invoiceInput(body api.InvoiceCreateRequest) remit.InvoiceDraftInput {
	return remit.InvoiceDraftInput{
		InvoiceID: deref(body.InvoiceId), CustomerID: body.CustomerId, BillingAccountID: body.BillingAccountId,
		Currency: body.Currency, PeriodStart: body.PeriodStart, PeriodEnd: body.PeriodEnd, Metadata: metadata(body.Metadata),
		CouponIDs: derefSlice(body.CouponIds), Lines: lineInputs(body.Lines), DaysUntilDue: body.DaysUntilDue, Memo: body.Memo,
	}
}

// finalizeInvoice handles POST /v1/invoices/{invoiceId}/finalize.
func (s *Server) finalizeInvoice(ctx context.Context, r *Request, body api.InvoiceFinalizeRequest) (any, error) {
	return s.eng.Invoicing.FinalizeInvoice(ctx, r.Merchant, r.Path("invoiceId"), body.FinalizedByRef)
}

// invoicingPreparers asks the tax provider before a finalization's or a refresh's transaction.
func (s *Server) invoicingPreparers() map[string]PrepareFunc {
	return map[string]PrepareFunc{
		"finalizeInvoice": func(ctx context.Context, r *Request) context.Context {
			return s.eng.Invoicing.PrepareFinalizeInvoice(ctx, r.Merchant, r.Path("invoiceId"))
		},
		"refreshInvoice": func(ctx context.Context, r *Request) context.Context {
			return s.eng.Invoicing.PrepareRefreshInvoice(ctx, r.Merchant, r.Path("invoiceId"))
		},
	}
}

// listTaxTransactions handles GET /v1/tax-transactions.
func (s *Server) listTaxTransactions(ctx context.Context, r *Request) (any, error) {
	return s.eng.Invoicing.ListTaxTransactions(ctx, r.Merchant, remit.TaxTransactionQuery{Status: r.Query("status"), SourceDocumentID: r.Query("sourceDocumentId"),
		ListQuery: remit.ListQueryOf(r.Query)})
}
