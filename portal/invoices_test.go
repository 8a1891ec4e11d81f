package portal_test

import (
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// The invoice history lists the customer's own sent invoices with their hosted page and, for an
// open one, the pay route; turned off, it has no page.
func TestPortalInvoices(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
		sub := subscribed(t, e, "c")
		subscribed(t, e, "d")
		e.AdvanceClock(2 * 3600) // the first invoices finalize themselves
		inv := e.Must(200, "GET", "/v1/invoices/"+e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["latestInvoiceId"].(string), nil).Data()
		if inv["status"] != "open" {
			t.Fatalf("invoice %v", inv["status"])
		}
		others := e.Must(200, "GET", "/v1/invoices?customerId=d", nil).Data()["items"].([]any)
		_, start := session(t, e, map[string]any{"customerId": "c", "locale": "es"})
		b := newBrowser(t, e)
		b.get(start)
		want(t, b.get("/portal"), 200, `href="/portal/invoices"`)
		page := b.get("/portal/invoices")
		want(t, page, 200, "Sus facturas", inv["number"].(string), "Pendiente", "Pagar",
			strings.ReplaceAll(inv["paymentUrl"].(string), "&", "&amp;"))
		for _, o := range others {
			if n, _ := o.(map[string]any)["number"].(string); n != "" && strings.Contains(page.body, n) {
				t.Fatalf("another customer's invoice %s listed", n)
			}
		}
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"invoiceHistory": false})
		want(t, b.get("/portal/invoices"), 404)
		if strings.Contains(b.get("/portal").body, `href="/portal/invoices"`) {
			t.Fatal("the overview still links the history")
		}
	})
}
