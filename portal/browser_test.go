package portal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/locale"
)

// In headless Chromium (one browser per store): the customer signs in through a session URL, sees
// their subscription, the next invoice with its lines and the usage so far, and their balance; adds
// a card through the hosted setup page and comes back; pays the open invoice on its hosted page and
// comes back; adds a second card, makes it the default and removes the first; switches plan after
// the confirmation (what it credits and bills is the preview's, to the cent); cancels at the
// period's end and undoes it; pauses and resumes; edits the billing details and address. Then the
// same pages in French. Every portal page is checked with axe-core and photographed at desktop
// width and 375 px wide: into docs/portal-screenshots/ with REMIT_PORTAL_SCREENSHOTS=1 (SQLite),
// else into ./artifacts/.
func TestPortalInBrowser(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		sub := browserFixture(t, e)
		b := testkit.StartBrowser(t)
		w := &walk{t: t, e: e, b: b, lang: "en"}
		w.signIn("Your account")
		w.overview(sub)
		w.cards()
		w.payInvoice()
		w.switchCards()
		w.changePlan(sub)
		w.cancelAndKeep()
		w.pauseAndResume(sub)
		w.details()
		w.expired()

		w = &walk{t: t, e: e, b: b, lang: "fr"}
		w.frenchPages(sub)
	})
}

// browserFixture: plans Pro and Team, a usage price, customer c subscribed (send_invoice) with its
// first invoice open five days into the period, usage and a prepaid balance, and a portal
// configuration with every feature on.
func browserFixture(t *testing.T, e *testkit.Env) string {
	e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "calls", "aggregation": "sum"})
	for _, p := range []map[string]any{
		{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 4900},
		{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 9000},
		{"priceId": "calls", "productId": "api", "name": "API calls", "priceType": "usage_metered", "currency": "USD", "billingInterval": "month", "unitAmount": 5, "meterId": "calls"},
	} {
		e.Must(200, "POST", "/v1/prices", p)
	}
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "Ada Lovelace", "email": "ada@example.com", "preferredLocale": "en"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c", "customerId": "c", "currency": "USD", "collectionMethod": "send_invoice"})
	q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c", "billingAccountId": "ba-c",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "plan"}, map[string]any{"priceId": "calls"}}}).Data()
	sub := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()["subscriptionId"].(string)
	e.AdvanceClock(2 * 3600) // the first invoice finalizes itself: open
	e.AdvanceClock(5 * 24 * 3600)
	e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c", "meterId": "calls", "quantity": 120})
	e.Must(201, "POST", "/v1/customers/c/balance/grant", map[string]any{"entryId": "g1", "currency": "USD", "amount": 1500})
	e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{
		"customerUpdate":     map[string]any{"enabled": true, "allowedFields": []any{"name", "email", "address", "preferredLocale"}},
		"subscriptionPause":  map[string]any{"enabled": true},
		"subscriptionUpdate": map[string]any{"enabled": true, "prices": []any{"team"}, "prorationBehavior": "create_prorations"},
		"branding":           map[string]any{"displayName": "Acme Shop", "primaryColor": "#7a3e00"},
		"links":              map[string]any{"termsOfServiceUrl": "https://shop.example/terms"},
	})
	return sub
}

// walk is one language's tour of the portal in the browser.
type walk struct {
	t     *testing.T
	e     *testkit.Env
	b     *testkit.Browser
	lang  string
	start string // the session's URL, used once
}

const waitFor = 10 * time.Second

