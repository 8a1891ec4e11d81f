package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// The lists of every collection (docs/api-conventions.md "Pagination"): each filter of each list,
// the creation range [createdFrom, createdTo), a bad value or an unknown parameter 422 naming it,
// another merchant account's rows never listed, and pages that neither skip nor repeat an item
// while rows are inserted between them.

// listFixture is what seedLists made: the time that splits its two phases (every row of the first
// was created before it, every row of the second at or after it), the IDs made in each, and the
// second organization (whose rows, all with IDs starting "b-", the first must never list).
type listFixture struct {
	split          string
	first, second  map[string]bool
	other          testkit.Tenant
	pm1, pm2       string // c1's payment methods: pm1 the default of ba1, pm2 nobody's
	subscription   string // the subscription q2 started
	subInvoice     string // its first invoice
	usageStart     time.Time
	paidNumber     string // inv2's number
	sandboxAccount string
}

// create posts body to path and fails unless it answers 200 or 201.
func create(t testing.TB, e *testkit.Env, path string, body map[string]any, opts ...testkit.Opt) map[string]any {
	t.Helper()
	r := e.Do("POST", path, body, opts...)
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.Data()
}

// seedLists makes rows of every collection in two phases an hour apart on the sandbox clock, and
// the same kinds of rows in another organization.
func seedLists(t *testing.T, e *testkit.Env) listFixture {
	t.Helper()
	f := listFixture{first: map[string]bool{}, second: map[string]bool{}, sandboxAccount: e.Tenant.Sandbox}
	f.other = e.NewTenant("Other", false)
	phase := f.first
	mk := func(path, idField string, body map[string]any, opts ...testkit.Opt) string {
		t.Helper()
		id, _ := create(t, e, path, body, opts...)[idField].(string)
		phase[id] = true
		return id
	}
	now := func() time.Time {
		at, err := time.Parse(time.RFC3339Nano, e.Must(200, "GET", "/v1/test-helpers/clock", nil).Data()["now"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	f.usageStart = now().Add(-3 * time.Hour).Truncate(time.Second)
	usage := func(id, customer, meter string, minutes int, as ...testkit.Opt) {
		mk("/v1/usage-events", "eventId", map[string]any{"eventId": id, "customerId": customer, "meterId": meter, "quantity": 2,
			"timestamp": f.usageStart.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)}, as...)
	}
	for _, o := range []struct {
		prefix string
		as     []testkit.Opt
	}{{"b-", []testkit.Opt{testkit.As(f.other)}}, {"", nil}} {
		p, as := o.prefix, o.as
		mk("/v1/customers", "customerId", map[string]any{"customerId": p + "c1", "name": "Alice Martin", "email": "alice@example.com"}, as...)
		mk("/v1/customers", "customerId", map[string]any{"customerId": p + "c2", "name": "Bob Stone", "email": "bob@example.org"}, as...)
		mk("/v1/billing-accounts", "billingAccountId", map[string]any{"billingAccountId": p + "ba1", "customerId": p + "c1", "currency": "USD"}, as...)
		mk("/v1/billing-accounts", "billingAccountId", map[string]any{"billingAccountId": p + "ba2", "customerId": p + "c2", "currency": "USD"}, as...)
		mk("/v1/meters", "meterId", map[string]any{"meterId": p + "m1", "name": "Calls", "aggregation": "sum"}, as...)
		mk("/v1/prices", "priceId", map[string]any{"priceId": p + "p-once", "productId": p + "prodA", "name": "Setup", "priceType": "fixed_one_time",
			"currency": "USD", "unitAmount": 1000}, as...)
		mk("/v1/prices", "priceId", map[string]any{"priceId": p + "p-month", "productId": p + "prodA", "name": "Pro", "priceType": "fixed_recurring",
			"currency": "USD", "unitAmount": 2000, "billingInterval": "month"}, as...)
		mk("/v1/prices", "priceId", map[string]any{"priceId": p + "p-usage", "productId": p + "prodB", "name": "Calls", "priceType": "usage_metered",
			"currency": "USD", "unitAmount": 1, "billingInterval": "month", "meterId": p + "m1"}, as...)
		mk("/v1/coupons", "couponId", map[string]any{"couponId": p + "cp1", "name": "Ten", "percentOff": 10}, as...)
		mk("/v1/quotes", "quoteId", map[string]any{"quoteId": p + "q1", "orderType": "one_off", "customerId": p + "c1", "billingAccountId": p + "ba1",
			"currency": "USD", "lines": []any{map[string]any{"priceId": p + "p-once"}}}, as...)
		line := []any{map[string]any{"priceId": p + "p-once", "quantity": 1}}
		mk("/v1/invoices", "invoiceId", map[string]any{"invoiceId": p + "inv1", "customerId": p + "c1", "billingAccountId": p + "ba1", "currency": "USD", "lines": line}, as...)
		mk("/v1/invoices", "invoiceId", map[string]any{"invoiceId": p + "inv2", "customerId": p + "c2", "billingAccountId": p + "ba2", "currency": "USD", "lines": line}, as...)
		fin := e.Must(200, "POST", "/v1/invoices/"+p+"inv2/finalize", map[string]any{}, as...).Data()
		if p == "" {
			f.paidNumber = fin["number"].(string)
		}
		e.Must(200, "POST", "/v1/invoices/"+p+"inv2/pay", map[string]any{"outOfBand": true}, as...)
		if p != "" {
			lineID := e.Must(200, "GET", "/v1/invoices/"+p+"inv2", nil, as...).Data()["lines"].([]any)[0].(map[string]any)["invoiceLineId"]
			mk("/v1/credit-notes", "creditNoteId", map[string]any{"creditNoteId": p + "cn1", "invoiceId": p + "inv2", "reason": "order_change",
				"lines": []any{map[string]any{"invoiceLineId": lineID, "bucket": "credit", "amount": 100, "description": "Goodwill"}}}, as...)
		}
		mk("/v1/usage-thresholds", "thresholdId", map[string]any{"thresholdId": p + "th1", "customerId": p + "c1", "meterId": p + "m1", "threshold": 100}, as...)
		mk("/v1/webhook-endpoints", "endpointId", map[string]any{"url": "https://hooks.example.com/" + p + "first"}, as...)
		mk("/v1/customers/"+p+"c1/balance/grant", "entryId", map[string]any{"entryId": p + "g1", "currency": "USD", "amount": 500}, as...)
		usage(p+"ev1", p+"c1", p+"m1", 0, as...)
		usage(p+"ev2", p+"c2", p+"m1", 30, as...)
	}
	f.pm1 = card(t, e, "c1", "ba1", true)
	phase[f.pm1] = true

	e.AdvanceClock(3600)
	f.split = now().Format(time.RFC3339Nano)
	phase = f.second
	mk("/v1/customers", "customerId", map[string]any{"customerId": "c3", "name": "alice Cooper", "email": "Alice.C@corp.example"})
	mk("/v1/customers", "customerId", map[string]any{"customerId": "c4", "name": "Zoë Quinn"})
	mk("/v1/billing-accounts", "billingAccountId", map[string]any{"billingAccountId": "ba3", "customerId": "c1", "currency": "EUR"})
	mk("/v1/meters", "meterId", map[string]any{"meterId": "m2", "name": "Seats", "aggregation": "max"})
	mk("/v1/prices", "priceId", map[string]any{"priceId": "p-eur", "productId": "prodB", "name": "Setup (EUR)", "priceType": "fixed_one_time",
		"currency": "EUR", "unitAmount": 900})
	mk("/v1/coupons", "couponId", map[string]any{"couponId": "cp2", "name": "Five off", "amountOff": 500, "currency": "USD"})
	q2 := mk("/v1/quotes", "quoteId", map[string]any{"quoteId": "q2", "orderType": "subscription_creation", "customerId": "c2", "billingAccountId": "ba2",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "p-month"}}})
	accepted := e.Must(200, "POST", "/v1/quotes/"+q2+"/accept", map[string]any{}).Data()
	f.subscription, f.subInvoice = accepted["subscriptionId"].(string), accepted["invoiceId"].(string)
	phase[f.subscription], phase[f.subInvoice] = true, true
	mk("/v1/invoices", "invoiceId", map[string]any{"invoiceId": "inv3", "customerId": "c1", "billingAccountId": "ba1", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "p-once", "quantity": 2}}})
	if st := e.Must(200, "POST", "/v1/invoices/inv3/finalize", map[string]any{}).Data()["status"]; st != "paid" {
		t.Fatalf("inv3 finalized %v, want paid by its default card", st)
	}
	for _, cn := range []struct{ id, invoice string }{{"cn1", "inv2"}, {"cn2", "inv3"}} {
		lineID := e.Must(200, "GET", "/v1/invoices/"+cn.invoice, nil).Data()["lines"].([]any)[0].(map[string]any)["invoiceLineId"]
		mk("/v1/credit-notes", "creditNoteId", map[string]any{"creditNoteId": cn.id, "invoiceId": cn.invoice, "reason": "order_change",
			"lines": []any{map[string]any{"invoiceLineId": lineID, "bucket": "credit", "amount": 100, "description": "Goodwill"}}})
	}
	mk("/v1/usage-thresholds", "thresholdId", map[string]any{"thresholdId": "th2", "customerId": "c2", "meterId": "m1", "threshold": 50})
	e.Must(200, "POST", "/v1/usage-thresholds/th2/archive", map[string]any{})
	mk("/v1/webhook-endpoints", "endpointId", map[string]any{"url": "https://hooks.example.com/second"})
	mk("/v1/customers/c2/balance/grant", "entryId", map[string]any{"entryId": "g2", "currency": "USD", "amount": 700})
	usage("ev3", "c1", "m2", 60)
	e.Must(200, "POST", "/v1/usage-events/ev1/void", map[string]any{})
	f.pm2 = card(t, e, "c1", "", false)
	phase[f.pm2] = true
	// Archived (PATCH active false): the active= filters of prices and coupons.
	e.Must(200, "PATCH", "/v1/prices/p-usage", map[string]any{"active": false})
	e.Must(200, "PATCH", "/v1/coupons/cp1", map[string]any{"active": false})
	return f
}

