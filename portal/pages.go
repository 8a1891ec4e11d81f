package portal

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/remit-billing/remit"
)

// theme is the merchant's colour as a stylesheet (the CSP allows no inline style).
func (s *Server) theme(w http.ResponseWriter, _ *http.Request, pc remit.PortalContext) {
	color := "#1f6feb"
	if c := pc.Config.Branding.PrimaryColor; c != nil {
		color = *c // #rrggbb: the configuration's rule
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	fmt.Fprintf(w, ":root { --brand: %s; }\n", color)
}

// subscriptionRow is a subscription on the overview, with what its next renewal would bill.
type subscriptionRow struct {
	remit.Subscription
	Upcoming *remit.Invoice
}

// overview is the portal's home: the customer's subscriptions, each with its next invoice and that
// invoice's lines (usage lines with the quantity used so far), and the prepaid balance.
func (s *Server) overview(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	subs, err := s.eng.PortalSubscriptions(r.Context(), pc)
	if s.failed(w, r, &pc, err) {
		return
	}
	rows := make([]subscriptionRow, len(subs))
	for i, sub := range subs {
		rows[i].Subscription = sub
		if sub.Status.Renews() && sub.CancelAt == nil {
			inv, ok, err := s.eng.PortalUpcoming(r.Context(), pc, sub.SubscriptionID)
			if s.failed(w, r, &pc, err) {
				return
			}
			if ok {
				rows[i].Upcoming = &inv
			}
		}
	}
	balances, err := s.eng.PortalBalance(r.Context(), pc)
	if s.failed(w, r, &pc, err) {
		return
	}
	v := overviewView{Subscriptions: rows, Balances: balances}
	if remit.PortalAllows(pc.Config, remit.PortalFeaturePaymentMethods) == nil {
		methods, err := s.eng.PortalPaymentMethods(r.Context(), pc)
		if s.failed(w, r, &pc, err) {
			return
		}
		for _, m := range methods {
			if len(m.DefaultForBillingAccountIDs) > 0 && v.DefaultMethod == "" {
				v.DefaultMethod = remit.CardLabel(m.Brand, m.Last4)
			}
		}
	}
	s.render(w, r, http.StatusOK, "overview.html", s.view(r, &pc, "portal.overview.title", v))
}

// overviewView is the overview: the subscriptions, the prepaid balance per currency, the card
// charged by default.
type overviewView struct {
	Subscriptions []subscriptionRow
	Balances      []remit.CurrencyBalance
	DefaultMethod string
}

// keep undoes a cancel at the period's end (the overview's form).
func (s *Server) keep(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	_, err := s.eng.PortalKeepSubscription(r.Context(), pc, r.PathValue("subscription"))
	s.formDone(w, r, &pc, err, home+"?done=kept")
}

// cancelPage is the confirmation before a cancel: what will happen, in words.
func (s *Server) cancelPage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	s.subscriptionPage(w, r, &pc, remit.PortalFeatureCancel, "cancel.html", "portal.cancel.title")
}

// subscriptionPage renders a confirmation page (tmpl, its title's key) of one of the customer's
// subscriptions ({subscription}), when the configuration turns its feature on.
func (s *Server) subscriptionPage(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext, feature, tmpl, title string) {
	if sub, ok := loaded(s, w, r, pc, feature, s.pathSubscription(r)); ok {
		s.render(w, r, http.StatusOK, tmpl, s.view(r, pc, title, sub))
	}
}

// pathSubscription reads the customer's subscription the path names ({subscription}).
func (s *Server) pathSubscription(r *http.Request) func(context.Context, remit.PortalContext) (remit.Subscription, error) {
	return func(ctx context.Context, pc remit.PortalContext) (remit.Subscription, error) {
		return s.eng.PortalSubscription(ctx, pc, r.PathValue("subscription"))
	}
}

