package portal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// The session's URL opens once and only within five minutes on the sandbox clock (no sleeps: the
// clock advances); the browser's session lasts an hour after its last request (scs's idle
// timeout, written with the session: read and moved in the store rather than waited for).
func TestPortalSessionLimits(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "Ada"})

		_, atFour := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		_, atFive := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		e.AdvanceClock(4*60 + 59)
		b := newBrowser(t, e)
		if p := b.get(atFour); p.status != 303 {
			t.Fatalf("at 4:59 the URL answers %d", p.status)
		}
		want(t, newBrowser(t, e).get(atFour), 401, "This link has expired") // once
		e.AdvanceClock(1)
		want(t, newBrowser(t, e).get(atFive), 401, "This link has expired") // at 5:00
		want(t, newBrowser(t, e).get("/portal/start?token=cpt_"+strings.Repeat("0", 64)), 401, "This link has expired")
		want(t, newBrowser(t, e).get("/portal/start"), 401)

		// The idle hour: a request writes the session's end an hour ahead.
		ends := func() time.Time {
			var us int64
			if err := e.App.DB.SQL().QueryRowContext(context.Background(), `SELECT MAX(expires_at) FROM operator_sessions`).Scan(&us); err != nil {
				t.Fatal(err)
			}
			return time.UnixMicro(us)
		}
		want(t, b.get("/portal"), 200, "Your account")
		if left := time.Until(ends()); left < remit.PortalIdle-time.Minute || left > remit.PortalIdle {
			t.Fatalf("after a request the session ends in %v, want an hour", left)
		}
		// 59 minutes idle: still signed in, and the request moves the end an hour ahead again.
		setEnd := func(at time.Time) {
			if _, err := e.App.DB.SQL().ExecContext(context.Background(), `UPDATE operator_sessions SET expires_at = $1`, at.UnixMicro()); err != nil {
				t.Fatal(err)
			}
		}
		setEnd(time.Now().Add(time.Minute))
		want(t, b.get("/portal"), 200, "Your account")
		if left := time.Until(ends()); left < remit.PortalIdle-time.Minute {
			t.Fatalf("a request after 59 idle minutes left the session %v", left)
		}
		// An hour idle: signed out, on every page.
		setEnd(time.Now().Add(-time.Millisecond))
		want(t, b.get("/portal"), 401, "You are signed out")
		want(t, b.get("/portal/invoices"), 401, "You are signed out")
	})
}

// Each flow type of a session opens its page: a subscription's cancel or change page, the payment
// methods, an invoice's hosted pay page (which links back to the invoices).
func TestPortalFlows(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
		sub := subscribed(t, e, "c")
		inv := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["latestInvoiceId"].(string)
		e.AdvanceClock(2 * 3600) // the invoice finalizes: open
		for _, c := range []struct {
			flow map[string]any
			to   string
		}{
			{nil, "/portal"},
			{map[string]any{"type": "subscription_cancel", "subscriptionId": sub}, "/portal/subscriptions/" + sub + "/cancel"},
			{map[string]any{"type": "subscription_update", "subscriptionId": sub}, "/portal/subscriptions/" + sub + "/change"},
			{map[string]any{"type": "payment_method_update"}, "/portal/payment-methods"},
			{map[string]any{"type": "invoice_payment", "invoiceId": inv}, "/portal/invoices/" + inv + "/pay"},
		} {
			body := map[string]any{"customerId": "c", "locale": "en"}
			if c.flow != nil {
				body["flow"] = c.flow
			}
			_, start := session(t, e, body)
			b := newBrowser(t, e)
			if p := b.get(start); p.status != 303 || p.header.Get("Location") != c.to {
				t.Fatalf("flow %v opens %d %q, want %q", c.flow, p.status, p.header.Get("Location"), c.to)
			}
			if c.flow != nil && c.flow["type"] == "invoice_payment" {
				p := b.get(c.to)
				loc := p.header.Get("Location")
				if p.status != 303 || !strings.Contains(loc, "/customer-portal/invoices/"+inv+"/pay?token=") || !strings.HasSuffix(loc, "&back=%2Fportal%2Finvoices") {
					t.Fatalf("the invoice's pay page: %d %q", p.status, loc)
				}
				page := b.get(strings.TrimPrefix(loc, e.Server.URL))
				if page.status == 302 || page.status == 303 {
					page = b.get("/customer-portal/invoices/" + strings.TrimPrefix(page.header.Get("Location"), "../"))
				}
				want(t, page, 200, `href="/portal/invoices"`, "Zurück zu Ihrem Konto") // the customer's language
				evil := b.get(strings.Replace(strings.TrimPrefix(loc, e.Server.URL), "back=%2Fportal%2Finvoices", "back=https%3A%2F%2Fevil.example%2Fportal", 1))
				if strings.Contains(evil.body+evil.header.Get("Location"), "evil.example") {
					t.Fatal("a hosted page links back outside the portal")
				}
			}
		}
	})
}