// card saves pm_card_visa for the customer through a setup session completed in the customer
// portal, for billingAccountID (its default when asDefault) when it is not empty, and returns the
// payment method's ID.
func card(t *testing.T, e *testkit.Env, customerID, billingAccountID string, asDefault bool) string {
	t.Helper()
	body := map[string]any{}
	if billingAccountID != "" {
		body["billingAccountId"], body["setAsDefault"] = billingAccountID, asDefault
	}
	s := create(t, e, "/v1/customers/"+customerID+"/payment-method-setup", body)
	u, err := url.Parse(s["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	done := e.Must(200, "PUT", u.RequestURI()+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")).Data()
	return done["paymentMethod"].(map[string]any)["paymentMethodId"].(string)
}

// listAll reads every page of a list, limit items a page (the cursor alone from the second page
// on: it keeps the page size), and checks each page's shape and the order of the items: newest
// first by the at field, then by ID.
func listAll(t *testing.T, e *testkit.Env, path, idField, atField string, limit int, opts ...testkit.Opt) []map[string]any {
	t.Helper()
	var items []map[string]any
	next := withQuery(path, fmt.Sprintf("limit=%d", limit))
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("%s: more than 1000 pages", path)
		}
		d := e.Must(200, "GET", next, nil, opts...).Data()
		page := d["items"].([]any)
		cursor, _ := d["nextCursor"].(string)
		if d["object"] != "list" || d["hasMore"] != (cursor != "") || len(page) > limit || (cursor != "" && len(page) != limit) {
			t.Fatalf("%s: page %d: %v", path, pages, d)
		}
		for _, it := range page {
			items = append(items, it.(map[string]any))
		}
		if cursor == "" {
			break
		}
		next = withQuery(path, "cursor="+url.QueryEscape(cursor))
	}
	for i := 1; i < len(items); i++ {
		a, b := items[i-1], items[i]
		ta, tb := parseTime(t, a[atField]), parseTime(t, b[atField])
		// (Balance entries of one instant are in their append order, not their IDs'.)
		if ta.Before(tb) || (ta.Equal(tb) && idField != "entryId" && a[idField].(string) <= b[idField].(string)) {
			t.Fatalf("%s: %v (%v) listed before %v (%v): not newest first", path, a[idField], a[atField], b[idField], b[atField])
		}
	}
	return items
}

