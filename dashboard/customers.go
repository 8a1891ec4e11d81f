package dashboard

import (
	"context"
	"net/http"
	"strings"

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

// searchList answers a list shown by a template of its own (name, also its path under the
// account) with one text filter, the query's param (trimmed): the account's list read by list with
// it and put on the page titled title by fill, then ownList (which keeps param and limit).
func searchList[T any](s *Server, w http.ResponseWriter, r *http.Request, name, title, param string,
	list func(ctx context.Context, o remit.Operator, merchantAccountID, filter, limit, cursor string) (remit.MerchantAccount, remit.List[T], error),
	fill func(p *page, filter string, items []T)) {
	q := r.URL.Query()
	filter := strings.TrimSpace(q.Get(param))
	m, l, err := list(r.Context(), operatorOf(r), r.PathValue("account"), filter, q.Get("limit"), q.Get("cursor"))
	p := s.accountBase(r, m, title)
	fill(&p, filter, l.Items)
	s.ownList(w, r, name, p, l.NextCursor, err, param, "limit")
}
