package portal_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/portal"
)

// guarded is one portal route as the guard table checks it: a concrete path (sub: a subscription,
// pm: a payment method of the customer's), its form, and the configuration that turns its
// feature off ("" for a route every configuration has).
type guarded struct {
	pattern string
	path    string
	form    url.Values
	off     map[string]any
	status  int // the page's status for the customer's own IDs (0: 200)
}

var (
	cancelOff = map[string]any{"subscriptionCancel": map[string]any{"enabled": false, "mode": "at_period_end", "prorate": true}}
	updateOff = map[string]any{"subscriptionUpdate": map[string]any{"enabled": false, "prices": []any{}, "prorationBehavior": "create_prorations"}}
	pauseOff  = map[string]any{"subscriptionPause": map[string]any{"enabled": false}}
	walletOff = map[string]any{"paymentMethodUpdate": false}
	historyOf = map[string]any{"invoiceHistory": false}
	detailOff = map[string]any{"customerUpdate": map[string]any{"enabled": false, "allowedFields": []any{}}}
)

// portalRoutes lists every route of the portal but /portal/start (a session's one-time URL,
// TestPortalSessionLimits).
func portalRoutes() []guarded {
	return []guarded{
		{"GET /portal", "/portal", nil, nil, 0},
		{"GET /portal/theme.css", "/portal/theme.css", nil, nil, 0},
		{"GET /portal/subscriptions/{subscription}/cancel", "/portal/subscriptions/{sub}/cancel", nil, cancelOff, 0},
		{"POST /portal/subscriptions/{subscription}/cancel", "/portal/subscriptions/{sub}/cancel", url.Values{}, cancelOff, 0},
		{"POST /portal/subscriptions/{subscription}/keep", "/portal/subscriptions/{sub}/keep", url.Values{}, cancelOff, 0},
		{"GET /portal/subscriptions/{subscription}/change", "/portal/subscriptions/{sub}/change?price=team", nil, updateOff, 0},
		{"POST /portal/subscriptions/{subscription}/change", "/portal/subscriptions/{sub}/change", url.Values{"price": {"team"}}, updateOff, 0},
		{"GET /portal/subscriptions/{subscription}/{action}", "/portal/subscriptions/{sub}/pause", nil, pauseOff, 0},
		{"POST /portal/subscriptions/{subscription}/{action}", "/portal/subscriptions/{sub}/pause", url.Values{}, pauseOff, 0},
		{"GET /portal/invoices", "/portal/invoices", nil, historyOf, 0},
		{"GET /portal/invoices/{invoice}/pay", "/portal/invoices/{inv}/pay", nil, historyOf, 303},
		{"GET /portal/details", "/portal/details", nil, detailOff, 0},
		{"POST /portal/details", "/portal/details", url.Values{"name": {"Mallory"}}, detailOff, 0},
		{"GET /portal/payment-methods", "/portal/payment-methods", nil, walletOff, 0},
		{"POST /portal/payment-methods/add", "/portal/payment-methods/add", url.Values{}, walletOff, 0},
		{"POST /portal/payment-methods/{method}/default", "/portal/payment-methods/{pm}/default", url.Values{}, walletOff, 0},
		{"GET /portal/payment-methods/{method}/remove", "/portal/payment-methods/{pm}/remove", nil, walletOff, 0},
		{"POST /portal/payment-methods/{method}/remove", "/portal/payment-methods/{pm}/remove", url.Values{}, walletOff, 0},
	}
}

// ids are the IDs a guarded path is filled with.
type ids struct{ sub, pm, inv string }

