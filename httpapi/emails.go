package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
)

// listEmails handles GET /v1/emails.
func (s *Server) listEmails(ctx context.Context, r *Request) (any, error) {
	return s.eng.Emails.ListEmails(ctx, r.Merchant, remit.EmailQuery{CustomerID: r.Query("customerId"), InvoiceID: r.Query("invoiceId"),
		Type: r.Query("type"), ListQuery: remit.ListQueryOf(r.Query)})
}