// withQuery adds the query q to a path that may have one already.
func withQuery(path, q string) string {
	if strings.Contains(path, "?") {
		return path + "&" + q
	}
	return path + "?" + q
}

// checkSplit checks that the list at path bounded by createdFrom=split lists after, and bounded by
// createdTo=split lists before.
func checkSplit(t *testing.T, e *testkit.Env, path, idField, atField, split string, before, after []string) {
	t.Helper()
	sameIDs(t, path+" createdFrom", idsOf(listAll(t, e, withQuery(path, "createdFrom="+url.QueryEscape(split)), idField, atField, 2), idField), after)
	sameIDs(t, path+" createdTo", idsOf(listAll(t, e, withQuery(path, "createdTo="+url.QueryEscape(split)), idField, atField, 2), idField), before)
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

func idsOf(items []map[string]any, idField string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it[idField].(string))
	}
	return out
}

// sameIDs fails unless got holds exactly the IDs of want, in any order.
func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	sort.Strings(g)
	sort.Strings(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s: %v, want %v", what, g, w)
	}
}

// listCase is one list: its path, its items' ID and time fields, and what each filter lists.
type listCase struct {
	path, id, at string
	filters      map[string][]string // query → the IDs listed
	bad          map[string]string   // query → the field:reason of its 422
}