// shot checks the page with axe and photographs it at desktop width and at 375 px.
func (w *walk) shot(name string) {
	w.t.Helper()
	testkit.AxeCheck(w.t, w.b, w.lang+" "+name)
	dir, prefix := filepath.Join("..", "artifacts"), "portal-"+string(w.e.Store)+"-"
	if os.Getenv("REMIT_PORTAL_SCREENSHOTS") != "" && w.e.Store == testkit.SQLite {
		dir, prefix = filepath.Join("..", "docs", "portal-screenshots"), ""
	}
	w.b.Screenshot(filepath.Join(dir, prefix+w.lang+"-"+name+"-desktop.png"))
	w.b.SetWindowSize(375, 740)
	w.b.Screenshot(filepath.Join(dir, prefix+w.lang+"-"+name+"-375.png"))
	w.b.SetWindowSize(1024, 768)
}

func (w *walk) open(path string, want ...string) string {
	w.t.Helper()
	w.b.Open(w.e.Server.URL + path)
	return w.b.WaitText("main", waitFor, want...)
}

// click clicks the element and waits for the page's main to read one of want.
func (w *walk) click(css string, want ...string) string {
	w.t.Helper()
	w.b.ClickWhenReady(css, waitFor)
	return w.b.WaitText("main", waitFor, want...)
}

func (w *walk) signIn(heading string) {
	w.t.Helper()
	s := w.e.Must(201, "POST", "/v1/customer-portal-sessions", map[string]any{"customerId": "c", "locale": w.lang, "returnUrl": "https://shop.example/account"}).Data()
	w.start = s["url"].(string)
	w.b.SetWindowSize(1024, 768)
	w.b.Open(w.start)
	w.b.WaitText("h1", waitFor, heading)
}

func (w *walk) overview(sub string) {
	t := w.t
	up := w.e.Must(200, "GET", "/v1/customers/c/upcoming-invoice?subscriptionId="+sub, nil).Data()
	tr := locale.For("en")
	main := w.open("/portal", "Your subscriptions")
	wantText(t, "the overview", main, "Pro plan", "Active", "Next invoice: "+tr.Money(int64(up["total"].(float64)), "USD"),
		"What the next invoice bills", "API calls (used so far)", "120", "Your balance", "Available: $15.00", "You have no saved card.", "ada@example.com")
	if back := w.b.Find("a.back").Text(); back != "Back to Acme Shop" {
		t.Fatalf("the way back reads %q", back)
	}
	w.shot("overview")
}

// cards: no card yet; one added through the hosted setup page, which links back.
func (w *walk) cards() {
	w.open("/portal/payment-methods", "You have no saved card.")
	w.shot("payment-methods-empty")
	w.b.ClickWhenReady("main form[action$='/add'] button", waitFor)
	w.b.WaitText("h2", waitFor, "card", "Card")
	w.b.ClickWhenReady("button[data-token='pm_card_visa']", waitFor)
	w.b.WaitText("#setup-status", waitFor, "Card saved")
	main := w.click("#back", "Your payment methods")
	wantText(w.t, "the payment methods", main, "Visa •••• 4242", "Charged by default")
}

// payInvoice: the open invoice paid on its hosted page, then back to the history.
func (w *walk) payInvoice() {
	t := w.t
	open := w.e.Must(200, "GET", "/v1/invoices?customerId=c&status=open", nil).Data()["items"].([]any)
	if len(open) != 1 {
		t.Fatalf("%d open invoices", len(open))
	}
	id := open[0].(map[string]any)["invoiceId"].(string)
	w.open("/portal/invoices", "Your invoices")
	wantText(t, "the invoices", w.b.Find("main").Text(), "To pay")
	w.shot("invoices")
	w.b.ClickWhenReady("main a.button", waitFor)
	w.b.WaitText("#pay", waitFor, "Pay")
	w.b.ClickWhenReady("#pay", waitFor)
	w.b.WaitText("#pay-status", 15*time.Second, "Payment received")
	w.b.WaitText("main", waitFor, "Paid on") // the page replaced by the paid invoice: its links are new
	main := w.click("#back", "Your invoices")
	wantText(t, "the invoices after paying", main, "Paid")
	if st := w.e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["status"]; st != "paid" {
		t.Fatalf("invoice %s is %v after paying", id, st)
	}
}

