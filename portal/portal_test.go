package portal_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/locale"
)

type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

type page struct {
	status int
	header http.Header
	body   string
}

func newBrowser(t *testing.T, e *testkit.Env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: e.Server.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func want(t *testing.T, p page, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d: %.600s", p.status, status, p.body)
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			t.Fatalf("the page lacks %q: %.1500s", s, p.body)
		}
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF field: %.800s", p.body)
	}
	return m[1]
}

// subscribed creates customer id with a monthly "Pro plan" subscription and returns its ID.
func subscribed(t *testing.T, e *testkit.Env, id string, opts ...testkit.Opt) string {
	t.Helper()
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Ada " + id, "preferredLocale": "de"}, opts...)
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD",
		"collectionMethod": "send_invoice"}, opts...)
	q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": id, "billingAccountId": "ba-" + id,
		"currency": "USD", "lines": []any{map[string]any{"priceId": "plan"}}}, opts...).Data()
	return e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}, opts...).Data()["subscriptionId"].(string)
}

func session(t *testing.T, e *testkit.Env, body map[string]any, opts ...testkit.Opt) (map[string]any, string) {
	t.Helper()
	s := e.Must(201, "POST", "/v1/customer-portal-sessions", body, opts...).Data()
	u, err := url.Parse(s["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return s, u.RequestURI()
}

// A session made by the API opens the portal once, in the session's language and the merchant's
// name, with its way back; the customer cancels at the period's end after a confirmation, the
// event names the session as its actor.
func TestPortalSessionAndCancel(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
		sub := subscribed(t, e, "c")
		other := subscribed(t, e, "d")
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"branding": map[string]any{"displayName": "Acme Shop", "primaryColor": "#aa3300"}})
		s, start := session(t, e, map[string]any{"customerId": "c", "returnUrl": "https://shop.example/account", "locale": "fr"})
		if s["locale"] != "fr" || !strings.HasPrefix(s["sessionId"].(string), "cps_") || s["returnUrl"] != "https://shop.example/account" {
			t.Fatalf("session %v", s)
		}

		b := newBrowser(t, e)
		opened := b.get(start)
		if opened.status != 303 || opened.header.Get("Location") != "/portal" {
			t.Fatalf("opening the URL: %d %s", opened.status, opened.header.Get("Location"))
		}
		cookie := opened.header.Get("Set-Cookie")
		if !strings.Contains(cookie, "remit_portal=") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") || !strings.Contains(cookie, "Path=/portal") {
			t.Fatalf("cookie %q", cookie)
		}
		want(t, newBrowser(t, e).get(start), 401, "Ce lien a expiré") // once
		up := e.Must(200, "GET", "/v1/customers/c/upcoming-invoice?subscriptionId="+sub, nil).Data()
		home := b.get("/portal")
		want(t, home, 200, "Vos abonnements", "Pro plan", "Acme Shop", `href="https://shop.example/account"`, "Retour à Acme Shop", "Actif",
			"Prochaine facture : "+locale.For("fr").Money(int64(up["total"].(float64)), "USD"))
		if strings.Contains(home.body, "Ada d") {
			t.Fatal("another customer on the page")
		}
		if css := b.get("/portal/theme.css"); !strings.Contains(css.body, "#aa3300") {
			t.Fatalf("theme %q", css.body)
		}

		// Another customer's subscription is not there at all.
		want(t, b.get("/portal/subscriptions/"+other+"/cancel"), 404, "Introuvable")
		want(t, b.post("/portal/subscriptions/"+other+"/cancel", url.Values{"csrf": {csrfOf(t, b.get("/portal/subscriptions/"+sub+"/cancel"))}}), 404)
		if e.Must(200, "GET", "/v1/subscriptions/"+other, nil).Data()["cancelAt"] != nil {
			t.Fatal("another customer's subscription was canceled")
		}

		confirm := b.get("/portal/subscriptions/" + sub + "/cancel")
		want(t, confirm, 200, "Résilier votre abonnement", "Il reste actif jusqu’au", "Oui, résilier")
		// Without the form's token (or with another): refused, nothing changed.
		want(t, b.post("/portal/subscriptions/"+sub+"/cancel", url.Values{}), 403, "Ce formulaire n’est plus valable")
		want(t, b.post("/portal/subscriptions/"+sub+"/cancel", url.Values{"csrf": {strings.Repeat("0", 64)}}), 403)
		if e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["cancelAt"] != nil {
			t.Fatal("canceled without a valid form")
		}
		done := b.post("/portal/subscriptions/"+sub+"/cancel", url.Values{"csrf": {csrfOf(t, confirm)}})
		if done.status != 303 || done.header.Get("Location") != "/portal?done=canceled" {
			t.Fatalf("cancel: %d %s", done.status, done.body)
		}
		want(t, b.get("/portal?done=canceled"), 200, "Votre abonnement est résilié.", "Prend fin le")
		got := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()
		if got["cancelAt"] != got["currentPeriodEnd"] || got["status"] != "active" {
			t.Fatalf("after the portal's cancel: %v", got)
		}
		evs := e.Must(200, "GET", "/v1/events?type=subscription.updated", nil).Data()["items"].([]any)
		a := evs[0].(map[string]any)["actor"].(map[string]any)
		if a["type"] != "customer_portal" || a["id"] != s["sessionId"] {
			t.Fatalf("the cancel's actor %v, want the session %s", a, s["sessionId"])
		}

		// Undo: it renews again.
		after := b.get("/portal")
		want(t, after, 200, "Garder mon abonnement")
		want(t, b.post("/portal/subscriptions/"+sub+"/keep", url.Values{}), 403)
		kept := b.post("/portal/subscriptions/"+sub+"/keep", url.Values{"csrf": {csrfOf(t, after)}})
		if kept.status != 303 || kept.header.Get("Location") != "/portal?done=kept" {
			t.Fatalf("keep: %d %s", kept.status, kept.body)
		}
		if got := e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data(); got["cancelAt"] != nil {
			t.Fatalf("after keep: %v", got)
		}
		want(t, b.post("/portal/subscriptions/"+sub+"/keep", url.Values{"csrf": {csrfOf(t, after)}}), 409)
		want(t, b.post("/portal/subscriptions/"+other+"/keep", url.Values{"csrf": {csrfOf(t, after)}}), 404)

		// The portal's cookie is no API credential.
		req, _ := http.NewRequest("GET", e.Server.URL+"/v1/customers?environment=sandbox&merchantAccountId="+e.Tenant.Sandbox, nil)
		if r := b.do(req); r.status != 401 {
			t.Fatalf("/v1 with the portal's session: %d", r.status)
		}
	})
}

