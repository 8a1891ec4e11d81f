package httpapi_test

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v83"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// fakeVault keeps payment methods the way Stripe does, in memory, for the outcome paths
// stripe-mock's fixtures cannot play: customers, SetupIntents, and the browser confirming a
// SetupIntent with Stripe.js (confirm). FinishSetup reads its SetupIntent through the connector's
// own rule (processor.SavedFromSetupIntent). stripe-mock checks the real connector's requests
// (processor/stripe_test.go).
type fakeVault struct {
	mu        sync.Mutex
	customers map[string]string     // idempotency ref → cus_
	setups    map[string]*fakeSetup // idempotency ref → setup
	byRef     map[string]*fakeSetup // seti_ → setup
	requests  []processor.CustomerRequest
	detached  []processor.DetachRequest           // every DetachMethod call
	detach    func(processor.DetachRequest) error // nil: detaches succeed
}

type fakeSetup struct {
	ref, customer, secret, account string
	status                         stripe.SetupIntentStatus
	method                         *stripe.PaymentMethod
}

// reset forgets everything (each store's run of a test starts afresh).
func (v *fakeVault) reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.customers, v.setups, v.byRef, v.requests, v.detached, v.detach = nil, nil, nil, nil, nil, nil
	v.init()
}

func (v *fakeVault) init() {
	if v.customers == nil {
		v.customers, v.setups, v.byRef = map[string]string{}, map[string]*fakeSetup{}, map[string]*fakeSetup{}
	}
}

func (v *fakeVault) CreateCustomer(_ context.Context, req processor.CustomerRequest) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	if id, ok := v.customers[req.IdempotencyRef]; ok {
		return id, nil
	}
	v.requests = append(v.requests, req)
	id := fmt.Sprintf("cus_fake%d", len(v.customers)+1)
	v.customers[req.IdempotencyRef] = id
	return id, nil
}

func (v *fakeVault) StartSetup(_ context.Context, req processor.SetupRequest) (processor.Setup, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	s, ok := v.setups[req.IdempotencyRef]
	if !ok {
		ref := fmt.Sprintf("seti_fake%d", len(v.setups)+1)
		s = &fakeSetup{ref: ref, customer: req.Customer, secret: ref + "_secret_x", account: req.Account, status: "requires_payment_method"}
		v.setups[req.IdempotencyRef], v.byRef[ref] = s, s
	}
	return processor.Setup{Reference: s.ref, ClientSecret: s.secret}, nil
}

func (v *fakeVault) FinishSetup(_ context.Context, req processor.FinishSetupRequest) (processor.SavedMethod, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	s, ok := v.byRef[req.Reference]
	if !ok {
		return processor.SavedMethod{}, fmt.Errorf("no such setupintent %s", req.Reference)
	}
	return processor.SavedFromSetupIntent(&stripe.SetupIntent{ID: s.ref, Status: s.status, PaymentMethod: s.method,
		Customer: &stripe.Customer{ID: s.customer}}, req)
}

func (v *fakeVault) DetachMethod(_ context.Context, req processor.DetachRequest) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.detached = append(v.detached, req)
	if v.detach != nil {
		return v.detach(req)
	}
	return nil
}

func (v *fakeVault) Element() processor.Element {
	return processor.NewStripe(processor.StripeConfig{PublishableKey: "pk_test_fake"}).Element()
}

// confirm is the browser confirming the SetupIntent of clientSecret with Stripe.js: the card is
// saved as pm (succeeded), or waits for 3-D Secure (requires_action).
func (v *fakeVault) confirm(t *testing.T, clientSecret, pm, last4 string, status stripe.SetupIntentStatus) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.byRef {
		if s.secret == clientSecret {
			s.status, s.method = status, &stripe.PaymentMethod{ID: pm, Card: &stripe.PaymentMethodCard{Brand: "visa", Last4: last4}}
			return
		}
	}
	t.Fatalf("no setup with client secret %q", clientSecret)
}

