package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
)

// The customer portal's pages: GET /customer-portal/{tail...}?token=, authorized like the portal's
// PUT routes (missing or bad token 401, unknown tail 404, token of another resource 403):
//
//	invoices/{invoiceId}       the hosted invoice page (HTML), with a button that pays the invoice
//	                           through PUT invoices/{invoiceId}/pay and shows the outcome
//	invoices/{invoiceId}/pdf   the invoice's PDF
func (s *Server) portalGet(ctx context.Context, r *Request) (any, error) {
	tok, m, parts, err := s.portalRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	switch {
	case len(parts) == 2 && parts[0] == "invoices" && parts[1] != "":
		page, err := s.eng.Documents.HostedInvoicePage(ctx, tok, m, parts[1])
		if err != nil {
			return nil, err
		}
		// Relative to the page (…/invoices/{id}), so they work under any public URL prefix.
		token := url.QueryEscape(r.Query("token"))
		page.PayURL = "./" + url.PathEscape(parts[1]) + "/pay?token=" + token
		page.PDFURL = "./" + url.PathEscape(parts[1]) + "/pdf?token=" + token
		body, err := document.InvoiceHTML(page)
		if err != nil {
			return nil, remit.Internal(err)
		}
		h := http.Header{}
		h.Set("Content-Security-Policy", document.HostedPageCSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		return Binary{ContentType: "text/html; charset=utf-8", Body: body, Header: h}, nil
	case len(parts) == 3 && parts[0] == "invoices" && parts[1] != "" && parts[2] == "pdf":
		d, err := s.eng.Documents.HostedInvoicePDF(ctx, tok, m, parts[1])
		if err != nil {
			return nil, err
		}
		return pdfAnswer(document.InvoicePDF(d))(invoiceFileName(d))
	}
	return nil, remit.Errorf(remit.ENotFound, "No such customer-portal page. The portal's pages are /customer-portal/invoices/{invoiceId} and /customer-portal/invoices/{invoiceId}/pdf.")
}
