package processor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v83"
	"github.com/stripe/stripe-go/v83/webhook"

	"github.com/remit-billing/remit/internal/telemetry"
)

// Stripe is the Stripe connector (docs/payments.md "Stripe"), on Stripe's official Go library. A
// payment attempt is a PaymentIntent created and confirmed off-session in one call, with the
// attempt's idempotency reference as Stripe's Idempotency-Key and as the metadata remit_payment_id
// (which Lookup searches by); a refund is a Stripe refund of that PaymentIntent.
//
// Stripe's answers map to the attempt's states: succeeded → Succeeded (the fee from the charge's
// balance transaction), processing → Processing, requires_action → RequiresAction with Stripe's
// next_action redirect URL, requires_payment_method or canceled → Failed with the last payment
// error's code; a card error on create is a decline (Failed), any other error a fault.
type Stripe struct {
	client         *stripe.Client
	publishableKey string
}

var _ Processor = (*Stripe)(nil)

// remitPaymentKey is the PaymentIntent metadata key holding the attempt's idempotency reference;
// remitRefundKey the refund metadata key holding the refund's.
const (
	remitPaymentKey = "remit_payment_id"
	remitRefundKey  = "remit_refund_id"
)

// StripeConfig is the connector's configuration.
type StripeConfig struct {
	SecretKey      string // sk_… (REMIT_STRIPE_SECRET_KEY)
	APIURL         string // replaces Stripe's API base when set (the tests point it at stripe-mock)
	PublishableKey string // pk_… (REMIT_STRIPE_PUBLISHABLE_KEY): the hosted setup page's card element
}

// NewStripe returns the connector for cfg.
func NewStripe(cfg StripeConfig) *Stripe {
	// Stripe's own client settings (its 80 s timeout), through a transport that sends each call's
	// span as its traceparent header while tracing is on.
	bc := &stripe.BackendConfig{HTTPClient: &http.Client{Timeout: 80 * time.Second, Transport: telemetry.Transport(nil)}}
	if cfg.APIURL != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.APIURL, "/"))
	}
	return &Stripe{client: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc))),
		publishableKey: cfg.PublishableKey}
}

// Name implements Processor.
func (*Stripe) Name() string { return "stripe" }

// Charge implements Processor.
func (s *Stripe) Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error) {
	params := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(req.Amount), Currency: stripe.String(strings.ToLower(req.Currency)),
		PaymentMethod: stripe.String(req.PaymentMethod), Confirm: stripe.Bool(true), OffSession: stripe.Bool(true),
		Description: stripe.String(req.Description),
	}
	if req.Customer != "" {
		params.Customer = stripe.String(req.Customer)
	}
	created(params, req.IdempotencyRef, remitPaymentKey, req.IdempotencyRef, req.Account)
	params.AddExpand("latest_charge.balance_transaction")
	pi, err := s.client.V1PaymentIntents.Create(ctx, params)
	var se *stripe.Error
	switch {
	case errors.As(err, &se) && se.Type == stripe.ErrorTypeCard:
		return declined(se), nil
	case err != nil:
		return ChargeResult{}, err
	}
	return FromPaymentIntent(pi), nil
}

// Lookup implements Processor: it searches the PaymentIntents by the attempt's metadata.
func (s *Stripe) Lookup(ctx context.Context, idempotencyRef string) (ChargeResult, bool, error) {
	params := &stripe.PaymentIntentSearchParams{}
	params.Query = remitPaymentKey + ":'" + strings.ReplaceAll(idempotencyRef, "'", "") + "'"
	params.Limit = stripe.Int64(1)
	params.AddExpand("data.latest_charge.balance_transaction")
	for pi, err := range s.client.V1PaymentIntents.Search(ctx, params) {
		if err != nil {
			return ChargeResult{}, false, err
		}
		return FromPaymentIntent(pi), true, nil
	}
	return ChargeResult{}, false, nil
}

// Refund implements Processor: a refund of the PaymentIntent carrying the refund's reference as
// Stripe's Idempotency-Key and as the metadata remit_refund_id, which is looked for first, so that a
// refund sent again after Stripe's idempotency window is still the same refund.
func (s *Stripe) Refund(ctx context.Context, req RefundRequest) (RefundResult, error) {
	lp := &stripe.RefundListParams{PaymentIntent: stripe.String(req.ChargeReference)}
	lp.Limit = stripe.Int64(100)
	onAccount(lp, req.Account)
	for r, err := range s.client.V1Refunds.List(ctx, lp) {
		if err != nil {
			return RefundResult{}, err
		}
		if r.Metadata[remitRefundKey] == req.IdempotencyRef {
			return fromRefund(r), nil
		}
	}
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(req.ChargeReference), Amount: stripe.Int64(req.Amount)}
	created(params, req.IdempotencyRef, remitRefundKey, req.IdempotencyRef, req.Account)
	r, err := s.client.V1Refunds.Create(ctx, params)
	var se *stripe.Error
	switch {
	case errors.As(err, &se) && se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500:
		return RefundResult{Status: Failed, FailureCode: string(se.Code), FailureMessage: se.Msg}, nil
	case err != nil:
		return RefundResult{}, err
	}
	return fromRefund(r), nil
}

