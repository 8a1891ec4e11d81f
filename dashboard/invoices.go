package dashboard

import (
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/locale"
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

func invoicePath(account, invoice string) string { return resourcePath(account, "invoices", invoice) }

// loadInvoice reads the invoice the path names, for the signed-in operator (false: answered).
func (s *Server) loadInvoice(w http.ResponseWriter, r *http.Request) (page, bool) {
	p, inv, ok := loadResource(s, w, r, "invoice", s.eng.OperatorInvoice)
	if !ok {
		return p, false
	}
	p.Title, p.Invoice, p.Actions = "Invoice "+inv.InvoiceID, inv, invoiceActions
	if inv.HostedInvoiceURL != nil {
		p.HostedPage = *inv.HostedInvoiceURL
	}
	return p, true
}

// invoicePage shows an invoice.
func (s *Server) invoicePage(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, (*Server).loadInvoice, "invoice", func(p *page) (err error) {
		if p.Belongs, err = s.eng.InvoiceOverview(r.Context(), *p.Operator, p.Account.ID, p.Invoice.InvoiceID); err != nil {
			return err
		}
		if p.Names, err = s.customerNames(r, p.Account.ID, []string{p.Invoice.CustomerID}); err != nil {
			return err
		}
		// What was paid, offset, refunded and credited and what remains: the rows its PDF and its
		// hosted page show.
		p.Totals = document.InvoiceTotals(locale.For("en"), document.Invoice{Invoice: p.Invoice, Coupons: p.Invoice.CouponIDs})
		if a, ok := findAction(r.URL.Query().Get("done")); ok {
			p.Notice = a.Done
		}
		if n := r.URL.Query().Get("credited"); creditNoteNumber.MatchString(n) { // a number, not a message to show
			p.Notice = "Credit note " + n + " is issued."
		}
		return nil
	})
}

// invoiceAction is an action an admin may take on an invoice, and what its confirmation says.
type invoiceAction struct {
	Slug    string              // in the path, and the engine's name for it
	Label   string              // the invoice page's link
	Title   string              // the confirmation's heading
	Explain string              // what it does, in words (%s: the amount due)
	API     string              // the API route that does the same
	Body    string              // the API request's body, if any
	Done    string              // the notice after it
	When    remit.InvoiceStatus // the status it applies to
	Button  string              // the confirmation's button
}

// invoiceActions are the invoice page's actions, in the order shown.
var invoiceActions = []invoiceAction{
	{Slug: "void", Label: "Void this invoice…", Title: "Void invoice", Button: "Void the invoice", When: remit.InvoiceOpen,
		Explain: "Voiding marks the open invoice void: its %s is no longer due, no payment is taken for it, and the event invoice.voided is sent to your webhook endpoints. It cannot be undone.",
		API:     "/void", Done: "The invoice is void."},
	{Slug: "pay-out-of-band", Label: "Mark paid outside Remit…", Title: "Mark paid outside Remit: invoice", Button: "Mark it paid", When: remit.InvoiceOpen,
		Explain: "Records that the customer paid the open invoice's %s outside Remit (a bank transfer, a cheque): the invoice becomes paid with no charge, and the event invoice.paid is sent to your webhook endpoints.",
		API:     "/pay", Body: `{"outOfBand": true}`, Done: "The invoice is paid (outside Remit)."},
}

// invoiceSlug is an invoice action's slug.
func invoiceSlug(a invoiceAction) string { return a.Slug }

func findAction(slug string) (invoiceAction, bool) { return bySlug(invoiceActions, slug, invoiceSlug) }

// invoiceActionPages are the invoice actions' confirmation page and form.
var invoiceActionPages = resourceActions[invoiceAction, remit.Invoice]{
	find: findAction, slug: invoiceSlug, load: (*Server).loadInvoice, confirm: invoiceConfirmation, act: Engine.InvoiceAction,
	resource: func(p page) (string, string) {
		return p.Invoice.InvoiceID, invoicePath(p.Account.ID, p.Invoice.InvoiceID)
	},
}

