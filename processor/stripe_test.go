package processor_test

import (
	"context"
	"strings"
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
	s := processor.NewStripe("sk_test_123", testkit.StartStripeMock(t))
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