// switchCards: a second card, made the default; the first removed after a confirmation.
func (w *walk) switchCards() {
	t := w.t
	w.open("/portal/payment-methods", "Visa")
	w.b.ClickWhenReady("main form[action$='/add'] button", waitFor)
	w.b.WaitText("h2", waitFor, "card", "Card")
	w.b.ClickWhenReady("button[data-token='pm_card_mastercard']", waitFor)
	w.b.WaitText("#setup-status", waitFor, "Card saved")
	w.click("#back", "Mastercard •••• 4444")
	w.shot("payment-methods")
	w.click("li[data-last4='4444'] form button", "This card is now the one we charge.")
	ba := w.e.Must(200, "GET", "/v1/billing-accounts/ba-c", nil).Data()
	if d, _ := ba["defaultPaymentMethod"].(map[string]any); d == nil || d["last4"] != "4444" {
		t.Fatalf("default after the portal's choice: %v", ba["defaultPaymentMethod"])
	}
	w.click("li[data-last4='4242'] a.button", "Remove this card")
	w.shot("remove-card")
	main := w.click("main form button[type=submit]", "The card is removed.")
	if strings.Contains(main, "4242") {
		t.Fatalf("the removed card is still listed: %s", main)
	}
	methods := w.e.Must(200, "GET", "/v1/customers/c/payment-methods", nil).Data()["items"].([]any)
	if len(methods) != 1 || methods[0].(map[string]any)["last4"] != "4444" {
		t.Fatalf("payment methods after the removal: %v", methods)
	}
}

// changePlan: the confirmation shows the preview, and the change credits and bills exactly that.
func (w *walk) changePlan(sub string) {
	t := w.t
	w.open("/portal", "Change plan")
	w.click("a[href$='/change']", "Team plan")
	w.shot("change")
	pv := w.e.Must(200, "POST", "/v1/subscriptions/"+sub+"/change/preview", map[string]any{"items": []any{
		map[string]any{"priceId": "team"}, map[string]any{"priceId": "calls"}}}).Data()
	var credit int64
	for _, cn := range pv["creditNotes"].([]any) {
		credit += int64(cn.(map[string]any)["total"].(float64))
	}
	next := int64(pv["upcomingInvoice"].(map[string]any)["total"].(float64))
	tr := locale.For("en")
	main := w.click("a[href$='price=team']", "What this change does")
	wantText(t, "the change's confirmation", main, "Credited for the unused time: "+tr.Money(credit, "USD"), "Your next invoice: "+tr.Money(next, "USD"))
	w.shot("change-confirm")
	before := len(w.e.Must(200, "GET", "/v1/credit-notes?customerId=c", nil).Data()["items"].([]any))
	w.click("main form button[type=submit]", "Your plan is changed.")
	cns := w.e.Must(200, "GET", "/v1/credit-notes?customerId=c", nil).Data()["items"].([]any)
	var credited int64
	for _, cn := range cns[:len(cns)-before] { // newest first
		credited += int64(cn.(map[string]any)["total"].(float64))
	}
	if credited != credit {
		t.Fatalf("credited %d, the confirmation said %d", credited, credit)
	}
	if up := int64(w.e.Must(200, "GET", "/v1/customers/c/upcoming-invoice?subscriptionId="+sub, nil).Data()["total"].(float64)); up != next {
		t.Fatalf("next invoice %d, the confirmation said %d", up, next)
	}
}

func (w *walk) cancelAndKeep() {
	w.open("/portal", "Your subscriptions")
	w.click("a[href$='/cancel']", "Cancel your subscription")
	w.shot("cancel")
	w.click("main form button[type=submit]", "Your subscription is canceled.")
	w.click("form[action$='/keep'] button", "Your subscription will renew as before.")
	if got := w.e.Must(200, "GET", "/v1/customers/c/upcoming-invoice", nil).Data(); got["total"] == nil {
		w.t.Fatalf("no renewal after the undo: %v", got)
	}
}

