package portal_test

import (
	"net/url"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// The customer edits the billing details the configuration allows, through the customer update's
// rule; a field it does not allow is 403, a bad value 422 in words, and turned off there is no page.
func TestPortalBillingDetails(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "Ada"})
		_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		b := newBrowser(t, e)
		b.get(start)
		want(t, b.get("/portal/details"), 404) // off by default
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"customerUpdate": map[string]any{"enabled": true, "allowedFields": []any{"name", "email"}}})
		cfgEvents := e.Must(200, "GET", "/v1/events?type=customer_portal_configuration.updated", nil).Data()["items"].([]any)
		if len(cfgEvents) != 1 {
			t.Fatalf("%d customer_portal_configuration.updated events, want 1", len(cfgEvents))
		}
		cfg := cfgEvents[0].(map[string]any)
		if obj := cfg["data"].(map[string]any)["object"].(map[string]any); obj["object"] != "customer_portal_configuration" ||
			obj["customerUpdate"].(map[string]any)["enabled"] != true || cfg["actor"].(map[string]any)["type"] != "api_key" {
			t.Fatalf("configuration event %v", cfg)
		}
		page := b.get("/portal/details")
		want(t, page, 200, "Your billing details", `name="name" value="Ada"`, `name="email"`)
		csrf := csrfOf(t, page)
		want(t, b.post("/portal/details", url.Values{"name": {"Ada Lovelace"}}), 403)
		want(t, b.post("/portal/details", url.Values{"csrf": {csrf}, "preferredLocale": {"fr"}}), 403)
		want(t, b.post("/portal/details", url.Values{"csrf": {csrf}, "address.city": {"Paris"}}), 403) // address not allowed
		want(t, b.post("/portal/details", url.Values{"csrf": {csrf}, "email": {"not an address"}}), 422, "Some details are not valid")
		if r := b.post("/portal/details", url.Values{"csrf": {csrf}, "name": {"Ada Lovelace"}, "email": {"ada@example.com"}}); r.status != 303 {
			t.Fatalf("save: %d %s", r.status, r.body)
		}
		c := e.Must(200, "GET", "/v1/customers/c", nil).Data()
		if c["name"] != "Ada Lovelace" || c["email"] != "ada@example.com" {
			t.Fatalf("customer %v", c)
		}
		evs := e.Must(200, "GET", "/v1/events?type=customer.updated", nil).Data()["items"].([]any)
		if a := evs[0].(map[string]any)["actor"].(map[string]any); a["type"] != "customer_portal" {
			t.Fatalf("actor %v", a)
		}
	})
}
