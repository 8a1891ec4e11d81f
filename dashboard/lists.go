package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// One template (list.html) shows every list that is only a table: a heading, filters (the API's
// query parameters), headers, rows of cells, and the next page's link. Each list maps its items to
// rows (payments, subscriptions, e-mails below).

type listView struct {
	Heading, Action, Empty string
	Note                   string // under the heading, if any
	Filters                []filterField
	Headers                []string
	Rows                   [][]cell
	Next                   string
}

// filterField is one filter: a text input, or a select when it has options (and "any", unless
// Required: one of the options is always chosen). Param is the API's query parameter its errors
// name.
type filterField struct {
	Name, Param, Label, Value string
	Options                   []string
	Required                  bool
}

type cell struct {
	Text, Href string
	Code       bool
	Sub        string // secondary text after it (a customer's ID after its name)
}

func code(text, href string) cell { return cell{Text: text, Href: href, Code: true} }
func text(t string) cell          { return cell{Text: t} }
func when(t time.Time) cell       { return cell{Text: t.Format("2006-01-02 15:04")} }

// customerCell is a customer of account a's list: its name linked to its page, its ID beside (the
// ID alone, linked, when it has no name).
func customerCell(a, id string, names map[string]string) cell {
	href := a + "/customers/" + url.PathEscape(id)
	if n := names[id]; n != "" {
		return cell{Text: n, Href: href, Sub: id}
	}
	return code(id, href)
}

// withNames reads the names of the customers of a list's page (err: the list's own error, kept).
func (s *Server) withNames(r *http.Request, m remit.MerchantAccount, ids []string, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	return s.customerNames(r, m.ID, ids)
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

// ownList answers a list shown by a template of its own (name, also its path under the account):
// the engine's error (listAnswered); otherwise the page p with the next page's link (the query's
// parameters keep).
func (s *Server) ownList(w http.ResponseWriter, r *http.Request, name string, p page, next *string, err error, keep ...string) {
	if !s.listAnswered(w, r, name, &p, err) {
		return
	}
	p.NextPage = nextLink(accountPath(p.Account)+"/"+name, next, r.URL.Query(), keep...)
	s.render(w, r, http.StatusOK, name, p)
}

// listPage answers a list: the engine's field errors next to their filters, an unknown account as
// 404; otherwise the rows and, with a next cursor, the next page's link (the same filters).
func (s *Server) listPage(w http.ResponseWriter, r *http.Request, p page, v listView, next *string, err error) {
	p.List = &v
	if !s.listAnswered(w, r, "list", &p, err) {
		return
	}
	keep := []string{"limit"}
	for _, f := range v.Filters {
		keep = append(keep, f.Name)
	}
	if next != nil {
		p.List.Next = nextLink(v.Action, next, r.URL.Query(), keep...)
	}
	s.render(w, r, http.StatusOK, "list", p)
}

// accountBase is the base of a page of account m for the signed-in operator: its title, the
// operator (CanAct when an admin), the account and its environment.
func (s *Server) accountBase(r *http.Request, m remit.MerchantAccount, title string) page {
	op := operatorOf(r)
	return page{Title: title, Operator: &op, Environment: m.Environment, Account: m, CanAct: op.Role == remit.OperatorAdmin}
}

// loadResource reads with get the resource of the path's account whose ID the path's param holds,
// for the signed-in operator, and the base of its page (accountBase); false: answered (answered).
func loadResource[T any](s *Server, w http.ResponseWriter, r *http.Request, param string,
	get func(ctx context.Context, o remit.Operator, merchantAccountID, id string) (remit.MerchantAccount, T, error)) (page, T, bool) {
	m, v, err := get(r.Context(), operatorOf(r), r.PathValue("account"), r.PathValue(param))
	if s.answered(w, r, err) {
		return page{}, v, false
	}
	return s.accountBase(r, m, ""), v, true
}

// show shows the resource load reads with the template tmpl, once fill has added the rest of its
// page (an error of fill answered: answered).
func (s *Server) show(w http.ResponseWriter, r *http.Request, load loader, tmpl string, fill func(p *page) error) {
	p, ok := load(s, w, r)
	if !ok || s.answered(w, r, fill(&p)) {
		return
	}
	s.render(w, r, http.StatusOK, tmpl, p)
}

// doneNotice is a fill of show: the notice after the resource's action, when the query's done is
// done.
func doneNotice(r *http.Request, done, notice string) func(p *page) error {
	return func(p *page) error {
		if r.URL.Query().Get("done") == done {
			p.Notice = notice
		}
		return nil
	}
}

// nextLink is the link to a list's next page (cursor next, "" when none) with the query parameters
// keep of the page asked for.
func nextLink(base string, next *string, q url.Values, keep ...string) string {
	if next == nil {
		return ""
	}
	v := url.Values{"cursor": {*next}}
	for _, k := range keep {
		if s := q.Get(k); s != "" {
			v.Set(k, s)
		}
	}
	return base + "?" + v.Encode()
}

func accountPath(m remit.MerchantAccount) string {
	return "/dashboard/accounts/" + url.PathEscape(m.ID)
}

// resourcePath is the page of the account's resource of a kind (its path segment: "invoices")
// with the ID.
func resourcePath(account, kind, id string) string {
	return "/dashboard/accounts/" + url.PathEscape(account) + "/" + kind + "/" + url.PathEscape(id)
}

// customerFilter is a list's filter by customer ID.
func customerFilter(value string) filterField {
	return filterField{Name: "customer", Param: "customerId", Label: "Customer ID", Value: value}
}

// statusFilter is a list's filter by status, one of options.
func statusFilter(value string, options []string) filterField {
	return filterField{Name: "status", Param: "status", Label: "Status", Value: value, Options: options}
}

// customerList answers a table list (listPage) of account m's items that each belong to a
// customer (of): its page, titled v's heading, at the account's path under; the customers' names
// read (the list's error kept) for the rows row makes (a: the account's path).
func customerList[T any](s *Server, w http.ResponseWriter, r *http.Request, m remit.MerchantAccount, under string, v listView,
	items []T, next *string, err error, of func(T) string, row func(a string, it T, names map[string]string) []cell) {
	names, err := s.withNames(r, m, customerIDs(items, of), err)
	a := accountPath(m)
	v.Action = a + "/" + under
	for _, it := range items {
		v.Rows = append(v.Rows, row(a, it, names))
	}
	s.listPage(w, r, s.accountBase(r, m, v.Heading), v, next, err)
}

// paymentsPage lists payments, newest first, by status and customer.
func (s *Server) paymentsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := remit.PaymentQuery{Status: q.Get("status"), CustomerID: q.Get("customer"), ListQuery: remit.ListQueryOf(q.Get)}
	m, l, err := s.eng.AccountPayments(r.Context(), operatorOf(r), r.PathValue("account"), in)
	v := listView{Heading: "Payments", Empty: "No payment matches.",
		Filters: []filterField{statusFilter(in.Status, statusNames(remit.PaymentStatuses)), customerFilter(in.CustomerID)},
		Headers: []string{"Payment", "Invoice", "Customer", "Status", "Amount", "Why", "Created"}}
	customerList(s, w, r, m, "payments", v, l.Items, l.NextCursor, err, func(p remit.Payment) string { return p.CustomerID },
		func(a string, p remit.Payment, names map[string]string) []cell {
			why := ""
			if p.FailureMessage != nil {
				why = *p.FailureMessage
			}
			return []cell{code(p.PaymentID, ""), code(p.InvoiceID, a+"/invoices/"+url.PathEscape(p.InvoiceID)),
				customerCell(a, p.CustomerID, names), text(string(p.Status)), text(money(p.Amount, p.Currency)),
				text(why), when(p.CreatedAt)}
		})
}

