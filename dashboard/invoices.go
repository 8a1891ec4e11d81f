package dashboard

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/remit-billing/remit"
)

// findInvoice opens the invoice a find form names.
func (s *Server) findInvoice(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account, invoice := strings.TrimSpace(q.Get("account")), strings.TrimSpace(q.Get("invoice"))
	if account == "" || invoice == "" {
		http.Redirect(w, r, overviewPath, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, invoicePath(account, invoice), http.StatusSeeOther)
}

func invoicePath(account, invoice string) string {
	return "/dashboard/accounts/" + url.PathEscape(account) + "/invoices/" + url.PathEscape(invoice)
}

// loadInvoice reads the invoice the path names, for the signed-in operator (false: answered).
func (s *Server) loadInvoice(w http.ResponseWriter, r *http.Request) (page, bool) {
	op := operatorOf(r)
	m, inv, err := s.eng.OperatorInvoice(r.Context(), op, r.PathValue("account"), r.PathValue("invoice"))
	if remit.ErrorCode(err) == remit.ENotFound {
		s.message(w, r, http.StatusNotFound, "Not found", remit.ErrorMessage(err))
		return page{}, false
	}
	if err != nil {
		s.fail(w, r, err)
		return page{}, false
	}
	return page{Title: "Invoice " + inv.InvoiceID, Operator: &op, Environment: m.Environment, Account: m, Invoice: inv,
		CanAct: op.Role == remit.OperatorAdmin}, true
}

// invoicePage shows an invoice.
func (s *Server) invoicePage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadInvoice(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("done") == "voided" {
		p.Notice = "The invoice is void."
	}
	s.render(w, r, http.StatusOK, "invoice", p)
}

// voidPage asks an admin to confirm, and shows the API request that does the same.
func (s *Server) voidPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.loadInvoice(w, r)
	if !ok || !s.admin(w, r, p) {
		return
	}
	p.Key = newToken()
	s.render(w, r, http.StatusOK, "void", p)
}

// voidInvoice voids the invoice through the engine, under the form's Idempotency-Key.
func (s *Server) voidInvoice(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	p, ok := s.loadInvoice(w, r)
	if !ok || !s.admin(w, r, p) {
		return
	}
	_, err := s.eng.VoidInvoice(r.Context(), *p.Operator, p.Account.ID, p.Invoice.InvoiceID, r.PostFormValue("key"))
	switch c := remit.ErrorCode(err); {
	case err == nil:
		http.Redirect(w, r, invoicePath(p.Account.ID, p.Invoice.InvoiceID)+"?done=voided", http.StatusSeeOther)
	case c == remit.EConflict || c == remit.ENotFound || c == remit.EForbidden || c == remit.EInvalid:
		p.Error, p.Key = remit.ErrorMessage(err), newToken()
		s.render(w, r, statusOf(c), "void", p)
	default:
		s.fail(w, r, err)
	}
}

// admin answers 403 for a viewer (false).
func (s *Server) admin(w http.ResponseWriter, r *http.Request, p page) bool {
	if p.CanAct {
		return true
	}
	s.message(w, r, http.StatusForbidden, "Not allowed", "Viewers cannot act; ask an admin of your organization.")
	return false
}

// statusOf is the HTTP status of an engine error code, as the API answers it.
func statusOf(c remit.Code) int {
	switch c {
	case remit.EConflict:
		return http.StatusConflict
	case remit.ENotFound:
		return http.StatusNotFound
	case remit.EForbidden:
		return http.StatusForbidden
	case remit.EInvalid:
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}