// cancel cancels the subscription (the form of cancelPage).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	_, err := s.eng.PortalCancelSubscription(r.Context(), pc, r.PathValue("subscription"))
	s.formDone(w, r, &pc, err, home+"?done=canceled")
}

// invoicesPage is the invoice history: number, date, total and state, each invoice's hosted page
// (its PDF is there) and, for an open one, the hosted page's pay route.
func (s *Server) invoicesPage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	invs, ok := s.historyInvoices(w, r, &pc)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "invoices.html", s.view(r, &pc, "portal.invoices.title", invs))
}

// historyInvoices loads the customer's invoices for the invoice history's routes; false when the
// configuration turns the history off or the load failed, having answered.
func (s *Server) historyInvoices(w http.ResponseWriter, r *http.Request, pc *remit.PortalContext) ([]remit.Invoice, bool) {
	return loaded(s, w, r, pc, remit.PortalFeatureInvoiceHistory, s.eng.PortalInvoices)
}

// payInvoice sends the browser to one of the customer's open invoices' hosted page, which pays it
// and links back to the invoice history; another customer's invoice, or one not to pay, is 404.
func (s *Server) payInvoice(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	invs, ok := s.historyInvoices(w, r, &pc)
	if !ok {
		return
	}
	for _, inv := range invs {
		if inv.InvoiceID == r.PathValue("invoice") && inv.PaymentURL != nil {
			http.Redirect(w, r, *inv.PaymentURL+"&back="+url.QueryEscape(home+"/invoices"), http.StatusSeeOther)
			return
		}
	}
	s.message(w, r, &pc, http.StatusNotFound, "portal.error.not_found")
}

// pausePage is the confirmation before a pause or a resume ({action}: pause, resume; anything
// else has no page).
func (s *Server) pausePage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	action := r.PathValue("action")
	if action != "pause" && action != "resume" {
		s.message(w, r, &pc, http.StatusNotFound, "portal.error.not_found")
		return
	}
	s.subscriptionPage(w, r, &pc, remit.PortalFeaturePause, "pause.html", "portal."+action+".title")
}

// pause pauses or resumes the subscription (the form of pausePage).
func (s *Server) pause(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	action := r.PathValue("action")
	if action != "pause" && action != "resume" {
		s.message(w, r, &pc, http.StatusNotFound, "portal.error.not_found")
		return
	}
	_, err := s.eng.PortalPauseSubscription(r.Context(), pc, r.PathValue("subscription"), action == "pause")
	s.formDone(w, r, &pc, err, home+"?done="+action+"d")
}

// detailsFields are the billing details the page edits; the address's are address.line1 and so on
// (remit.PortalAddressFields).
var detailsFields = []string{"name", "email", "preferredLocale"}

// detailsPage shows the billing details the configuration lets the customer edit.
func (s *Server) detailsPage(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	if s.pageOff(w, r, &pc, remit.PortalFeatureCustomerUpdate) {
		return
	}
	s.render(w, r, http.StatusOK, "details.html", s.view(r, &pc, "portal.details.title", nil))
}

// details saves the billing details of the form (the allowed fields it carries).
func (s *Server) details(w http.ResponseWriter, r *http.Request, pc remit.PortalContext) {
	fields := map[string]string{}
	for _, f := range detailsFields {
		if v, ok := r.PostForm[f]; ok {
			fields[f] = v[0]
		}
	}
	for _, f := range remit.PortalAddressFields {
		if v, ok := r.PostForm["address."+f]; ok {
			fields["address."+f] = v[0]
		}
	}
	_, err := s.eng.PortalUpdateCustomer(r.Context(), pc, fields)
	if remit.ErrorCode(err) == remit.EInvalid {
		s.render(w, r, http.StatusUnprocessableEntity, "details.html", s.view(r, &pc, "portal.details.title", "invalid"))
		return
	}
	s.formDone(w, r, &pc, err, home+"?done=details")
}