// subscriptionsPage lists subscriptions, newest first, by status and customer.
func (s *Server) subscriptionsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := remit.SubscriptionQuery{Status: q.Get("status"), CustomerID: q.Get("customer"), ListQuery: remit.ListQueryOf(q.Get)}
	m, l, err := s.eng.AccountSubscriptions(r.Context(), operatorOf(r), r.PathValue("account"), in)
	v := listView{Heading: "Subscriptions", Empty: "No subscription matches.",
		Filters: []filterField{statusFilter(in.Status, statusNames(remit.SubscriptionStatuses)), customerFilter(in.CustomerID)},
		Headers: []string{"Subscription", "Customer", "Status", "Current period ends", "Created"}}
	customerList(s, w, r, m, "subscriptions", v, l.Items, l.NextCursor, err, func(sub remit.Subscription) string { return sub.CustomerID },
		func(a string, sub remit.Subscription, names map[string]string) []cell {
			return []cell{code(sub.SubscriptionID, a+"/subscriptions/"+url.PathEscape(sub.SubscriptionID)),
				customerCell(a, sub.CustomerID, names), text(string(sub.Status)),
				text(sub.CurrentPeriodEnd.Format("2006-01-02")), when(sub.CreatedAt)}
		})
}

// emailsPage lists the e-mails sent (or not) to customers, newest first, by customer and type.
func (s *Server) emailsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := remit.EmailQuery{CustomerID: q.Get("customer"), Type: q.Get("type"), ListQuery: remit.ListQueryOf(q.Get)}
	m, l, err := s.eng.AccountEmails(r.Context(), operatorOf(r), r.PathValue("account"), in)
	v := listView{Heading: "E-mails", Empty: "No e-mail matches.",
		Filters: []filterField{customerFilter(in.CustomerID), {Name: "type", Param: "type", Label: "Type", Value: in.Type}},
		Headers: []string{"E-mail", "Customer", "Type", "To", "Subject", "Status", "Created"}}
	customerList(s, w, r, m, "emails", v, l.Items, l.NextCursor, err, func(e remit.Email) string { return e.CustomerID },
		func(a string, e remit.Email, names map[string]string) []cell {
			to := "–"
			if e.To != nil {
				to = *e.To
			}
			return []cell{code(e.EmailID, ""), customerCell(a, e.CustomerID, names),
				text(string(e.Type)), text(to), text(e.Subject), text(string(e.Status)), when(e.CreatedAt)}
		})
}