var clientSecretAttr = regexp.MustCompile(`data-client-secret="([^"]+)"`)

// openSetupPage opens the hosted setup page of a production session (its url, as a browser would)
// and returns the client secret the page confirms the SetupIntent with.
func openSetupPage(t *testing.T, e *testkit.Env, path string) (string, *testkit.Response) {
	t.Helper()
	r := e.Do("GET", path, nil, testkit.APIKey(""))
	if r.Status != 200 {
		t.Fatalf("setup page: %d %s", r.Status, r.Body)
	}
	m := clientSecretAttr.FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no card element on the page: %s", r.Body)
	}
	return html.UnescapeString(string(m[1])), r
}

// saveCard attaches a card to billing account "ba-"+customer as a production customer does: the
// setup session's page, the card confirmed with the processor, the session completed.
func saveCard(t *testing.T, e *testkit.Env, v *fakeVault, customerID, pm string) {
	t.Helper()
	k := newCatalogKit(t, e)
	_, path := k.setupSession(customerID, map[string]any{"billingAccountId": "ba-" + customerID, "setAsDefault": true}, testkit.Production())
	secret, _ := openSetupPage(t, e, path)
	v.confirm(t, secret, pm, "4242", stripe.SetupIntentStatusSucceeded)
	e.Must(200, "PUT", path+"&paymentMethod="+pm, nil, testkit.APIKey(""))
}

// vaultCharges is a Stripe-like connector for these tests: it keeps payment methods (fakeVault)
// and charges succeed, recording what they were asked.
type vaultCharges struct {
	fakeVault
	mu       sync.Mutex
	charged  []processor.ChargeRequest
	refunded []processor.RefundRequest                                     // every Refund call
	refund   func(processor.RefundRequest) (processor.RefundResult, error) // nil: refunds succeed
}

func (*vaultCharges) Name() string { return "stripe" }
func (c *vaultCharges) Charge(_ context.Context, req processor.ChargeRequest) (processor.ChargeResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.charged = append(c.charged, req)
	return processor.ChargeResult{Status: processor.Succeeded, Reference: "pi_" + req.IdempotencyRef}, nil
}
func (*vaultCharges) Lookup(context.Context, string) (processor.ChargeResult, bool, error) {
	return processor.ChargeResult{}, false, nil
}
func (c *vaultCharges) Refund(_ context.Context, req processor.RefundRequest) (processor.RefundResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refunded = append(c.refunded, req)
	if c.refund != nil {
		return c.refund(req)
	}
	return processor.RefundResult{Status: processor.Succeeded, Reference: "re_" + req.IdempotencyRef}, nil
}

