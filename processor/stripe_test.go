package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v83"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
)

// Every request the connector makes is one Stripe accepts: stripe-mock validates each against
// Stripe's OpenAPI document and answers 400 otherwise. (Its answers are fixtures: the outcome
// paths are TestFromPaymentIntent's.)
func TestStripeRequestsAreAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs stripe-mock")
	}
	s := processor.NewStripe(processor.StripeConfig{SecretKey: "sk_test_123", APIURL: testkit.StartStripeMock(t), PublishableKey: "pk_test_123"})
	ctx := context.Background()
	res, err := s.Charge(ctx, processor.ChargeRequest{Amount: 4200, Currency: "USD", PaymentMethod: "pm_card_visa",
		IdempotencyRef: "pay_01test", Description: "Invoice INV-000001", Customer: "cus_123", Account: "acct_123"})
	if err != nil || !strings.HasPrefix(res.Reference, "pi_") || res.Status == "" {
		t.Fatalf("charge: %+v, %v", res, err)
	}
	got, found, err := s.Lookup(ctx, "pay_01test")
	if err != nil || !found || !strings.HasPrefix(got.Reference, "pi_") {
		t.Fatalf("lookup: %+v %v %v", got, found, err)
	}
	ref, err := s.Refund(ctx, processor.RefundRequest{Amount: 100, Currency: "USD", ChargeReference: res.Reference, IdempotencyRef: "re_01test"})
	if err != nil || ref.Status != processor.Succeeded || !strings.HasPrefix(ref.Reference, "re_") {
		t.Fatalf("refund: %+v, %v", ref, err)
	}
	// The vault: a customer, a SetupIntent for it, and the SetupIntent read back. stripe-mock's
	// fixture SetupIntent did not save our method, so the answer is a setup error, not a fault.
	cus, err := s.CreateCustomer(ctx, processor.CustomerRequest{CustomerID: "cus_remit", Email: "a@example.com", Name: "Acme",
		Account: "acct_123", IdempotencyRef: "remit-customer-x"})
	if err != nil || !strings.HasPrefix(cus, "cus_") {
		t.Fatalf("customer: %q, %v", cus, err)
	}
	setup, err := s.StartSetup(ctx, processor.SetupRequest{Customer: cus, SessionID: "pmss_1", Account: "acct_123", IdempotencyRef: "remit-setup-pmss_1"})
	if err != nil || !strings.HasPrefix(setup.Reference, "seti_") || setup.ClientSecret == "" {
		t.Fatalf("setup: %+v, %v", setup, err)
	}
	_, err = s.FinishSetup(ctx, processor.FinishSetupRequest{Reference: setup.Reference, Customer: cus, PaymentMethod: "pm_from_browser", Account: "acct_123"})
	if !errors.Is(err, processor.ErrSetupMismatch) && !errors.Is(err, processor.ErrSetupIncomplete) {
		t.Fatalf("finish setup against a fixture: %v", err)
	}
	if el := s.Element(); el.PublishableKey != "pk_test_123" || el.Script != "https://js.stripe.com/v3/" {
		t.Fatalf("element %+v", el)
	}
	if err := s.DetachMethod(ctx, processor.DetachRequest{PaymentMethod: "pm_123", Account: "acct_123"}); err != nil {
		t.Fatalf("detach: %v", err)
	}
}

// What Stripe answers a detach means: detached (also a method Stripe no longer has, or one it
// already detached: Stripe refuses those with 400, and the method read back has no customer), a
// failure a retry may cure (5xx, 429, no answer: ErrUnavailable), or a refusal (anything else).
func TestStripeDetachOutcomes(t *testing.T) {
	var detachStatus, retrieveStatus int
	var retrieveCustomer any
	var mu sync.Mutex // the handler's goroutine and the test's
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path+" "+r.Header.Get("Stripe-Account"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Stripe-Should-Retry", "false")
		status := retrieveStatus
		if r.Method == http.MethodPost {
			status = detachStatus
		}
		w.WriteHeader(status)
		switch {
		case status == 200:
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "pm_1", "object": "payment_method", "customer": retrieveCustomer})
		case status == 404:
			_, _ = w.Write([]byte(`{"error": {"type": "invalid_request_error", "code": "resource_missing", "message": "No such PaymentMethod: 'pm_1'"}}`))
		default:
			_, _ = w.Write([]byte(`{"error": {"type": "invalid_request_error", "message": "The payment method you provided is not attached to a customer so detachment is impossible."}}`))
		}
	}))
	defer srv.Close()
	s := processor.NewStripe(processor.StripeConfig{SecretKey: "sk_test_123", APIURL: srv.URL})
	for _, c := range []struct {
		name                 string
		detach, retrieve     int
		customer             any
		unavailable, refused bool
		wantCalls            int
	}{
		{name: "detached", detach: 200, wantCalls: 1},
		{name: "Stripe does not know it", detach: 404, wantCalls: 1},
		{name: "already detached", detach: 400, retrieve: 200, customer: nil, wantCalls: 2},
		{name: "refused while attached", detach: 400, retrieve: 200, customer: "cus_1", refused: true, wantCalls: 2},
		{name: "refused, and the read back fails", detach: 400, retrieve: 503, unavailable: true, wantCalls: 2},
		{name: "Stripe fails", detach: 500, unavailable: true, wantCalls: 1},
		{name: "rate limited", detach: 429, unavailable: true, wantCalls: 1},
		{name: "bad key", detach: 401, refused: true, wantCalls: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			detachStatus, retrieveStatus, retrieveCustomer, calls = c.detach, c.retrieve, c.customer, nil
			mu.Unlock()
			err := s.DetachMethod(context.Background(), processor.DetachRequest{PaymentMethod: "pm_1", Account: "acct_9"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case c.unavailable && !errors.Is(err, processor.ErrUnavailable), c.refused && (err == nil || errors.Is(err, processor.ErrUnavailable)),
				!c.unavailable && !c.refused && err != nil:
				t.Fatalf("err %v", err)
			}
			if len(calls) != c.wantCalls || calls[0] != "POST /v1/payment_methods/pm_1/detach acct_9" {
				t.Fatalf("calls %v", calls)
			}
		})
	}
	srv.Close() // no answer at all
	if err := s.DetachMethod(context.Background(), processor.DetachRequest{PaymentMethod: "pm_1"}); !errors.Is(err, processor.ErrUnavailable) {
		t.Fatalf("Stripe unreachable: %v", err)
	}
}

