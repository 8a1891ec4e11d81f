package dashboard

import (
	"net/http"
	"strings"
)

// customersPage lists an account's customers with the API's paging; q searches them.
func (s *Server) customersPage(w http.ResponseWriter, r *http.Request) {
	op := operatorOf(r)
	q := r.URL.Query()
	search := strings.TrimSpace(q.Get("q"))
	m, list, err := s.eng.ListCustomers(r.Context(), op, r.PathValue("account"), search, q.Get("limit"), q.Get("cursor"))
	p := page{Title: "Customers", Operator: &op, Environment: m.Environment, Account: m, Filter: listFilter{Search: search}}
	if !s.listAnswered(w, r, "customers", &p, err) {
		return
	}
	p.Customers = list.Items
	p.NextPage = nextLink(accountPath(m)+"/customers", list.NextCursor, q, "q", "limit")
	s.render(w, r, http.StatusOK, "customers", p)
}

// customerPage shows a customer and what belongs to it: invoices, payments, subscriptions.
func (s *Server) customerPage(w http.ResponseWriter, r *http.Request) {
	op := operatorOf(r)
	v, err := s.eng.Customer(r.Context(), op, r.PathValue("account"), r.PathValue("customer"))
	if s.answered(w, r, err) {
		return
	}
	s.render(w, r, http.StatusOK, "customer", page{Title: v.Customer.Name, Operator: &op, Environment: v.Account.Environment, Account: v.Account, View: v})
}
