package portal_test

import (
	"net/url"
	"slices"
	"sort"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// Every event the portal's actions make, of every type, names the portal session as its actor
// (customer_portal, the session's ID); the API's own writes keep the API key's. The hosted setup
// page's (a card saved there) name that page's session, as every hosted page's do (docs/events.md).
func TestPortalEventActors(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		for _, p := range []map[string]any{
			{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 4900},
			{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 9000},
		} {
			e.Must(200, "POST", "/v1/prices", p)
		}
		first := guardCustomer(t, e, "c")
		s := e.Must(201, "POST", "/v1/customers/c/payment-method-setup", map[string]any{"billingAccountId": "ba-c"}).Data()
		u, _ := url.Parse(s["url"].(string))
		pm2 := e.Must(200, "PUT", u.RequestURI()+"&paymentMethod=pm_card_mastercard", nil, testkit.APIKey("")).Data()["paymentMethodId"].(string)
		e.AdvanceClock(2 * 3600)
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{
			"customerUpdate":     map[string]any{"enabled": true, "allowedFields": []any{"name", "address"}},
			"subscriptionPause":  map[string]any{"enabled": true},
			"subscriptionUpdate": map[string]any{"enabled": true, "prices": []any{"team"}, "prorationBehavior": "always_invoice"}})
		seen := map[string]bool{}
		for _, ev := range events(t, e) {
			seen[ev["eventId"].(string)] = true
		}

		ps, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		b := newBrowser(t, e)
		b.get(start)
		csrf := url.Values{"csrf": {csrfOf(t, b.get("/portal/details"))}}
		with := func(k, v string) url.Values { return url.Values{"csrf": csrf["csrf"], k: {v}} }
		sub := first.sub
		for _, a := range []struct {
			path string
			form url.Values
		}{
			{"/portal/subscriptions/" + sub + "/cancel", csrf},
			{"/portal/subscriptions/" + sub + "/keep", csrf},
			{"/portal/subscriptions/" + sub + "/change", with("price", "team")},
			{"/portal/subscriptions/" + sub + "/pause", csrf},
			{"/portal/subscriptions/" + sub + "/resume", csrf},
			{"/portal/details", with("address.line1", "1 Main St")},
			{"/portal/payment-methods/" + pm2 + "/default", csrf},
			{"/portal/payment-methods/" + first.pm + "/remove", csrf},
			{"/portal/payment-methods/add", csrf},
		} {
			if r := b.post(a.path, a.form); r.status != 303 && r.status != 422 {
				t.Fatalf("POST %s: %d %.400s", a.path, r.status, r.body)
			}
		}
		b.post("/portal/details", url.Values{"csrf": csrf["csrf"], "name": {"Ada L."}})

		types := map[string]bool{}
		for _, ev := range events(t, e) {
			if seen[ev["eventId"].(string)] {
				continue
			}
			a, _ := ev["actor"].(map[string]any)
			if a == nil || a["type"] != "customer_portal" || a["id"] != ps["sessionId"] {
				t.Errorf("%s made in the portal: actor %v, want customer_portal %s", ev["type"], a, ps["sessionId"])
			}
			types[ev["type"].(string)] = true
		}
		var got []string
		for ty := range types {
			got = append(got, ty)
		}
		sort.Strings(got)
		for _, ty := range []string{"subscription.updated", "subscription.paused", "subscription.resumed", "customer.updated", "billing_account.updated",
			"payment_method.detached", "payment_method.setup_session.created", "invoice.created"} {
			if !slices.Contains(got, ty) {
				t.Errorf("no %s among the portal's events %v", ty, got)
			}
		}
		t.Logf("the portal's event types, each with its actor: %v", got)
	})
}

func events(t *testing.T, e *testkit.Env) []map[string]any {
	t.Helper()
	var out []map[string]any
	path := "/v1/events?limit=100"
	for {
		d := e.Must(200, "GET", path, nil).Data()
		for _, it := range d["items"].([]any) {
			out = append(out, it.(map[string]any))
		}
		next, _ := d["nextCursor"].(string)
		if next == "" {
			return out
		}
		path = "/v1/events?limit=100&cursor=" + url.QueryEscape(next)
	}
}