// A SetupIntent saves a method only when it succeeded with exactly the method the browser named,
// for the customer the setup was started for.
func TestSavedFromSetupIntent(t *testing.T) {
	card := &stripe.PaymentMethod{ID: "pm_1", Card: &stripe.PaymentMethodCard{Brand: "visa", Last4: "4242"}}
	req := processor.FinishSetupRequest{Reference: "seti_1", Customer: "cus_1", PaymentMethod: "pm_1"}
	for _, c := range []struct {
		name string
		si   stripe.SetupIntent
		req  processor.FinishSetupRequest
		want error
	}{
		{"succeeded with the method", stripe.SetupIntent{ID: "seti_1", Status: "succeeded", PaymentMethod: card, Customer: &stripe.Customer{ID: "cus_1"}}, req, nil},
		{"another method", stripe.SetupIntent{ID: "seti_1", Status: "succeeded", PaymentMethod: &stripe.PaymentMethod{ID: "pm_2"}, Customer: &stripe.Customer{ID: "cus_1"}}, req, processor.ErrSetupMismatch},
		{"another customer", stripe.SetupIntent{ID: "seti_1", Status: "succeeded", PaymentMethod: card, Customer: &stripe.Customer{ID: "cus_2"}}, req, processor.ErrSetupMismatch},
		{"no customer", stripe.SetupIntent{ID: "seti_1", Status: "succeeded", PaymentMethod: card}, req, processor.ErrSetupMismatch},
		{"another setup", stripe.SetupIntent{ID: "seti_2", Status: "succeeded", PaymentMethod: card, Customer: &stripe.Customer{ID: "cus_1"}}, req, processor.ErrSetupMismatch},
		{"not confirmed", stripe.SetupIntent{ID: "seti_1", Status: "requires_payment_method"}, req, processor.ErrSetupIncomplete},
		{"awaiting 3-D Secure", stripe.SetupIntent{ID: "seti_1", Status: "requires_action", PaymentMethod: card}, req, processor.ErrSetupIncomplete},
		{"awaiting another method", stripe.SetupIntent{ID: "seti_1", Status: "requires_action", PaymentMethod: &stripe.PaymentMethod{ID: "pm_9"}}, req, processor.ErrSetupMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := processor.SavedFromSetupIntent(&c.si, c.req)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if c.want == nil && (got.Token != "pm_1" || got.Brand != "visa" || got.Last4 != "4242") {
				t.Fatalf("saved %+v", got)
			}
		})
	}
}

// How each PaymentIntent state becomes an attempt's outcome.
func TestFromPaymentIntent(t *testing.T) {
	for _, c := range []struct {
		name string
		pi   stripe.PaymentIntent
		want processor.ChargeResult
	}{
		{"succeeded, with its fee", stripe.PaymentIntent{ID: "pi_1", Status: stripe.PaymentIntentStatusSucceeded,
			LatestCharge: &stripe.Charge{BalanceTransaction: &stripe.BalanceTransaction{Fee: 152}}},
			processor.ChargeResult{Status: processor.Succeeded, Reference: "pi_1", Fee: 152}},
		{"processing", stripe.PaymentIntent{ID: "pi_2", Status: stripe.PaymentIntentStatusProcessing},
			processor.ChargeResult{Status: processor.Processing, Reference: "pi_2"}},
		{"3-D Secure", stripe.PaymentIntent{ID: "pi_3", Status: stripe.PaymentIntentStatusRequiresAction,
			NextAction: &stripe.PaymentIntentNextAction{RedirectToURL: &stripe.PaymentIntentNextActionRedirectToURL{URL: "https://hooks.stripe.com/3ds"}}},
			processor.ChargeResult{Status: processor.RequiresAction, Reference: "pi_3", NextActionURL: "https://hooks.stripe.com/3ds"}},
		{"declined", stripe.PaymentIntent{ID: "pi_4", Status: stripe.PaymentIntentStatusRequiresPaymentMethod,
			LastPaymentError: &stripe.Error{Code: stripe.ErrorCodeCardDeclined, DeclineCode: stripe.DeclineCodeInsufficientFunds, Msg: "Your card has insufficient funds."}},
			processor.ChargeResult{Status: processor.Failed, Reference: "pi_4", FailureCode: "insufficient_funds", FailureMessage: "Your card has insufficient funds."}},
		{"canceled", stripe.PaymentIntent{ID: "pi_5", Status: stripe.PaymentIntentStatusCanceled},
			processor.ChargeResult{Status: processor.Failed, Reference: "pi_5", FailureCode: "card_declined",
				FailureMessage: "The card was declined. Ask the customer to use another card, then pay the invoice again."}},
	} {
		if got := processor.FromPaymentIntent(&c.pi); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