// invoiceConfirmation is the confirmation page of an invoice action.
func invoiceConfirmation(a invoiceAction, p page) confirmation {
	inv, base := p.Invoice, invoicePath(p.Account.ID, p.Invoice.InvoiceID)
	name := inv.InvoiceID
	if inv.Number != nil {
		name = *inv.Number
	}
	return confirmation{Title: a.Title + " " + name + "?", Explain: fmt.Sprintf(a.Explain, money(inv.AmountDue, inv.Currency)) + " Invoice " + inv.InvoiceID + ".",
		Back: base, BackLabel: "Back to the invoice", API: "/v1/invoices/" + inv.InvoiceID + a.API, Body: a.Body, Post: base + "/" + a.Slug, Button: a.Button}
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

// invoicesPage lists an account's invoices with the API's paging; status and customer filter it.
func (s *Server) invoicesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := listFilter{Status: q.Get("status"), Customer: strings.TrimSpace(q.Get("customer"))}
	m, l, err := s.eng.ListInvoices(r.Context(), operatorOf(r), r.PathValue("account"), f.Customer, f.Status, q.Get("limit"), q.Get("cursor"))
	p := s.accountBase(r, m, "Invoices")
	p.Filter, p.Statuses, p.Invoices = f, invoiceStatuses, l.Items
	p.Names, err = s.withNames(r, m, customerIDs(l.Items, func(inv remit.Invoice) string { return inv.CustomerID }), err)
	s.ownList(w, r, "invoices", p, l.NextCursor, err, "status", "customer", "limit")
}

var creditNoteNumber = regexp.MustCompile(`^CN-[0-9]{1,12}$`)

// listFilter is what a list page was asked for.
type listFilter struct{ Status, Customer, Type, Search string }

var invoiceStatuses = []string{"draft", "open", "paid", "void", "uncollectible"}

// accountPage is a merchant account's home: revenue per day (a chart), open invoices, failed
// payments, and its lists.
func (s *Server) accountPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.eng.AccountOverview(r.Context(), operatorOf(r), r.PathValue("account"))
	if s.answered(w, r, err) {
		return
	}
	p := s.accountBase(r, v.Account, v.Account.DisplayName)
	p.Home, p.Decisions = v, decisions
	p.Chart = chartOf(v.Revenue, v.Account.DefaultCurrency, v.Now, moneyIn(v.Account.DefaultCurrency))
	p.Chart.Title, p.Chart.ID = "Revenue per day in "+v.Account.DefaultCurrency, "revenue"
	p.MRR = chartOf(v.MRR, v.Account.DefaultCurrency, v.Now, moneyIn(v.Account.DefaultCurrency))
	p.MRR.Title, p.MRR.ID = "Monthly recurring revenue in "+v.Account.DefaultCurrency, "mrr"
	if len(p.MRR.Bars) > 0 {
		p.MRR.TotalLabel = moneyIn(v.Account.DefaultCurrency)(p.MRR.Bars[len(p.MRR.Bars)-1].Amount) + " today" // a rate: today's, not a sum
	}
	if p.Names, err = s.customerNames(r, v.Account.ID, customerIDs(v.FailedPayments.Items, func(p remit.Payment) string { return p.CustomerID })); s.answered(w, r, err) {
		return
	}
	if d, ok := findDecision(r.URL.Query().Get("decided")); ok {
		p.Notice = "Decided: " + d.Button + "; the account is now " + string(v.Account.Status) + "."
	}
	s.render(w, r, http.StatusOK, "account", p)
}

// invoicePDF answers an invoice's PDF, as the API does.
func (s *Server) invoicePDF(w http.ResponseWriter, r *http.Request) {
	d, err := s.eng.InvoiceDocument(r.Context(), operatorOf(r), r.PathValue("account"), r.PathValue("invoice"))
	if remit.ErrorCode(err) == remit.ENotFound {
		s.message(w, r, http.StatusNotFound, "Not found", remit.ErrorMessage(err))
		return
	}
	var pdf []byte
	if err == nil {
		pdf, err = document.InvoicePDF(d)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": document.InvoiceFileName(d)}))
	_, _ = w.Write(pdf)
}

// customerIDs are the customers of a page's items.
func customerIDs[T any](items []T, of func(T) string) []string {
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, of(it))
	}
	return ids
}