// A production setup session collects the card with Stripe's element: the page starts a
// SetupIntent for the customer's Stripe customer (once, however often it is opened), loads
// Stripe.js under a CSP that allows exactly Stripe's origins, and the session completes only with
// the method the SetupIntent saved; the saved method is what later charges use, with its customer.
func TestProductionSetupSessionSavesAStripeCard(t *testing.T) {
	proc := &vaultCharges{}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.Processor = proc
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		proc.reset()
		proc.mu.Lock()
		proc.charged = nil
		proc.mu.Unlock()
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "charge_automatically")
		s, path := k.setupSession("c1", map[string]any{"billingAccountId": "ba-c1", "setAsDefault": true}, testkit.Production())
		id := s["sessionId"].(string)

		// Completing before the page was opened: no SetupIntent yet.
		if r := e.Do("PUT", path+"&paymentMethod=pm_anything", nil, testkit.APIKey("")); r.Status != 409 || r.ErrorDetails()["reason"] != "setup_incomplete" {
			t.Fatalf("complete before the page: %d %s", r.Status, r.Body)
		}
		secret, page := openSetupPage(t, e, path)
		again, _ := openSetupPage(t, e, strings.Replace(path, "/complete?", "?", 1))
		if again != secret {
			t.Fatalf("a second open started another setup: %q, %q", secret, again)
		}
		csp := page.Header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'sha256-", "https://js.stripe.com", "frame-src https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com;",
			"connect-src 'self' https://api.stripe.com;", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || !strings.Contains(string(page.Body), `<script src="https://js.stripe.com/v3/">`) ||
			!strings.Contains(string(page.Body), `data-publishable-key="pk_test_fake"`) {
			t.Fatalf("page: CSP %q body %s", csp, page.Body)
		}
		if len(proc.requests) != 1 || proc.requests[0].CustomerID != "c1" || proc.requests[0].Name != "Customer c1" {
			t.Fatalf("stripe customers %+v", proc.requests)
		}

		// The browser names a method the SetupIntent did not save, or completes before confirming.
		if r := e.Do("PUT", path+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")); r.Status != 409 || r.ErrorDetails()["reason"] != "setup_incomplete" {
			t.Fatalf("unconfirmed: %d %s", r.Status, r.Body)
		}
		proc.confirm(t, secret, "pm_1Real", "4242", stripe.SetupIntentStatusSucceeded)
		r := e.Do("PUT", path+"&paymentMethod=pm_1Other", nil, testkit.APIKey(""))
		if r.Status != 422 || !strings.Contains(strings.Join(r.FieldErrors(), ","), "paymentMethod") {
			t.Fatalf("another method: %d %s", r.Status, r.Body)
		}
		done := e.Must(200, "PUT", path+"&paymentMethod=pm_1Real", nil, testkit.APIKey("")).Data()
		pm, _ := done["paymentMethod"].(map[string]any)
		if done["status"] != "completed" || pm["last4"] != "4242" || pm["brand"] != "visa" {
			t.Fatalf("completed: %v", done)
		}
		// The page of a completed session shows the card and starts nothing.
		if r := e.Do("GET", path, nil, testkit.APIKey("")); r.Status != 200 || !strings.Contains(string(r.Body), "4242") ||
			strings.Contains(string(r.Body), `<script src=`) {
			t.Fatalf("completed page: %d %s", r.Status, r.Body)
		}

		// Charges use the saved method with its Stripe customer.
		inv := k.invoice("c1", 1500)
		if inv["status"] != "paid" {
			t.Fatalf("invoice %v", inv)
		}
		if len(proc.charged) != 1 || proc.charged[0].PaymentMethod != "pm_1Real" || proc.charged[0].Customer != "cus_fake1" {
			t.Fatalf("charges %+v", proc.charged)
		}
		_ = id
	})
}

// Without a connector that collects cards, a production setup page is 403; the sandbox page lists
// the test cards and loads nothing from anywhere else.
func TestSetupPageWithoutVault(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "charge_automatically")
		_, path := k.setupSession("c1", map[string]any{"billingAccountId": "ba-c1"}, testkit.Production())
		if r := e.Do("GET", path, nil, testkit.APIKey("")); r.Status != 403 || r.ErrorCode() != "forbidden" {
			t.Fatalf("production page without a vault: %d %s", r.Status, r.Body)
		}
		sk := newPayKit(t, e)
		sk.account("c2", "charge_automatically")
		_, spath := sk.setupSession("c2", map[string]any{"billingAccountId": "ba-c2"})
		r := e.Do("GET", spath, nil, testkit.APIKey(""))
		body := string(r.Body)
		if r.Status != 200 || !strings.Contains(body, `data-token="pm_card_threeDSecureRequired"`) || strings.Contains(body, `<script src=`) ||
			strings.Contains(r.Header.Get("Content-Security-Policy"), "stripe.com") {
			t.Fatalf("sandbox page: %d %s", r.Status, body)
		}
		u, _ := url.Parse(spath)
		tok := u.Query().Get("token")
		if r := e.Do("GET", "/customer-portal/setup-sessions/pmss_other?token="+tok, nil, testkit.APIKey("")); r.Status != 403 {
			t.Fatalf("another session's page: %d %s", r.Status, r.Body)
		}
	})
}

