package httpapi_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// setupSession opens a setup session and returns it with its portal path (the url without the host).
func (k catalogKit) setupSession(customerID string, body map[string]any, opts ...testkit.Opt) (map[string]any, string) {
	k.t.Helper()
	d := k.e.Must(201, "POST", "/v1/customers/"+customerID+"/payment-method-setup", body, opts...).Data()
	u, err := url.Parse(d["url"].(string))
	if err != nil {
		k.t.Fatal(err)
	}
	return d, u.RequestURI()
}

// portal sends a PUT to a portal path without an API key.
func (k catalogKit) portal(path string) *testkit.Response {
	k.t.Helper()
	return k.e.Do("PUT", path, nil, testkit.APIKey(""))
}

func TestPortalSetupSessions(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		k.billingAccount("ba1", "c1")
		k.billingAccount("ba2", "c2")

		// Create: 201, one hour on the merchant clock, a url carrying the token.
		s, path := k.setupSession("c1", map[string]any{"billingAccountId": "ba1", "methodType": "card", "setAsDefault": true})
		id, _ := s["sessionId"].(string)
		token, _ := s["token"].(string)
		created, _ := time.Parse(time.RFC3339Nano, s["createdAt"].(string))
		expires, _ := time.Parse(time.RFC3339Nano, s["expiresAt"].(string))
		if !strings.HasPrefix(id, "pmss_") || s["object"] != "payment_method_setup_session" || s["status"] != "open" ||
			s["customerId"] != "c1" || s["billingAccountId"] != "ba1" || s["setAsDefault"] != true || !strings.HasPrefix(token, "hpt_") ||
			expires.Sub(created) != time.Hour || s["paymentMethodId"] != nil {
			t.Fatalf("session: %v", s)
		}
		if want := e.Server.URL + "/customer-portal/setup-sessions/" + id + "/complete?token=" + token; s["url"] != want {
			t.Fatalf("url %v, want %v", s["url"], want)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, id); !slices.Equal(ev, []string{"payment_method.setup_session.created"}) {
			t.Fatalf("events %v", ev)
		}
		evs, _ := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), e.Tenant.Sandbox, id)
		if strings.Contains(string(evs[0].Data), token) {
			t.Fatalf("the event carries the hosted token: %s", evs[0].Data)
		}

		// Missing, malformed and unknown tokens: 401.
		for _, p := range []string{
			"/customer-portal/setup-sessions/" + id + "/complete?paymentMethod=pm_card_visa",
			"/customer-portal/setup-sessions/" + id + "/complete?paymentMethod=pm_card_visa&token=",
			"/customer-portal/setup-sessions/" + id + "/complete?paymentMethod=pm_card_visa&token=garbage",
			"/customer-portal/setup-sessions/" + id + "/complete?paymentMethod=pm_card_visa&token=hpt_" + strings.Repeat("ab", 32),
			"/customer-portal/nowhere?token=garbage",
		} {
			if r := k.portal(p); r.Status != 401 || r.ErrorCode() != "unauthorized" {
				t.Fatalf("%s: %d %s", p, r.Status, r.Body)
			}
		}
		// An API key is not a portal credential.
		if r := e.Do("PUT", "/customer-portal/setup-sessions/"+id+"/complete?paymentMethod=pm_card_visa", nil); r.Status != 401 {
			t.Fatalf("api key: %d %s", r.Status, r.Body)
		}
		// Unknown tails with a good token: 404.
		for _, tail := range []string{"nowhere", "setup-sessions/" + id, "setup-sessions/" + id + "/complete/again", "setup-sessions//complete", "invoices/inv_1"} {
			if r := k.portal("/customer-portal/" + tail + "?token=" + token); r.Status != 404 || r.ErrorCode() != "not_found" {
				t.Fatalf("%s: %d %s", tail, r.Status, r.Body)
			}
		}
		// Wrong method on the portal: 405. GET of the session's url is its hosted setup page.
		if r := e.Do("POST", path, nil, testkit.APIKey("")); r.Status != 405 || r.Header.Get("Allow") != "GET, PUT" {
			t.Fatalf("POST: %d %v", r.Status, r.Header.Get("Allow"))
		}
		if r := e.Do("GET", path, nil, testkit.APIKey("")); r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET: %d %s", r.Status, r.Body)
		}
		// Missing, unknown and raw-card paymentMethod: 422 listing the test tokens.
		for pm, reason := range map[string]string{"": "required", "pm_card_amex": "invalid_enum", "4242424242424242": "raw_card_number", "4242 4242 4242 4242": "raw_card_number"} {
			r := k.portal(path + "&paymentMethod=" + url.QueryEscape(pm))
			wantFields(t, r, "query:paymentMethod:"+reason)
			if allowed, _ := r.ErrorDetails()["allowedValues"].([]any); len(allowed) != len(remit.TestCards) || strings.Contains(string(r.Body), "4242 4242") || strings.Contains(string(r.Body), "4242424242424242") {
				t.Fatalf("%q: %s", pm, r.Body)
			}
		}

		// Complete with each test token; brand and last4 come from the token.
		ba := e.Must(200, "GET", "/v1/billing-accounts/ba1", nil).Data()
		if ba["defaultPaymentMethod"] != nil {
			t.Fatalf("default before: %v", ba)
		}
		cards := []struct{ token, brand, last4 string }{
			{"pm_card_visa", "visa", "4242"}, {"pm_card_mastercard", "mastercard", "4444"},
			{"pm_card_chargeDeclined", "visa", "0002"}, {"pm_card_insufficientFunds", "visa", "9995"},
		}
		var visaPM string
		for i, c := range cards {
			p := path
			if i > 0 { // later sessions without setAsDefault: the first card stays the default
				_, p = k.setupSession("c1", map[string]any{"billingAccountId": "ba1"})
			}
			r := k.portal(p + "&paymentMethod=" + c.token)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", c.token, r.Status, r.Body)
			}
			d := r.Data()
			pm, _ := d["paymentMethod"].(map[string]any)
			if d["status"] != "completed" || pm["brand"] != c.brand || pm["last4"] != c.last4 || d["paymentMethodId"] != pm["paymentMethodId"] ||
				!strings.HasPrefix(pm["paymentMethodId"].(string), "pm_") || d["token"] != nil || r.JSON()["requestId"] != r.Header.Get("Request-Id") {
				t.Fatalf("%s: %s", c.token, r.Body)
			}
			if i == 0 {
				visaPM = pm["paymentMethodId"].(string)
				if ev := k.eventTypes(e.Tenant.Sandbox, visaPM); !slices.Equal(ev, []string{"payment_method.attached"}) {
					t.Fatalf("events %v", ev)
				}
			}
			got, err := e.App.Catalog.GetPaymentMethod(context.Background(), mustMerchant(t, e, e.Tenant.Sandbox), pm["paymentMethodId"].(string))
			if err != nil || got.Token != c.token || got.CustomerID != "c1" || got.BillingAccountID == nil || *got.BillingAccountID != "ba1" {
				t.Fatalf("stored method %+v %v", got, err)
			}
		}
		ba = e.Must(200, "GET", "/v1/billing-accounts/ba1", nil).Data()
		if def, _ := ba["defaultPaymentMethod"].(map[string]any); def["paymentMethodId"] != visaPM || def["last4"] != "4242" {
			t.Fatalf("default after: %v", ba)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, id); !slices.Equal(ev, []string{"payment_method.setup_session.created", "payment_method.setup_session.completed"}) {
			t.Fatalf("events %v", ev)
		}
		// setAsDefault replaces the default.
		_, p := k.setupSession("c1", map[string]any{"billingAccountId": "ba1", "setAsDefault": true})
		mc := k.portal(p + "&paymentMethod=pm_card_mastercard").Data()["paymentMethodId"]
		ba = e.Must(200, "GET", "/v1/billing-accounts/ba1", nil).Data()
		if def, _ := ba["defaultPaymentMethod"].(map[string]any); def["paymentMethodId"] != mc || def["brand"] != "mastercard" {
			t.Fatalf("setAsDefault: %v", ba)
		}

		// Complete twice: 409 with the current state.
		r := k.portal(path + "&paymentMethod=pm_card_visa")
		if r.Status != 409 || r.ErrorDetails()["currentState"] != "completed" {
			t.Fatalf("twice: %d %s", r.Status, r.Body)
		}
		// The token of another session: 403.
		other, otherPath := k.setupSession("c2", map[string]any{"billingAccountId": "ba2"})
		otherToken := other["token"].(string)
		if r := k.portal("/customer-portal/setup-sessions/" + id + "/complete?paymentMethod=pm_card_visa&token=" + otherToken); r.Status != 403 || r.ErrorCode() != "forbidden" {
			t.Fatalf("other session's token: %d %s", r.Status, r.Body)
		}
		if r := k.portal("/customer-portal/setup-sessions/pmss_unknown/complete?paymentMethod=pm_card_visa&token=" + otherToken); r.Status != 403 {
			t.Fatalf("unknown session: %d %s", r.Status, r.Body)
		}
		// The invoice route: a setup-session token is for another resource; an invoice token
		// reaches the payment of its invoice (here none exists: 404). See payments_test.go.
		if r := k.portal("/customer-portal/invoices/inv_1/pay?token=" + otherToken); r.Status != 403 {
			t.Fatalf("invoice with a session token: %d %s", r.Status, r.Body)
		}
		var invToken string
		err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			var err error
			invToken, err = e.App.Access.IssueHostedToken(ctx, tx, e.Tenant.Sandbox, remit.HostedInvoice, "inv_1", time.Now().Add(24*time.Hour))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if r := k.portal("/customer-portal/invoices/inv_1/pay?token=" + invToken); r.Status != 404 || r.ErrorCode() != "not_found" {
			t.Fatalf("invoice pay: %d %s", r.Status, r.Body)
		}
		if r := k.portal("/customer-portal/invoices/inv_2/pay?token=" + invToken); r.Status != 403 {
			t.Fatalf("another invoice: %d %s", r.Status, r.Body)
		}

		// An expired session: 409 expired; a day later its token is no longer accepted (401).
		e.AdvanceClock(3601)
		r = k.portal(otherPath + "&paymentMethod=pm_card_visa")
		if r.Status != 409 || r.ErrorDetails()["currentState"] != "expired" {
			t.Fatalf("expired: %d %s", r.Status, r.Body)
		}
		e.AdvanceClock(24 * 3600)
		if r := k.portal(otherPath + "&paymentMethod=pm_card_visa"); r.Status != 401 {
			t.Fatalf("expired token: %d %s", r.Status, r.Body)
		}
	})
}

