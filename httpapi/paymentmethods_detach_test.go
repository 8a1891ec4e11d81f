package httpapi_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// saveMethod attaches the test card token to billingAccountID through a setup session completed in
// the portal (the account's default when asDefault or it has none) and returns the method's ID.
func (k payKit) saveMethod(customerID, billingAccountID, token string, asDefault bool) string {
	k.t.Helper()
	_, path := k.setupSession(customerID, map[string]any{"billingAccountId": billingAccountID, "setAsDefault": asDefault}, k.opts...)
	return k.e.Must(200, "PUT", path+"&paymentMethod="+token, nil, testkit.APIKey("")).Data()["paymentMethodId"].(string)
}

// defaultMethod is the billing account's default payment method's ID, or "".
func (k payKit) defaultMethod(billingAccountID string) string {
	k.t.Helper()
	pm, _ := k.e.Must(200, "GET", "/v1/billing-accounts/"+billingAccountID, nil, k.opts...).Data()["defaultPaymentMethod"].(map[string]any)
	id, _ := pm["paymentMethodId"].(string)
	return id
}

func detachPath(id string) string { return "/v1/payment-methods/" + id + "/detach" }

// Detaching: a method is detached once and never charged or made a default again; detaching a
// default clears it, unless it is the default of a charge_automatically account with open invoices
// left to collect (409 naming them); a send_invoice account's and an uncollectible invoice's do not
// hold it.
func TestPaymentMethodDetach(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		k.account("c1", "charge_automatically")
		pm1 := k.saveMethod("c1", "ba-c1", "pm_card_visa", true)
		spare := k.saveMethod("c1", "ba-c1", "pm_card_mastercard", false)
		if k.defaultMethod("ba-c1") != pm1 {
			t.Fatalf("default %q, want %q", k.defaultMethod("ba-c1"), pm1)
		}

		// Refusals that change nothing.
		e.Must(404, "POST", detachPath(pm1), map[string]any{}, testkit.As(e.NewTenant("Other", false)))
		e.Must(404, "POST", detachPath("pm_nope"), map[string]any{})
		e.Must(422, "POST", detachPath(pm1), map[string]any{"force": true})

		// A method that is nobody's default: detached, the default untouched.
		d := e.Must(200, "POST", detachPath(spare), map[string]any{}).Data()
		if d["object"] != "payment_method" || d["status"] != "detached" || d["detachedAt"] == nil || d["paymentMethodId"] != spare || d["last4"] != "4444" {
			t.Fatalf("detached: %v", d)
		}
		r := e.Must(409, "POST", detachPath(spare), map[string]any{})
		if r.ErrorDetails()["currentState"] != "detached" || r.ErrorDetails()["reason"] != "invalid_state" {
			t.Fatalf("second detach: %s", r.Body)
		}
		if k.defaultMethod("ba-c1") != pm1 {
			t.Fatal("detaching another method changed the default")
		}
		wantEvents(t, e, spare, "payment_method.attached", "payment_method.detached")

		// The default of an automatic account with nothing open: detached, and the account has no
		// default left (billing_account.updated); its next invoice is not charged.
		paid := k.invoice("c1", 500)
		if paid["status"] != "paid" {
			t.Fatalf("invoice before the detach: %v", paid["status"])
		}
		e.Must(200, "POST", detachPath(pm1), map[string]any{})
		if k.defaultMethod("ba-c1") != "" {
			t.Fatal("the detached default is still the default")
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, "ba-c1"); ev[len(ev)-1] != "billing_account.updated" {
			t.Fatalf("billing account events %v", ev)
		}
		after := k.invoice("c1", 700)
		if after["status"] != "open" || len(k.payments(after["invoiceId"].(string), e.Tenant.Sandbox)) != 0 {
			t.Fatalf("an invoice after the detach: %v, payments %v", after["status"], k.payments(after["invoiceId"].(string), e.Tenant.Sandbox))
		}
		r = e.Must(409, "POST", "/v1/invoices/"+after["invoiceId"].(string)+"/pay", map[string]any{})
		if r.ErrorDetails()["reason"] != "no_payment_method" {
			t.Fatalf("pay without a method: %s", r.Body)
		}

		// The default of an automatic account with an open invoice (its charge declined): 409, naming
		// the account and the invoice; paid another way, the method detaches.
		k.account("c2", "charge_automatically")
		pm2 := k.saveMethod("c2", "ba-c2", "pm_card_chargeDeclined", true)
		open := k.invoice("c2", 900)
		if open["status"] != "open" {
			t.Fatalf("declined invoice: %v", open["status"])
		}
		r = e.Must(409, "POST", detachPath(pm2), map[string]any{})
		det := r.ErrorDetails()
		if det["reason"] != "default_payment_method_in_use" || fmt.Sprint(det["billingAccountIds"]) != "[ba-c2]" ||
			fmt.Sprint(det["invoiceIds"]) != fmt.Sprintf("[%s]", open["invoiceId"]) || det["openInvoices"] != 1.0 {
			t.Fatalf("strand refusal: %s", r.Body)
		}
		if k.defaultMethod("ba-c2") != pm2 || slices.Contains(k.eventTypes(e.Tenant.Sandbox, pm2), "payment_method.detached") {
			t.Fatal("a refused detach changed something")
		}
		e.Must(200, "POST", "/v1/invoices/"+open["invoiceId"].(string)+"/pay", map[string]any{"outOfBand": true})
		e.Must(200, "POST", detachPath(pm2), map[string]any{})

		// A send_invoice account's open invoices do not hold its default.
		k.account("c3", "send_invoice")
		pm3 := k.saveMethod("c3", "ba-c3", "pm_card_visa", true)
		if inv := k.invoice("c3", 300); inv["status"] != "open" {
			t.Fatalf("send_invoice invoice: %v", inv["status"])
		}
		e.Must(200, "POST", detachPath(pm3), map[string]any{})
		if k.defaultMethod("ba-c3") != "" {
			t.Fatal("send_invoice default not cleared")
		}

		// An uncollectible invoice (dunning gave up) does not hold the default either.
		dunningAccount(t, e, k, "c4", map[string]any{"schedule": []string{"1d"}, "finalAction": "mark_uncollectible"})
		pm4 := k.defaultMethod("ba-c4")
		bad := k.invoice("c4", 400)
		e.Must(409, "POST", detachPath(pm4), map[string]any{})
		advanceTo(e, ts(t, bad["nextPaymentAttemptAt"]).Add(time.Second))
		if got := e.Must(200, "GET", "/v1/invoices/"+bad["invoiceId"].(string), nil).Data(); got["status"] != "uncollectible" {
			t.Fatalf("after dunning: %v", got["status"])
		}
		e.Must(200, "POST", detachPath(pm4), map[string]any{})
	})
}

