package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// createCreditNote handles POST /v1/credit-notes.
func (s *Server) createCreditNote(ctx context.Context, r *Request, body api.CreditNoteCreateRequest) (any, error) {
	in := remit.CreditNoteInput{
		CreditNoteID: deref(body.CreditNoteId), InvoiceID: body.InvoiceId, Reason: string(body.Reason),
		Description: body.Description, CreditAmount: body.CreditAmount, RefundAmount: body.RefundAmount,
		OffsetAmount: body.OffsetAmount, Metadata: metadata(body.Metadata),
	}
	for _, l := range body.Lines {
		li := remit.CreditNoteLineInput{InvoiceLineID: l.InvoiceLineId, Description: l.Description, Amount: l.Amount, Metadata: metadata(l.Metadata)}
		if l.Bucket != nil {
			b := string(*l.Bucket)
			li.Bucket = &b
		}
		in.Lines = append(in.Lines, li)
	}
	return s.eng.CreditNotes.CreateCreditNote(ctx, r.Merchant, in)
}

// listCreditNotes handles GET /v1/credit-notes.
func (s *Server) listCreditNotes(ctx context.Context, r *Request) (any, error) {
	return s.eng.CreditNotes.ListCreditNotes(ctx, r.Merchant, remit.CreditNoteQuery{InvoiceID: r.Query("invoiceId"), CustomerID: r.Query("customerId"),
		ListQuery: remit.ListQueryOf(r.Query)})
}