// fromRefund maps a Stripe refund to its outcome: failed or canceled is Failed, anything else
// (succeeded, pending) is Succeeded: Stripe has taken the refund.
func fromRefund(r *stripe.Refund) RefundResult {
	if r.Status == stripe.RefundStatusFailed || r.Status == stripe.RefundStatusCanceled {
		return RefundResult{Status: Failed, Reference: r.ID, FailureCode: string(r.FailureReason),
			FailureMessage: "Stripe could not return the money to the card (" + string(r.FailureReason) + ")."}
	}
	return RefundResult{Status: Succeeded, Reference: r.ID}
}

// FromPaymentIntent maps a PaymentIntent to an attempt's outcome (see Stripe).
func FromPaymentIntent(pi *stripe.PaymentIntent) ChargeResult {
	r := ChargeResult{Reference: pi.ID}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
		r.Status = Succeeded
		if c := pi.LatestCharge; c != nil && c.BalanceTransaction != nil {
			r.Fee = c.BalanceTransaction.Fee
		}
	case stripe.PaymentIntentStatusProcessing, stripe.PaymentIntentStatusRequiresConfirmation, stripe.PaymentIntentStatusRequiresCapture:
		r.Status = Processing
	case stripe.PaymentIntentStatusRequiresAction:
		r.Status = RequiresAction
		if na := pi.NextAction; na != nil && na.RedirectToURL != nil {
			r.NextActionURL = na.RedirectToURL.URL
		}
	default: // requires_payment_method (declined), canceled
		d := declined(pi.LastPaymentError)
		d.Reference = pi.ID
		return d
	}
	return r
}

// declined is a decline from Stripe's error: its decline code, else its code, and its message.
func declined(se *stripe.Error) ChargeResult {
	r := ChargeResult{Status: Failed, FailureCode: "card_declined", FailureMessage: "The card was declined. Ask the customer to use another card, then pay the invoice again."}
	if se == nil {
		return r
	}
	if se.DeclineCode != "" {
		r.FailureCode = string(se.DeclineCode)
	} else if se.Code != "" {
		r.FailureCode = string(se.Code)
	}
	if se.Msg != "" {
		r.FailureMessage = se.Msg
	}
	return r
}

// StripeWebhook is what a verified Stripe event says of a Remit payment attempt.
type StripeWebhook struct {
	Relevant bool         // a PaymentIntent event of an attempt Remit made (metadata remit_payment_id)
	Ref      string       // the attempt's idempotency reference
	Account  string       // the connected account the event is for, if any
	Result   ChargeResult // the attempt's outcome as the PaymentIntent now stands
}

// ParseStripeWebhook verifies a Stripe webhook's Stripe-Signature header against the endpoint's
// signing secret (stripe-go's check, with Stripe's default 5-minute tolerance) and reads a
// PaymentIntent event. An error means the request is not Stripe's: answer 400, record nothing.
// Events of other objects or without Remit's metadata are not Relevant.
func ParseStripeWebhook(payload []byte, header, secret string) (StripeWebhook, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, header, secret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return StripeWebhook{}, err
	}
	out := StripeWebhook{Account: ev.Account}
	if !strings.HasPrefix(string(ev.Type), "payment_intent.") || ev.Data == nil {
		return out, nil
	}
	var pi stripe.PaymentIntent
	if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil || pi.Metadata[remitPaymentKey] == "" {
		return out, nil
	}
	out.Relevant, out.Ref, out.Result = true, pi.Metadata[remitPaymentKey], FromPaymentIntent(&pi)
	return out, nil
}

// onAccount makes a request act on the connected account named ("": the platform's own).
func onAccount(p interface{ SetStripeAccount(string) }, account string) {
	if account != "" {
		p.SetStripeAccount(account)
	}
}

// createParams are the parameters of a create request to Stripe.
type createParams interface {
	AddMetadata(key, value string)
	SetIdempotencyKey(string)
	SetStripeAccount(string)
}

// created readies a create request: Stripe's Idempotency-Key idem, Remit's reference in its
// metadata (key: ref) and the connected account named, if any.
func created(p createParams, idem, key, ref, account string) {
	p.SetIdempotencyKey(idem)
	p.AddMetadata(key, ref)
	onAccount(p, account)
}
