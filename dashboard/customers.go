package dashboard

import (
	"net/http"
	"strings"
)

// customersPage lists an account's customers with the API's paging; q searches them.
func (s *Server) customersPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := listFilter{Search: strings.TrimSpace(q.Get("q"))}
	m, l, err := s.eng.ListCustomers(r.Context(), operatorOf(r), r.PathValue("account"), f.Search, q.Get("limit"), q.Get("cursor"))
	p := s.accountBase(r, m, "Customers")
	p.Filter, p.Customers = f, l.Items
	s.ownList(w, r, "customers", p, l.NextCursor, err, "q", "limit")
}

// customerPage shows a customer and what belongs to it: invoices, payments, subscriptions.
func (s *Server) customerPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.eng.Customer(r.Context(), operatorOf(r), r.PathValue("account"), r.PathValue("customer"))
	if s.answered(w, r, err) {
		return
	}
	p := s.accountBase(r, v.Account, v.Customer.Name)
	p.View = v
	s.render(w, r, http.StatusOK, "customer", p)
}