// guardCustomer subscribes customer id to plan with a saved card.
func guardCustomer(t *testing.T, e *testkit.Env, id string, opts ...testkit.Opt) ids {
	t.Helper()
	sub := subscribed(t, e, id, opts...)
	s := e.Must(201, "POST", "/v1/customers/"+id+"/payment-method-setup", map[string]any{"billingAccountId": "ba-" + id}, opts...).Data()
	u, _ := url.Parse(s["url"].(string))
	pm := e.Must(200, "PUT", u.RequestURI()+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")).Data()["paymentMethodId"].(string)
	return ids{sub, pm, e.Must(200, "GET", "/v1/subscriptions/"+sub, nil, opts...).Data()["latestInvoiceId"].(string)}
}

// Every portal route, table-driven: signed out 401; a form without its CSRF token 403; another
// customer's (or production's) IDs 404 with nothing of theirs shown; its feature turned off, no page
// (404) and the form refused (403); and none of it, nor any page, writes anything. The table is
// checked against the routes the portal registers. The portal's cookie is refused by /v1.
func TestPortalEveryRouteGuarded(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		srv, err := portal.New(e.App.Portal, e.App.Operators.Sessions(), slog.New(slog.NewTextHandler(io.Discard, nil)), portal.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, g := range portalRoutes() {
			listed = append(listed, g.pattern)
		}
		for _, p := range srv.Patterns() {
			if p != "GET /portal/start" && !slices.Contains(listed, p) {
				t.Errorf("route %q is not in the guard table", p)
			}
		}

		mine, other, prod, all := guardFixture(t, e)
		_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		b := newBrowser(t, e)
		b.get(start)
		csrf := csrfOf(t, b.get("/portal/details"))
		fill := func(path string, id ids) string {
			return strings.NewReplacer("{sub}", id.sub, "{pm}", id.pm, "{inv}", id.inv).Replace(path)
		}
		call := func(c *browser, g guarded, id ids, withCSRF bool) page {
			if g.form == nil {
				return c.get(fill(g.path, id))
			}
			form := url.Values{}
			for k, v := range g.form {
				form[k] = v
			}
			if withCSRF {
				form.Set("csrf", csrf)
			}
			return c.post(fill(g.path, id), form)
		}
		before := testkit.StoreDigest(t, e, "operator_sessions")
		stranger := newBrowser(t, e)
		for _, g := range portalRoutes() {
			want(t, call(stranger, g, mine, true), 401) // signed out
			switch {
			case g.form != nil:
				want(t, call(b, g, mine, false), 403, "This form is out of date")
			case g.status != 0:
				want(t, call(b, g, mine, false), g.status)
			default:
				want(t, call(b, g, mine, false), 200) // every page, previews included, writes nothing
			}
			if strings.Contains(g.path, "{") {
				for _, id := range []ids{other, prod} {
					p := call(b, g, id, true)
					want(t, p, 404, "Not found")
					if strings.Contains(p.body, "Ada d") || strings.Contains(p.body, id.sub) || strings.Contains(p.body, id.pm) || strings.Contains(p.body, id.inv) {
						t.Fatalf("%s shows another customer's: %.600s", g.pattern, p.body)
					}
				}
			}
		}
		unchanged(t, before, testkit.StoreDigest(t, e, "operator_sessions"), "the refused requests and the pages")
		// A configuration event per change below; nothing else may move.
		before = testkit.StoreDigest(t, e, "operator_sessions", "customer_portal_configurations", "events", "webhook_deliveries", "jobs")
		for _, g := range portalRoutes() {
			if g.off == nil {
				continue
			}
			e.Must(200, "PUT", "/v1/customer-portal-configuration", merged(all, g.off))
			if g.form == nil {
				want(t, call(b, g, mine, true), 404)
			} else {
				want(t, call(b, g, mine, true), 403, "Not available")
			}
		}
		unchanged(t, before, testkit.StoreDigest(t, e, "operator_sessions", "customer_portal_configurations", "events", "webhook_deliveries", "jobs"),
			"the forms of features turned off")

		cookieRefusedByAPI(t, e, b, mine.sub)
	})
}

func merged(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func unchanged(t *testing.T, before, after map[string]string, what string) {
	t.Helper()
	for tb, d := range after {
		if before[tb] != d {
			t.Errorf("%s changed table %s", what, tb)
		}
	}
}

// guardFixture: customers c (the session's) and d, each subscribed with a card and an open first
// invoice, a production customer p subscribed, and a configuration with every feature on.
func guardFixture(t *testing.T, e *testkit.Env) (mine, other, prod ids, all map[string]any) {
	t.Helper()
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 4900}, testkit.Production())
	mine, other = guardCustomer(t, e, "c"), guardCustomer(t, e, "d")
	prodSub := subscribed(t, e, "p", testkit.Production())
	prod = ids{prodSub, "pm_nothing", e.Must(200, "GET", "/v1/subscriptions/"+prodSub, nil, testkit.Production()).Data()["latestInvoiceId"].(string)}
	e.AdvanceClock(2 * 3600) // the first invoices finalize: open, to pay
	all = map[string]any{"customerUpdate": map[string]any{"enabled": true, "allowedFields": []any{"name", "email", "address", "preferredLocale"}},
		"subscriptionPause":  map[string]any{"enabled": true},
		"subscriptionUpdate": map[string]any{"enabled": true, "prices": []any{"team"}, "prorationBehavior": "create_prorations"}}
	e.Must(200, "PUT", "/v1/customer-portal-configuration", all)
	return mine, other, prod, all
}

// cookieRefusedByAPI: the portal's cookie is no API credential, on any /v1 route.
func cookieRefusedByAPI(t *testing.T, e *testkit.Env, b *browser, sub string) {
	t.Helper()
	var cookie *http.Cookie
	u, _ := url.Parse(e.Server.URL + "/portal")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "remit_portal" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no portal cookie")
	}
	for _, path := range []string{"/v1/customers", "/v1/customers/c", "/v1/subscriptions/" + sub, "/v1/customer-portal-configuration"} {
		req, _ := http.NewRequest("GET", e.Server.URL+path+"?environment=sandbox&merchantAccountId="+e.Tenant.Sandbox, nil)
		req.AddCookie(cookie)
		if r := b.do(req); r.status != 401 {
			t.Errorf("%s with the portal's cookie: %d", path, r.status)
		}
	}
}