// statusNames lists statuses as strings.
func statusNames[T ~string](ss []T) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// receiptsPage lists payment receipts, newest first, by customer and status, offset-paged as the
// API pages them.
func (s *Server) receiptsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := remit.ReceiptQuery{CustomerID: q.Get("customer"), Status: q.Get("status"), Limit: q.Get("limit"), Offset: q.Get("offset")}
	m, l, err := s.eng.AccountReceipts(r.Context(), operatorOf(r), r.PathValue("account"), in)
	v := listView{Heading: "Receipts", Empty: "No receipt matches.",
		Filters: []filterField{statusFilter(in.Status, remit.ReceiptStatuses), customerFilter(in.CustomerID)},
		Headers: []string{"Receipt", "Number", "Invoice", "Customer", "Status", "Amount", "Created"}}
	if err == nil && l.HasMore { // the next offset, the same filters
		next := url.Values{"offset": {strconv.FormatInt(l.Offset+int64(l.Limit), 10)}}
		for _, k := range []string{"status", "customer", "limit"} {
			if s := q.Get(k); s != "" {
				next.Set(k, s)
			}
		}
		v.Next = accountPath(m) + "/receipts?" + next.Encode()
	}
	customerList(s, w, r, m, "receipts", v, l.Items, nil, err, func(rc remit.PaymentReceipt) string { return rc.CustomerID },
		func(a string, rc remit.PaymentReceipt, names map[string]string) []cell {
			return []cell{code(rc.ReceiptID, ""), text(rc.ReceiptNumber), code(rc.InvoiceID, a+"/invoices/"+url.PathEscape(rc.InvoiceID)),
				customerCell(a, rc.CustomerID, names), text(string(rc.Status)), text(money(rc.Amount, rc.Currency)), when(rc.CreatedAt)}
		})
}

// settlementsPage lists an account's settlements, newest first, by scope (open, closed, paid).
func (s *Server) settlementsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	scope := q.Get("scope")
	m, l, err := s.eng.AccountSettlements(r.Context(), operatorOf(r), r.PathValue("account"), scope, q.Get("limit"), q.Get("cursor"))
	v := listView{Heading: "Settlements", Action: accountPath(m) + "/settlements", Empty: "No settlement matches.",
		Filters: []filterField{{Name: "scope", Param: "scope", Label: "Which", Value: scope, Options: []string{"open", "closed", "paid"}}},
		Headers: []string{"Settlement", "Status", "Period ends", "Gross", "Net", "Payout"}}
	for _, st := range l.Items {
		payout := "–"
		if st.PayoutID != nil {
			payout = *st.PayoutID
		}
		v.Rows = append(v.Rows, []cell{code(st.SettlementID, ""), text(string(st.Status)), text(st.PeriodEnd.Format("2006-01-02")),
			text(money(st.GrossAmount, st.Currency)), text(money(st.NetAmount, st.Currency)), code(payout, "")})
	}
	s.listPage(w, r, s.accountBase(r, m, "Settlements"), v, l.NextCursor, err)
}

// usagePage shows a customer's usage of a meter, a bar per day over the last 30 days.
func (s *Server) usagePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := listFilter{Customer: q.Get("customer"), Type: q.Get("meter")}
	v, err := s.eng.UsageOverview(r.Context(), operatorOf(r), r.PathValue("account"), f.Customer, f.Type)
	if s.answered(w, r, err) {
		return
	}
	p := s.accountBase(r, v.Account, "Usage")
	p.Usage, p.Filter = v, f
	if v.Meter != nil {
		p.Chart = chartOf(v.Days, "", v.Now, quantity)
		p.Chart.Title, p.Chart.ID = "Usage of "+v.Meter.MeterID+" per day ("+v.Meter.Aggregation+")", "usage"
		p.Chart.TotalLabel = quantity(v.Total)
	}
	s.render(w, r, http.StatusOK, "usage", p)
}