// Two detaches of one method sent together (and of one default: the account's default is cleared
// once): exactly one wins, with one event.
func TestPaymentMethodDetachConcurrent(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		for round := range 3 {
			c := fmt.Sprintf("c%d", round)
			k.account(c, "charge_automatically")
			pm := k.saveMethod(c, "ba-"+c, "pm_card_visa", true)
			testkit.OnlyOneWins(t, e.Race(6, "POST", detachPath(pm), map[string]any{}), 200, 409)
			if ev := k.eventTypes(e.Tenant.Sandbox, pm); !slices.Equal(ev, []string{"payment_method.attached", "payment_method.detached"}) {
				t.Fatalf("round %d: events %v", round, ev)
			}
			updates := 0
			for _, typ := range k.eventTypes(e.Tenant.Sandbox, "ba-"+c) {
				if typ == "billing_account.updated" {
					updates++
				}
			}
			if updates != 2 || k.defaultMethod("ba-"+c) != "" { // set by the setup, cleared by the detach
				t.Fatalf("round %d: %d billing_account.updated, default %q", round, updates, k.defaultMethod("ba-"+c))
			}
		}
	})
}

// A method saved with Stripe is detached at Stripe first: when Stripe cannot answer, the detach is
// 503 and nothing changed (a retry with the same Idempotency-Key then succeeds); another refusal
// of Stripe's is 500; a detach Remit refuses does not call Stripe.
func TestPaymentMethodDetachAtStripe(t *testing.T) {
	proc := &vaultCharges{}
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.Processor = proc
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		proc.reset()
		k := newPayKit(t, e, testkit.Production())
		k.account("c1", "charge_automatically")
		saveCard(t, e, &proc.fakeVault, "c1", "pm_1Real")
		pm := k.defaultMethod("ba-c1")
		path, prod := detachPath(pm), testkit.Production()
		v := &proc.fakeVault // its lock guards what DetachMethod records
		calls := func() []processor.DetachRequest {
			v.mu.Lock()
			defer v.mu.Unlock()
			return append([]processor.DetachRequest(nil), v.detached...)
		}
		setDetach := func(f func(processor.DetachRequest) error) { v.mu.Lock(); v.detach = f; v.mu.Unlock() }

		setDetach(func(processor.DetachRequest) error { return fmt.Errorf("%w: timeout", processor.ErrUnavailable) })
		key := testkit.Header("Idempotency-Key", "detach-1")
		r := e.Do("POST", path, map[string]any{}, prod, key)
		msg, _ := r.JSON()["error"].(map[string]any)["message"].(string)
		if r.Status != 503 || r.ErrorCode() != "internal_error" || !strings.Contains(msg, "nothing was changed") {
			t.Fatalf("Stripe unavailable: %d %s", r.Status, r.Body)
		}
		if got := calls(); len(got) != 1 || got[0].PaymentMethod != "pm_1Real" {
			t.Fatalf("detach requests %+v", got)
		}
		setDetach(func(processor.DetachRequest) error { return errors.New("stripe: invalid API key") })
		if r := e.Do("POST", path, map[string]any{}, prod); r.Status != 500 || r.ErrorCode() != "internal_error" {
			t.Fatalf("Stripe refuses: %d %s", r.Status, r.Body)
		}
		if k.defaultMethod("ba-c1") != pm || slices.Contains(k.eventTypes(e.Tenant.Production, pm), "payment_method.detached") {
			t.Fatal("a failed detach at Stripe changed something in Remit")
		}

		setDetach(nil)
		d := e.Must(200, "POST", path, map[string]any{}, prod, key).Data()
		if d["status"] != "detached" || k.defaultMethod("ba-c1") != "" || len(calls()) != 3 {
			t.Fatalf("detached: %v, %d calls", d, len(calls()))
		}
		e.Must(409, "POST", path, map[string]any{}, prod)
		if len(calls()) != 3 {
			t.Fatalf("a refused detach called Stripe: %+v", calls())
		}
		if replay := e.Do("POST", path, map[string]any{}, prod, key); replay.Status != 200 || len(calls()) != 3 {
			t.Fatalf("replay: %d, %d calls", replay.Status, len(calls()))
		}
	})
}
