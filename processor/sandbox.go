package processor

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Sandbox is the built-in test processor. It behaves as an external processor would: it keeps its
// own record of every charge (store.SandboxCharges, committed in a transaction of its own before
// it answers, independent of Remit's), answers a repeated charge with the same idempotency
// reference with the first one, and takes Latency to answer (REMIT_SANDBOX_PROCESSOR_LATENCY).
// Lookup answers at once.
//
// Its outcome depends on the test token only (docs/payments.md "Test payment methods"):
// pm_card_visa and pm_card_mastercard succeed; pm_card_chargeDeclined fails with card_declined,
// pm_card_insufficientFunds with insufficient_funds, pm_card_expired with expired_card;
// pm_card_threeDSecureRequired answers requires_action until the customer authenticates (Settle).
// The fee of a succeeded charge is remit.SandboxFee (2.9% + 30 minor units, rounded half-up).
// Refunds always succeed; each is recorded once per idempotency reference (a refund sent again is
// the same refund) before the latency. The fee of the refunded charge is not returned.
type Sandbox struct {
	Ledger  store.SandboxCharges
	Latency time.Duration
	Clock   remit.Clock
}

var _ Processor = (*Sandbox)(nil)

// Name implements Processor.
func (*Sandbox) Name() string { return remit.ProcessorSandbox }

// Charge implements Processor.
//
// The charge is recorded first and answered after Latency: a timeout or a crash in between leaves
// a charge Remit has not recorded, which is what the reconciler exists for.
func (s *Sandbox) Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error) {
	now := s.Clock.Now()
	status, code := sandboxOutcome(req.PaymentMethod)
	c := store.SandboxCharge{IdempotencyRef: req.IdempotencyRef, Reference: "sbch_" + req.IdempotencyRef, Amount: req.Amount,
		Currency: req.Currency, PaymentMethod: req.PaymentMethod, Status: status, FailureCode: code, CreatedAt: now, UpdatedAt: now}
	if status == Succeeded {
		c.Fee = remit.SandboxFee(req.Amount)
	}
	stored, err := s.Ledger.Record(ctx, c)
	if err != nil {
		return ChargeResult{}, err
	}
	if err := s.wait(ctx); err != nil {
		return ChargeResult{}, err
	}
	return sandboxResult(stored), nil
}

// Lookup implements Processor.
func (s *Sandbox) Lookup(ctx context.Context, idempotencyRef string) (ChargeResult, bool, error) {
	c, found, err := s.Ledger.Get(ctx, idempotencyRef)
	if err != nil || !found {
		return ChargeResult{}, false, err
	}
	return sandboxResult(c), true, nil
}

// Authenticate completes a requires_action charge as the customer's 3-D Secure step would:
// succeed, or fail with authentication_failed. It answers the charge as it stands after.
func (s *Sandbox) Authenticate(ctx context.Context, idempotencyRef string, succeed bool) (ChargeResult, error) {
	if err := s.wait(ctx); err != nil {
		return ChargeResult{}, err
	}
	c, found, err := s.Ledger.Get(ctx, idempotencyRef)
	if err != nil || !found {
		return ChargeResult{}, err
	}
	status, code, fee := Failed, "authentication_failed", int64(0)
	if succeed {
		status, code, fee = Succeeded, "", remit.SandboxFee(c.Amount)
	}
	if _, err := s.Ledger.Settle(ctx, idempotencyRef, status, code, fee, s.Clock.Now()); err != nil {
		return ChargeResult{}, err
	}
	c, _, err = s.Ledger.Get(ctx, idempotencyRef)
	return sandboxResult(c), err
}

// Refund implements Processor.
func (s *Sandbox) Refund(ctx context.Context, req RefundRequest) (RefundResult, error) {
	r, err := s.Ledger.RecordRefund(ctx, store.SandboxRefund{IdempotencyRef: req.IdempotencyRef, Reference: "sbre_" + req.IdempotencyRef,
		ChargeReference: req.ChargeReference, Amount: req.Amount, Currency: req.Currency, CreatedAt: s.Clock.Now()})
	if err != nil {
		return RefundResult{}, err
	}
	if err := s.wait(ctx); err != nil {
		return RefundResult{}, err
	}
	return RefundResult{Status: Succeeded, Reference: r.Reference}, nil
}

// wait takes the configured latency, or less when ctx ends first.
func (s *Sandbox) wait(ctx context.Context) error {
	if s.Latency <= 0 {
		return nil
	}
	t := time.NewTimer(s.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sandboxOutcome is what the sandbox answers a test token.
func sandboxOutcome(token string) (status, failureCode string) {
	switch token {
	case "pm_card_visa", "pm_card_mastercard":
		return Succeeded, ""
	case "pm_card_chargeDeclined":
		return Failed, "card_declined"
	case "pm_card_insufficientFunds":
		return Failed, "insufficient_funds"
	case "pm_card_expired":
		return Failed, "expired_card"
	case "pm_card_threeDSecureRequired":
		return RequiresAction, ""
	}
	return Failed, "payment_method_unusable"
}

// failureMessages say what happened and what to do next, by failure code.
var failureMessages = map[string]string{
	"card_declined":           "The card was declined. Ask the customer to use another card: attach it through a payment method setup session, then pay the invoice again.",
	"insufficient_funds":      "The card has insufficient funds. Ask the customer to use another card, or pay the invoice again once funds are available.",
	"expired_card":            "The card has expired. Ask the customer to attach a current card through a payment method setup session, then pay the invoice again.",
	"authentication_failed":   "The customer did not complete the card's authentication (3-D Secure). Pay the invoice again to start a new attempt.",
	"payment_method_unusable": "The sandbox processor does not know this payment method; attach a test payment method through a setup session.",
}

func sandboxResult(c store.SandboxCharge) ChargeResult {
	r := ChargeResult{Status: c.Status, Reference: c.Reference, Fee: c.Fee, FailureCode: c.FailureCode}
	if c.Status == Failed {
		r.FailureMessage = failureMessages[c.FailureCode]
	}
	return r
}
