package portal_test

import (
	"net/url"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// Pause and resume where configured, each after a confirmation; resuming bills the new period.
func TestPortalPauseResume(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
		sub := subscribed(t, e, "c")
		_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		b := newBrowser(t, e)
		b.get(start)
		want(t, b.get("/portal/subscriptions/"+sub+"/pause"), 404) // off by default
		want(t, b.post("/portal/subscriptions/"+sub+"/pause", url.Values{"csrf": {csrfOf(t, b.get("/portal/subscriptions/"+sub+"/cancel"))}}), 403)
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"subscriptionPause": map[string]any{"enabled": true}})
		want(t, b.get("/portal"), 200, "/portal/subscriptions/"+sub+"/pause")
		confirm := b.get("/portal/subscriptions/" + sub + "/pause")
		want(t, confirm, 200, "Pause your subscription", "Yes, pause it")
		want(t, b.post("/portal/subscriptions/"+sub+"/pause", url.Values{}), 403)
		if r := b.post("/portal/subscriptions/"+sub+"/pause", url.Values{"csrf": {csrfOf(t, confirm)}}); r.status != 303 {
			t.Fatalf("pause: %d %s", r.status, r.body)
		}
		if st := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["status"]; st != "paused" {
			t.Fatalf("after pause: %v", st)
		}
		want(t, b.get("/portal?done=paused"), 200, "Your subscription is paused.", "/portal/subscriptions/"+sub+"/resume")
		before := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["latestInvoiceId"]
		resume := b.get("/portal/subscriptions/" + sub + "/resume")
		want(t, resume, 200, "is billed now", "Yes, resume it")
		if r := b.post("/portal/subscriptions/"+sub+"/resume", url.Values{"csrf": {csrfOf(t, resume)}}); r.status != 303 {
			t.Fatalf("resume: %d %s", r.status, r.body)
		}
		got := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()
		if got["status"] != "active" || got["latestInvoiceId"] == before {
			t.Fatalf("after resume: %v", got)
		}
		want(t, b.post("/portal/subscriptions/"+sub+"/resume", url.Values{"csrf": {csrfOf(t, resume)}}), 409)
		want(t, b.get("/portal/subscriptions/"+sub+"/anything"), 404)
	})
}