// The sandbox setup page in headless Chromium: the customer picks a test card, the page completes
// the session under its CSP and says so, and the card is the billing account's default.
func TestSetupPageSavesACardInBrowser(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		_, path := k.setupSession("c1", map[string]any{"billingAccountId": "ba-c1", "setAsDefault": true})
		b := testkit.StartBrowser(t)
		b.Open(e.Server.URL + path)
		if h := b.Find("h2").Text(); h != "Save a card" {
			t.Fatalf("heading %q", h)
		}
		b.Screenshot(filepath.Join("..", "artifacts", "setup-page-open-"+string(e.Store)+".png"))
		b.Find(`button[data-token="pm_card_mastercard"]`).Click()
		if msg := b.WaitText("#setup-status", 15*time.Second, "Card saved", "could not", "error"); !strings.Contains(msg, "Card saved (•••• 4444)") {
			t.Fatalf("after choosing a card the page says %q", msg)
		}
		b.Screenshot(filepath.Join("..", "artifacts", "setup-page-saved-"+string(e.Store)+".png"))
		ba := e.Must(200, "GET", "/v1/billing-accounts/ba-c1", nil).Data()
		if pm, _ := ba["defaultPaymentMethod"].(map[string]any); pm == nil || pm["last4"] != "4444" {
			t.Fatalf("billing account %v", ba)
		}
		// Reloaded, the page shows the saved card and offers nothing more.
		b.Open(e.Server.URL + path)
		if s := b.Find("#setup-status").Text(); !strings.Contains(s, "Mastercard •••• 4444") {
			t.Fatalf("reloaded page says %q", s)
		}
		if _, ok := b.TryFind("button[data-token]"); ok {
			t.Fatal("a completed session's page still offers cards")
		}
	})
}

// panicky is a connector that panics inside the pay route's transaction (where the engine asks
// its name) while explode is set.
type panicky struct {
	vaultCharges
	explode atomic.Bool
}

func (p *panicky) Name() string {
	if p.explode.Load() {
		panic("boom: secret internals")
	}
	return "stripe"
}

// TestPanicIsAnInternalError: a panic inside a write answers a 500 envelope that leaks nothing,
// rolls the work back — the claim of its Idempotency-Key too — and leaves the server serving; a
// retry with the same key runs.
func TestPanicIsAnInternalError(t *testing.T) {
	proc := &panicky{}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.Processor = proc
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		proc.explode.Store(false)
		proc.reset()
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "send_invoice")
		saveCard(t, e, &proc.fakeVault, "c1", "pm_1Card")
		id := k.invoice("c1", 700)["invoiceId"].(string)
		proc.explode.Store(true)
		r := e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production(), testkit.Key("panicky"))
		if r.Status != 500 || r.ErrorCode() != "internal_error" || strings.Contains(string(r.Body), "boom") || strings.Contains(string(r.Body), "secret") {
			t.Fatalf("panic answered %d %s", r.Status, r.Body)
		}
		if !strings.Contains(e.Logs.String(), "boom: secret internals") {
			t.Fatal("the panic was not logged")
		}
		if inv := e.Must(200, "GET", "/v1/invoices/"+id, nil, testkit.Production()).Data(); inv["status"] != "open" || inv["latestPaymentId"] != nil {
			t.Fatalf("the panicking pay left %v", inv)
		}
		// The key's claim rolled back with the work: the retry runs at once (and fails the same
		// way while the fault lasts), then succeeds once it is gone.
		if r := e.Do("POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production(), testkit.Key("panicky")); r.Status != 500 {
			t.Fatalf("retry during the fault: %d", r.Status)
		}
		proc.explode.Store(false)
		if inv := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{}, testkit.Production(), testkit.Key("panicky")).Data(); inv["status"] != "paid" {
			t.Fatalf("retry after the fault: %v", inv["status"])
		}
	})
}