func TestLists(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		f := seedLists(t, e)
		for _, c := range listCases(f) {
			t.Run(strings.TrimPrefix(c.path, "/v1/"), func(t *testing.T) { checkList(t, e, f, c) })
		}
	})
}

func listCases(f listFixture) []listCase {
	all := func(ids ...string) []string { return ids }
	status := func(values string) map[string]string {
		return map[string]string{"status=" + values: "status:invalid_enum"}
	}
	return []listCase{
		{path: "/v1/customers", id: "customerId", at: "createdAt", filters: map[string][]string{
			"":                          all("c1", "c2", "c3", "c4"),
			"email=alice@example.com":   all("c1"),
			"email=ALICE@example.com":   all(),
			"search=alice":              all("c1", "c3"),
			"search=ALI":                all("c1", "c3"),
			"search=bob%40ex":           all("c2"),
			"search=alice.c%40":         all("c3"),
			"search=Zo%C3%AB":           all("c4"),
			"search=martin":             all(),
			"search=%25":                all(),
			"email=b-alice@example.com": all(),
		}},
		{path: "/v1/prices", id: "priceId", at: "createdAt", filters: map[string][]string{
			"":                             all("p-once", "p-month", "p-usage", "p-eur"),
			"priceType=fixed_one_time":     all("p-once", "p-eur"),
			"priceType=usage_metered":      all("p-usage"),
			"priceType=free":               all(),
			"meterId=m1":                   all("p-usage"),
			"meterId=b-m1":                 all(),
			"currency=EUR":                 all("p-eur"),
			"currency=USD":                 all("p-once", "p-month", "p-usage"),
			"productId=prodA":              all("p-once", "p-month"),
			"productId=prodB":              all("p-usage", "p-eur"),
			"productId=prodB&currency=USD": all("p-usage"),
			"active=true":                  all("p-once", "p-month", "p-eur"),
			"active=false":                 all("p-usage"),
			"active=false&currency=EUR":    all(),
			"active=true&productId=prodB":  all("p-eur"),
		}, bad: map[string]string{"priceType=monthly": "priceType:invalid_enum", "currency=usd": "currency:invalid_currency",
			"currency=XYZ": "currency:invalid_currency", "active=yes": "active:invalid_type"}},
		{path: "/v1/coupons", id: "couponId", at: "createdAt", filters: map[string][]string{"": all("cp1", "cp2"),
			"active=true": all("cp2"), "active=false": all("cp1")},
			bad: map[string]string{"active=1": "active:invalid_type"}},
		{path: "/v1/billing-accounts", id: "billingAccountId", at: "createdAt", filters: map[string][]string{
			"":                all("ba1", "ba2", "ba3"),
			"customerId=c1":   all("ba1", "ba3"),
			"customerId=c2":   all("ba2"),
			"customerId=c3":   all(),
			"customerId=b-c1": all(),
		}},
		{path: "/v1/quotes", id: "quoteId", at: "createdAt", filters: map[string][]string{
			"":                              all("q1", "q2"),
			"customerId=c1":                 all("q1"),
			"status=draft":                  all("q1"),
			"status=accepted":               all("q2"),
			"status=accepted&customerId=c1": all(),
		}, bad: status("open")},
		{path: "/v1/invoices", id: "invoiceId", at: "createdAt", filters: map[string][]string{
			"":                                 all("inv1", "inv2", "inv3", f.subInvoice),
			"customerId=c1":                    all("inv1", "inv3"),
			"customerId=c2":                    all("inv2", f.subInvoice),
			"billingAccountId=ba1":             all("inv1", "inv3"),
			"billingAccountId=ba3":             all(),
			"subscriptionId=" + f.subscription: all(f.subInvoice),
			"status=draft":                     all("inv1", f.subInvoice),
			"status=paid":                      all("inv2", "inv3"),
			"status=void":                      all(),
			"number=" + f.paidNumber:           all("inv2"),
			"number=INV-999999":                all(),
			"customerId=c2&status=paid":        all("inv2"),
		}, bad: status("closed")},
		{path: "/v1/credit-notes", id: "creditNoteId", at: "createdAt", filters: map[string][]string{
			"":                             all("cn1", "cn2"),
			"invoiceId=inv2":               all("cn1"),
			"customerId=c1":                all("cn2"),
			"customerId=c1&invoiceId=inv2": all(),
		}},
		{path: "/v1/usage-events", id: "eventId", at: "timestamp", filters: map[string][]string{
			"":                                 all("ev2", "ev3"),
			"includeVoided=true":               all("ev1", "ev2", "ev3"),
			"includeVoided=false":              all("ev2", "ev3"),
			"customerId=c1":                    all("ev3"),
			"customerId=c1&includeVoided=true": all("ev1", "ev3"),
			"meterId=m1&includeVoided=true":    all("ev1", "ev2"),
			"meterId=m2":                       all("ev3"),
			"customerId=c2&meterId=m1":         all("ev2"),
			// The range is on the events' timestamp: ev1 at +0, ev2 at +30 min, ev3 at +60 min.
			"includeVoided=true&createdFrom=" + url.QueryEscape(f.usageStart.Add(30*time.Minute).Format(time.RFC3339)): all("ev2", "ev3"),
			"includeVoided=true&createdTo=" + url.QueryEscape(f.usageStart.Add(30*time.Minute).Format(time.RFC3339)):   all("ev1"),
			"createdFrom=" + url.QueryEscape(f.usageStart.Add(time.Minute).Format(time.RFC3339)) + "&createdTo=" +
				url.QueryEscape(f.usageStart.Add(time.Hour).Format(time.RFC3339)): all("ev2"),
		}, bad: map[string]string{"includeVoided=yes": "includeVoided:invalid_type"}},
		{path: "/v1/usage-thresholds", id: "thresholdId", at: "createdAt", filters: map[string][]string{
			"":                              all("th1", "th2"),
			"customerId=c2":                 all("th2"),
			"meterId=m1":                    all("th1", "th2"),
			"meterId=m2":                    all(),
			"status=active":                 all("th1"),
			"status=archived":               all("th2"),
			"status=archived&customerId=c1": all(),
		}, bad: status("crossed")},
		{path: "/v1/merchant-accounts", id: "merchantAccountId", at: "createdAt", filters: map[string][]string{"": all(f.sandboxAccount)}},
		{path: "/v1/customers/c1/payment-methods", id: "paymentMethodId", at: "createdAt", filters: map[string][]string{"": all(f.pm1, f.pm2)}},
		{path: "/v1/customers/c4/payment-methods", id: "paymentMethodId", at: "createdAt", filters: map[string][]string{"": all()}},
	}
}