func (w *walk) pauseAndResume(sub string) {
	w.open("/portal", "Your subscriptions")
	w.click("a[href$='/pause']", "Pause your subscription")
	w.shot("pause")
	w.click("main form button[type=submit]", "Your subscription is paused.")
	if st := w.e.Must(200, "GET", "/v1/subscriptions/"+sub, nil).Data()["status"]; st != "paused" {
		w.t.Fatalf("status after the pause %v", st)
	}
	w.click("a[href$='/resume']", "Resume your subscription")
	w.shot("resume")
	w.click("main form button[type=submit]", "Your subscription is active again.")
}

func (w *walk) details() {
	t := w.t
	w.open("/portal", "Your billing details")
	w.click("a[href='/portal/details']", "Billing address")
	w.shot("details")
	for css, v := range map[string]string{"#f-line1": "12 Analytical Row", "#f-city": "London", "#f-postal": "EC1A 1BB", "#f-country": "GB"} {
		w.b.Find(css).Type(v)
	}
	w.click("main form button[type=submit]", "Your billing details are saved.")
	a, _ := w.e.Must(200, "GET", "/v1/customers/c", nil).Data()["address"].(map[string]any)
	if a == nil || a["line1"] != "12 Analytical Row" || a["country"] != "GB" || a["postalCode"] != "EC1A 1BB" {
		t.Fatalf("address after the portal's form: %v", a)
	}
	wantText(t, "the overview after the details", w.open("/portal", "Your billing details"), "12 Analytical Row", "EC1A 1BB London", "United Kingdom",
		"We charge Mastercard •••• 4444.")
}

// expired: the session's URL a second time.
func (w *walk) expired() {
	w.b.Open(w.start)
	w.b.WaitText("main", waitFor, "This link has expired", "Ce lien a expiré")
	w.shot("link-expired")
}

// frenchPages: every page again, in French (the actions were walked in English).
func (w *walk) frenchPages(sub string) {
	w.signIn("Votre compte")
	wantText(w.t, "l’aperçu", w.b.Find("main").Text(), "Nous débitons Mastercard •••• 4444.", "Royaume-Uni")
	w.shot("overview")
	w.open("/portal/payment-methods", "Vos moyens de paiement")
	w.shot("payment-methods")
	w.click("main a.button", "Supprimer cette carte")
	w.shot("remove-card")
	w.open("/portal/invoices", "Vos factures")
	w.shot("invoices")
	w.open("/portal/subscriptions/"+sub+"/cancel", "Résilier votre abonnement")
	w.shot("cancel")
	w.e.Must(200, "PUT", "/v1/customer-portal-configuration", map[string]any{
		"customerUpdate":     map[string]any{"enabled": true, "allowedFields": []any{"name", "email", "address", "preferredLocale"}},
		"subscriptionPause":  map[string]any{"enabled": true},
		"subscriptionUpdate": map[string]any{"enabled": true, "prices": []any{"plan"}, "prorationBehavior": "create_prorations"},
		"branding":           map[string]any{"displayName": "Acme Shop", "primaryColor": "#7a3e00"},
	})
	w.open("/portal/subscriptions/"+sub+"/change", "Pro plan")
	w.shot("change")
	w.click("a[href$='price=plan']", "Ce que fait ce changement", "Crédité")
	w.shot("change-confirm")
	w.open("/portal/subscriptions/"+sub+"/pause", "Mettre votre abonnement en pause")
	w.shot("pause")
	w.e.Must(200, "POST", "/v1/subscriptions/"+sub+"/pause", map[string]any{})
	w.open("/portal/subscriptions/"+sub+"/resume", "Reprendre")
	w.shot("resume")
	w.open("/portal/details", "Adresse de facturation")
	w.shot("details")
	w.expired()
}

func wantText(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Fatalf("%s lacks %q:\n%s", what, s, text)
		}
	}
}