func mustMerchant(t testing.TB, e *testkit.Env, id string) remit.MerchantAccount {
	t.Helper()
	m, err := e.App.DB.Read(context.Background()).GetMerchantAccount(context.Background(), id, store.Unlocked)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSetupSessionRules(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		k.billingAccount("ba2", "c2")
		setup := "/v1/customers/c1/payment-method-setup"
		e.Must(404, "POST", "/v1/customers/nope/payment-method-setup", map[string]any{})
		if r := e.Must(404, "POST", setup, map[string]any{"billingAccountId": "ba_nope"}); r.ErrorDetails()["field"] != "billingAccountId" {
			t.Fatalf("unknown billing account: %s", r.Body)
		}
		wantFields(t, e.Do("POST", setup, map[string]any{"billingAccountId": "ba2"}), "body:billingAccountId:customer_mismatch")
		wantFields(t, e.Do("POST", setup, map[string]any{"setAsDefault": true}), "body:setAsDefault:requires_billing_account")
		wantFields(t, e.Do("POST", setup, map[string]any{"methodType": "sepa_debit"}), "body:methodType:invalid_enum")
		wantFields(t, e.Do("POST", setup, map[string]any{"cardNumber": "4242424242424242"}), "body:cardNumber:unknown_field")
		other := e.NewTenant("Other", false)
		e.Must(404, "POST", setup, map[string]any{}, testkit.As(other))

		// Without a billing account the method is attached to the customer only.
		s, path := k.setupSession("c1", map[string]any{})
		if s["billingAccountId"] != nil || s["methodType"] != "card" || s["setAsDefault"] != false {
			t.Fatalf("session: %v", s)
		}
		d := k.portal(path + "&paymentMethod=pm_card_visa").Data()
		pm, err := e.App.Catalog.GetPaymentMethod(context.Background(), mustMerchant(t, e, e.Tenant.Sandbox), d["paymentMethodId"].(string))
		if err != nil || pm.CustomerID != "c1" || pm.BillingAccountID != nil {
			t.Fatalf("method %+v %v", pm, err)
		}

		// Test cards exist only in the sandbox: production sessions cannot be completed with one.
		k.customer("pc", testkit.Production())
		_, ppath := k.setupSession("pc", map[string]any{}, testkit.Production())
		if r := k.portal(ppath + "&paymentMethod=pm_card_visa"); r.Status != 403 {
			t.Fatalf("production: %d %s", r.Status, r.Body)
		}
	})
}