// checkList checks one list: every filter, at two page sizes; the creation range on both sides of
// the fixture's split (a list in timestamp order is checked by its own filters); the bad values;
// and that the other organization's rows (IDs "b-...") are not there, nor these in its list.
func checkList(t *testing.T, e *testkit.Env, f listFixture, c listCase) {
	for q, want := range c.filters {
		path := c.path
		if q != "" {
			path = withQuery(path, q)
		}
		for _, limit := range []int{1, 3, 100} {
			sameIDs(t, fmt.Sprintf("%s (limit %d)", path, limit), idsOf(listAll(t, e, path, c.id, c.at, limit), c.id), want)
		}
	}
	every := idsOf(listAll(t, e, c.path, c.id, c.at, 100), c.id)
	for _, id := range every {
		if strings.HasPrefix(id, "b-") {
			t.Fatalf("%s lists %s, the other organization's", c.path, id)
		}
	}
	if c.at == "createdAt" {
		var before, after []string
		for _, id := range every {
			if f.second[id] {
				after = append(after, id)
			} else {
				before = append(before, id)
			}
		}
		checkSplit(t, e, c.path, c.id, c.at, f.split, before, after)
		for _, id := range before {
			if f.second[id] {
				t.Fatalf("%s: %s of the second phase created before the split", c.path, id)
			}
		}
	}
	bad := map[string]string{
		"createdFrom=yesterday":                                           "createdFrom:invalid_format",
		"createdTo=2026-13-01T00:00:00Z":                                  "createdTo:invalid_format",
		"createdFrom=2026-02-01T00:00:00Z&createdTo=2026-02-01T00:00:00Z": "createdTo:before_start",
		"limit=0":        "limit:out_of_range",
		"cursor=garbage": "cursor:invalid_cursor",
		"colour=red":     "colour:unknown_parameter",
		"customer_id=c1": "customer_id:unknown_parameter",
	}
	for q, field := range c.bad {
		bad[q] = field
	}
	for q, field := range bad {
		wantFields(t, e.Do("GET", withQuery(c.path, q), nil), "query:"+field)
	}
	// The other organization's list holds its own rows only.
	if strings.HasPrefix(c.path, "/v1/customers/c") || c.path == "/v1/merchant-accounts" {
		return
	}
	theirs := idsOf(listAll(t, e, c.path, c.id, c.at, 100, testkit.As(f.other)), c.id)
	if len(theirs) == 0 {
		t.Fatalf("%s: the other organization lists nothing", c.path)
	}
	for _, id := range theirs {
		if !strings.HasPrefix(id, "b-") {
			t.Fatalf("%s: the other organization lists %s", c.path, id)
		}
	}
}

