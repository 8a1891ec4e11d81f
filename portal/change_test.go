package portal_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/locale"
)

// The customer switches plan after a confirmation page that shows the change's preview; what the
// change then credits is what the page said, to the cent; a price the configuration does not
// offer is 404, and the feature turned off has no page.
func TestPortalChangePlan(t *testing.T) {
	for _, st := range testkit.Stores() {
		t.Run(string(st), func(t *testing.T) {
			e := testkit.Start(t, st, testkit.Options{Clock: remit.NewFixedClock(time.Now())}) // still, and near real time: browser sessions expire on real time
			for _, p := range []map[string]any{
				{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 4900},
				{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 9000},
				{"priceId": "other", "productId": "other", "name": "Other plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 1000},
			} {
				e.Must(200, "POST", "/v1/prices", p)
			}
			sub := subscribed(t, e, "c")
			inv := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["latestInvoiceId"].(string)
			e.AdvanceClock(2 * 3600) // the first invoice finalized itself: the change credits it
			e.AdvanceClock(5 * 24 * 3600)
			if st := e.Must(200, "GET", "/v1/invoices/"+inv, nil).Data()["status"]; st == "draft" {
				t.Fatalf("first invoice still %v", st)
			}
			e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"subscriptionUpdate": map[string]any{"enabled": true,
				"prices": []any{"team"}, "prorationBehavior": "create_prorations"}})
			_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
			b := newBrowser(t, e)
			b.get(start)
			want(t, b.get("/portal"), 200, "Change plan")
			list := b.get("/portal/subscriptions/" + sub + "/change")
			want(t, list, 200, "Team plan", "?price=team")
			want(t, b.get("/portal/subscriptions/"+sub+"/change?price=other"), 404)

			pv := e.Must(200, "POST", "/v1/subscriptions/"+sub+"/change/preview", map[string]any{"items": []any{map[string]any{"priceId": "team"}}}).Data()
			credit := int64(pv["creditNotes"].([]any)[0].(map[string]any)["total"].(float64))
			next := int64(pv["upcomingInvoice"].(map[string]any)["total"].(float64))
			tr := locale.For("en")
			confirm := b.get("/portal/subscriptions/" + sub + "/change?price=team")
			want(t, confirm, 200, "What this change does", "Credited for the unused time: "+tr.Money(credit, "USD"),
				"Your next invoice: "+tr.Money(next, "USD"), "Yes, change my plan")
			want(t, b.post("/portal/subscriptions/"+sub+"/change", url.Values{"price": {"team"}}), 403) // no CSRF
			want(t, b.post("/portal/subscriptions/"+sub+"/change", url.Values{"csrf": {csrfOf(t, confirm)}, "price": {"other"}}), 404)
			done := b.post("/portal/subscriptions/"+sub+"/change", url.Values{"csrf": {csrfOf(t, confirm)}, "price": {"team"}})
			if done.status != 303 {
				t.Fatalf("change: %d %s", done.status, done.body)
			}
			got := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()
			if got["items"].([]any)[0].(map[string]any)["priceId"] != "team" {
				t.Fatalf("items after the change %v", got["items"])
			}
			cns := e.Must(200, "GET", "/v1/credit-notes?customerId=c", nil).Data()["items"].([]any)
			if len(cns) != 1 || int64(cns[0].(map[string]any)["total"].(float64)) != credit {
				t.Fatalf("credited %v, the confirmation said %d", cns, credit)
			}
			up := e.Must(200, "GET", "/v1/customers/c/upcoming-invoice", nil).Data()
			if int64(up["total"].(float64)) != next {
				t.Fatalf("next invoice %v, the confirmation said %d", up["total"], next)
			}

			e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{})
			want(t, b.get("/portal/subscriptions/"+sub+"/change"), 404)
			want(t, b.post("/portal/subscriptions/"+sub+"/change", url.Values{"csrf": {csrfOf(t, confirm)}, "price": {"team"}}), 403)
		})
	}
}

// A change in the first hour of the period revises the period's invoice, still a draft: the
// confirmation tells that invoice's new total, as the preview has it, and bills nothing now; with
// always_invoice the revised draft is finalized at once, and its total is billed now.
func TestPortalChangeRevisingTheDraft(t *testing.T) {
	for _, st := range testkit.Stores() {
		t.Run(string(st), func(t *testing.T) {
			e := testkit.Start(t, st, testkit.Options{Clock: remit.NewFixedClock(time.Now())})
			for _, p := range []map[string]any{
				{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 4900},
				{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 9000},
			} {
				e.Must(200, "POST", "/v1/prices", p)
			}
			sub := subscribed(t, e, "c")
			tr := locale.For("en")
			_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
			b := newBrowser(t, e)
			b.get(start)
			for _, c := range []struct {
				behavior, says, not string
			}{
				{"create_prorations", "This period’s invoice, not final yet, becomes: ", "Billed now"},
				{"always_invoice", "Billed now: ", "not final yet"},
			} {
				e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"subscriptionUpdate": map[string]any{"enabled": true,
					"prices": []any{"team"}, "prorationBehavior": c.behavior}})
				pv := e.Must(200, "POST", "/v1/subscriptions/"+sub+"/change/preview", map[string]any{"items": []any{map[string]any{"priceId": "team"}},
					"prorationBehavior": c.behavior}).Data()
				invs := pv["invoices"].([]any)
				if len(invs) != 1 {
					t.Fatalf("%s: the preview has %d invoices, want the period's draft revised", c.behavior, len(invs))
				}
				total := int64(invs[0].(map[string]any)["total"].(float64))
				confirm := b.get("/portal/subscriptions/" + sub + "/change?price=team")
				want(t, confirm, 200, c.says+tr.Money(total, "USD"))
				if strings.Contains(confirm.body, c.not) {
					t.Fatalf("%s: the confirmation says %q: %.1500s", c.behavior, c.not, confirm.body)
				}
			}
		})
	}
}