// The URL expires after five minutes; the browser's session after an idle hour; a feature turned
// off has no page and its form is refused; a sandbox session never reaches production.
func TestPortalRefusals(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 4900})
		sub := subscribed(t, e, "c")

		_, late := session(t, e, map[string]any{"customerId": "c"})
		e.AdvanceClock(5*60 + 1)
		want(t, newBrowser(t, e).get(late), 401, "Dieser Link ist abgelaufen") // the customer's preferredLocale

		_, start := session(t, e, map[string]any{"customerId": "c", "locale": "en"})
		b := newBrowser(t, e)
		b.get(start)
		confirm := b.get("/portal/subscriptions/" + sub + "/cancel")
		want(t, confirm, 200, "Yes, cancel it")
		e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{"subscriptionCancel": map[string]any{"enabled": false, "mode": "at_period_end", "prorate": true}})
		want(t, b.get("/portal/subscriptions/"+sub+"/cancel"), 404)
		want(t, b.post("/portal/subscriptions/"+sub+"/cancel", url.Values{"csrf": {csrfOf(t, confirm)}}), 403, "Not available")
		if strings.Contains(b.get("/portal").body, "/cancel") {
			t.Fatal("the overview still offers the cancel")
		}
		if e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["cancelAt"] != nil {
			t.Fatal("canceled while the configuration forbids it")
		}

		// A sandbox session does not know production's IDs (nor production its own customer's
		// sandbox namesake).
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "p", "name": "Prod"}, testkit.Production())
		e.Must(404, "POST", "/v1/customer-portal-sessions", map[string]any{"customerId": "c"}, testkit.Production())
		want(t, b.get("/portal/subscriptions/sub_nothing/cancel"), 404)

		// An idle hour: scs writes the session's expiry an hour ahead; past it, signed out.
		if _, err := e.App.DB.SQL().ExecContext(context.Background(), `UPDATE operator_sessions SET expires_at = 1`); err != nil {
			t.Fatal(err)
		}
		want(t, b.get("/portal"), 401, "You are signed out")
		_ = time.Second
	})
}