// TestListsCreatedRange: every list that existed before the creation range (payments,
// subscriptions, jobs, e-mails, tax transactions, events and their deliveries, meters, webhook
// endpoints, balance entries, settlements, receipts) takes createdFrom and createdTo: the items
// created before a time and those at or after it are the whole list, and a bad bound is 422.
func TestListsCreatedRange(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		f := seedLists(t, e)
		// inv3's invoice.paid, after the split, to both endpoints (its deliveries made by the
		// dispatch the worker runs), and one more by a resend.
		events := idsOf(listAll(t, e, "/v1/events?type=invoice.paid", "eventId", "createdAt", 100), "eventId")
		if len(events) == 0 {
			t.Fatal("no invoice.paid event")
		}
		if _, err := e.App.Webhooks.DispatchEvents(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.Must(200, "POST", "/v1/events/"+events[0]+"/resend", map[string]any{})
		for _, c := range []struct{ path, id string }{
			{"/v1/payments", "paymentId"},
			{"/v1/subscriptions", "subscriptionId"},
			{"/v1/jobs", "jobId"},
			{"/v1/emails", "emailId"},
			{"/v1/tax-transactions", "taxTransactionId"},
			{"/v1/events", "eventId"},
			{"/v1/events?type=invoice.finalized", "eventId"},
			{"/v1/events/" + events[0] + "/deliveries", "deliveryId"},
			{"/v1/meters", "meterId"},
			{"/v1/webhook-endpoints", "endpointId"},
			{"/v1/customers/c1/balance/entries", "entryId"},
			{"/v1/customers/c1/balance/entries?currency=USD", "entryId"},
			{"/v1/merchant-accounts/" + e.Tenant.Sandbox + "/settlements", "settlementId"},
			{"/v1/merchant-accounts/" + e.Tenant.Sandbox + "/settlements?scope=open", "settlementId"},
		} {
			t.Run(c.path, func(t *testing.T) {
				every := listAll(t, e, c.path, c.id, "createdAt", 100)
				var before, after []string
				for _, it := range every {
					if parseTime(t, it["createdAt"]).Before(parseTime(t, f.split)) {
						before = append(before, it[c.id].(string))
					} else {
						after = append(after, it[c.id].(string))
					}
				}
				if len(every) == 0 {
					t.Fatalf("%s: nothing listed", c.path)
				}
				checkSplit(t, e, c.path, c.id, "createdAt", f.split, before, after)
				wantFields(t, e.Do("GET", withQuery(c.path, "createdFrom=2026-01-01"), nil), "query:createdFrom:invalid_format")
				wantFields(t, e.Do("GET", withQuery(c.path, "createdFrom=2026-02-01T00:00:00Z&createdTo=2026-01-01T00:00:00Z"), nil), "query:createdTo:before_start")
				wantFields(t, e.Do("GET", withQuery(c.path, "since=2026-01-01T00:00:00Z"), nil), "query:since:unknown_parameter")
			})
		}
		// Receipts page by offset; the range bounds them the same way.
		receipts := e.Must(200, "GET", "/v1/payment-receipts?limit=100", nil).Data()["items"].([]any)
		var before, after []string
		for _, it := range receipts {
			r := it.(map[string]any)
			if parseTime(t, r["createdAt"]).Before(parseTime(t, f.split)) {
				before = append(before, r["receiptId"].(string))
			} else {
				after = append(after, r["receiptId"].(string))
			}
		}
		if len(after) == 0 {
			t.Fatal("no receipt after the split (inv3 was paid by card)")
		}
		for q, want := range map[string][]string{"createdFrom": after, "createdTo": before} {
			got := e.Must(200, "GET", "/v1/payment-receipts?limit=100&"+q+"="+url.QueryEscape(f.split), nil).Data()["items"].([]any)
			ids := []string{}
			for _, it := range got {
				ids = append(ids, it.(map[string]any)["receiptId"].(string))
			}
			sameIDs(t, "receipts "+q, ids, want)
		}
		wantFields(t, e.Do("GET", "/v1/payment-receipts?createdTo=soon", nil), "query:createdTo:invalid_format")
	})
}

