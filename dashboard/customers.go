package dashboard

import (
	"net/http"

	"github.com/remit-billing/remit"
)

// customersPage lists an account's customers with the API's paging; q searches them.
func (s *Server) customersPage(w http.ResponseWriter, r *http.Request) {
	searchList(s, w, r, "customers", "Customers", "q", s.eng.ListCustomers, func(p *page, search string, items []remit.Customer) {
		p.Filter.Search, p.Customers = search, items
	})
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
