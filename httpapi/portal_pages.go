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
//	invoices/{invoiceId}/pay   the invoice's paymentUrl opened in a browser: 302 to its page, under
//	                           the same token, once the token is known to be this invoice's
//	setup-sessions/{sessionId} the hosted setup page (HTML): sandbox test cards, or in production
//	                           the processor's card element; it completes the session through
//	                           PUT setup-sessions/{sessionId}/complete
//	setup-sessions/{sessionId}/complete   the same page, so that the session's url (the complete
//	                           route, which a script PUTs to) also opens the page in a browser
//
// A page opened with back=/portal/... (remit.PortalBackPath; the customer portal's links) links
// back there.
func (s *Server) portalGet(ctx context.Context, r *Request) (any, error) {
	tok, m, parts, err := s.portalRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	switch {
	case tailIs(parts, "invoices", ""):
		page, err := s.eng.Documents.HostedInvoicePage(ctx, tok, m, parts[1])
		if err != nil {
			return nil, err
		}
		// Relative to the page (…/invoices/{id}), so they work under any public URL prefix.
		token := url.QueryEscape(r.Query("token"))
		page.PayURL = "./" + url.PathEscape(parts[1]) + "/pay?token=" + token
		page.PDFURL = "./" + url.PathEscape(parts[1]) + "/pdf?token=" + token
		page.BackURL = backLink(r)
		body, err := document.InvoiceHTML(page)
		if err != nil {
			return nil, remit.Internal(err)
		}
		return hostedHTML(body, document.HostedPageCSP), nil
	case tailIs(parts, "invoices", "pay"):
		if err := tok.Authorize(remit.HostedInvoice, parts[1]); err != nil {
			return nil, err
		}
		// Relative to the pay route (…/invoices/{id}/pay), as the page's own links are.
		to := "../" + url.PathEscape(parts[1]) + "?token=" + url.QueryEscape(r.Query("token"))
		if back := backLink(r); back != "" {
			to += "&back=" + url.QueryEscape(back)
		}
		return Redirect{Location: to}, nil
	case tailIs(parts, "invoices", "pdf"):
		d, err := s.eng.Documents.HostedInvoicePDF(ctx, tok, m, parts[1])
		if err != nil {
			return nil, err
		}
		return pdfAnswer(document.InvoicePDF(d))(document.InvoiceFileName(d))
	case tailIs(parts, "setup-sessions", "") || tailIs(parts, "setup-sessions", "complete"):
		page, err := s.eng.Catalog.HostedSetupPage(ctx, tok, m, parts[1])
		if err != nil {
			return nil, err
		}
		// Relative to the page, so that it works under any public URL prefix.
		page.CompleteURL = "./" + url.PathEscape(parts[1]) + "/complete?token=" + url.QueryEscape(r.Query("token"))
		if len(parts) == 3 {
			page.CompleteURL = "./complete?token=" + url.QueryEscape(r.Query("token"))
		}
		page.BackURL = backLink(r)
		body, err := document.SetupHTML(page)
		if err != nil {
			return nil, remit.Internal(err)
		}
		return hostedHTML(body, document.SetupPageCSP(page)), nil
	}
	return nil, remit.Errorf(remit.ENotFound, "No such customer-portal page. The portal's pages are /customer-portal/invoices/{invoiceId} (also through its /pay route), /customer-portal/invoices/{invoiceId}/pdf and /customer-portal/setup-sessions/{sessionId}.")
}

// backLink is the page's way back: the query's back, a path of the customer portal
// (remit.PortalBackPath), else none.
func backLink(r *Request) string {
	if back := r.Query("back"); remit.PortalBackPath(back) {
		return back
	}
	return ""
}

// hostedHTML answers a hosted page: its Content-Security-Policy, no referrer, no framing, no cache.
func hostedHTML(body []byte, csp string) Binary {
	h := http.Header{}
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	return Binary{ContentType: "text/html; charset=utf-8", Body: body, Header: h}
}