// TestListPagingWhileInserting: a list read page by page while rows are added between the pages
// lists every row that was there when it started exactly once, and no row twice: the keyset
// (creation time, ID) of the last item read is where the next page starts, whatever came since.
func TestListPagingWhileInserting(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "owner", "name": "Owner"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "owner-ba", "customerId": "owner", "currency": "USD"})
		e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "calls", "aggregation": "count"})
		create(t, e, "/v1/prices", map[string]any{"priceId": "seed", "productId": "prod", "name": "Seed", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})
		base := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
		n := 0
		for _, c := range []struct {
			path, id, at string
			add          func(i int) string // one more row; its ID
		}{
			{"/v1/customers", "customerId", "createdAt", func(i int) string {
				return create(t, e, "/v1/customers", map[string]any{"customerId": fmt.Sprintf("cus-%03d", i), "name": "C"})["customerId"].(string)
			}},
			{"/v1/prices", "priceId", "createdAt", func(i int) string {
				return create(t, e, "/v1/prices", map[string]any{"priceId": fmt.Sprintf("price-%03d", i), "productId": "prod", "name": "P",
					"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})["priceId"].(string)
			}},
			{"/v1/coupons", "couponId", "createdAt", func(i int) string {
				return create(t, e, "/v1/coupons", map[string]any{"couponId": fmt.Sprintf("cpn-%03d", i), "name": "C", "percentOff": 5})["couponId"].(string)
			}},
			{"/v1/billing-accounts", "billingAccountId", "createdAt", func(i int) string {
				return create(t, e, "/v1/billing-accounts", map[string]any{"customerId": "owner", "currency": "USD"})["billingAccountId"].(string)
			}},
			{"/v1/invoices?customerId=owner", "invoiceId", "createdAt", func(i int) string {
				return create(t, e, "/v1/invoices", map[string]any{"customerId": "owner", "billingAccountId": "owner-ba", "currency": "USD",
					"lines": []any{map[string]any{"priceId": "seed"}}})["invoiceId"].(string)
			}},
			{"/v1/quotes", "quoteId", "createdAt", func(i int) string {
				return create(t, e, "/v1/quotes", map[string]any{"orderType": "one_off", "customerId": "owner", "billingAccountId": "owner-ba",
					"currency": "USD", "lines": []any{map[string]any{"priceId": "seed"}}})["quoteId"].(string)
			}},
			{"/v1/usage-thresholds", "thresholdId", "createdAt", func(i int) string {
				return create(t, e, "/v1/usage-thresholds", map[string]any{"customerId": "owner", "meterId": "calls", "threshold": 1000 + i})["thresholdId"].(string)
			}},
			// Usage events are listed by timestamp: each new one is older than every event
			// already listed, so it lands behind the page being read, and is listed too.
			{"/v1/usage-events", "eventId", "timestamp", func(i int) string {
				n++
				return create(t, e, "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("ev-%03d", i), "customerId": "owner", "meterId": "calls",
					"quantity": 1, "timestamp": base.Add(-time.Duration(n) * time.Minute).Format(time.RFC3339)})["eventId"].(string)
			}},
		} {
			t.Run(c.path, func(t *testing.T) {
				existing := map[string]bool{}
				for _, id := range idsOf(listAll(t, e, c.path, c.id, c.at, 100), c.id) {
					existing[id] = true
				}
				for i := range 7 {
					existing[c.add(i)] = true
				}
				seen := map[string]int{}
				next := withQuery(c.path, "limit=2")
				added := 100
				for page := 0; ; page++ {
					d := e.Must(200, "GET", next, nil).Data()
					for _, it := range d["items"].([]any) {
						seen[it.(map[string]any)[c.id].(string)]++
					}
					cursor, _ := d["nextCursor"].(string)
					if cursor == "" {
						break
					}
					c.add(added) // a row created between two pages
					added++
					next = withQuery(c.path, "cursor="+url.QueryEscape(cursor))
				}
				for id := range existing {
					if seen[id] != 1 {
						t.Errorf("%s: %s listed %d times", c.path, id, seen[id])
					}
				}
				for id, k := range seen {
					if k > 1 {
						t.Errorf("%s: %s listed %d times", c.path, id, k)
					}
				}
			})
		}
	})
}
