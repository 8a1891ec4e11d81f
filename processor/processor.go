// Package processor is where Remit meets a payment processor. The engine (package app) charges and
// refunds through the Processor interface only; the sandbox processor is built in, and a production
// connector is any other implementation handed to the engine (app.Config.Processor). None is
// bundled: without one, production charges answer 501 not_implemented and invoices can only be
// settled out of band.
//
// A connector must honour these rules:
//
//   - A decline is not an error. Charge returns a ChargeResult with Status "failed", a stable
//     FailureCode (card_declined, insufficient_funds, ...) and a FailureMessage a person can act on.
//     The error return is for faults only (the processor could not be reached, an unexpected
//     answer): the engine rolls back everything and answers 500, so nothing is recorded.
//   - IdempotencyRef is stable across retries of one attempt: the engine derives it from the
//     invoice and its attempt number, which only advances when an attempt was recorded. A
//     connector passes it to the processor as its idempotency key, so that an attempt whose
//     transaction rolled back after the charge went through is answered with the same charge,
//     never charged twice.
//   - Charge and Refund are called inside the store transaction that records their outcome, with
//     the invoice row locked: keep them short (set a timeout on ctx's deadline) and never call
//     back into Remit.
package processor

import (
	"context"

	"github.com/remit-billing/remit"
)

// Charge outcomes.
const (
	Succeeded = "succeeded"
	Failed    = "failed"
)

// Processor charges and refunds payment methods.
type Processor interface {
	// Charge takes Amount minor units of Currency from the payment method.
	Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error)
	// Refund returns Amount minor units of an earlier successful charge.
	Refund(ctx context.Context, req RefundRequest) (RefundResult, error)
}

// ChargeRequest is one charge attempt.
type ChargeRequest struct {
	Amount         int64  // minor units, > 0
	Currency       string // ISO 4217, upper case
	PaymentMethod  string // the processor's token of the method (in the sandbox: the test token, pm_card_visa, ...)
	IdempotencyRef string // stable per attempt; see the package comment
	Description    string // shown on the processor's dashboard
}

// ChargeResult is a charge's outcome.
type ChargeResult struct {
	Status         string // Succeeded or Failed
	FailureCode    string // when Failed
	FailureMessage string // when Failed: what happened and what to do next
	Fee            int64  // the processor's fee for a succeeded charge, minor units of the currency
	Reference      string // the processor's ID of the charge
}

// RefundRequest refunds part or all of a charge.
type RefundRequest struct {
	Amount          int64
	Currency        string
	ChargeReference string // ChargeResult.Reference of the charge
	IdempotencyRef  string // stable per refund
}

// RefundResult is a refund's outcome.
type RefundResult struct {
	Status         string // Succeeded or Failed
	FailureCode    string
	FailureMessage string
	Reference      string
}

// Sandbox is the built-in test processor. Its outcome depends on the test token only:
// pm_card_visa and pm_card_mastercard succeed; pm_card_chargeDeclined fails with card_declined and
// pm_card_insufficientFunds with insufficient_funds. The fee of a succeeded charge is
// remit.SandboxFee (2.9% + 30 minor units, rounded half-up). Refunds always succeed; the fee of the
// refunded charge is not returned.
type Sandbox struct{}

var _ Processor = Sandbox{}

// Charge implements Processor.
func (Sandbox) Charge(_ context.Context, req ChargeRequest) (ChargeResult, error) {
	ref := "sbch_" + req.IdempotencyRef
	switch req.PaymentMethod {
	case "pm_card_visa", "pm_card_mastercard":
		return ChargeResult{Status: Succeeded, Fee: remit.SandboxFee(req.Amount), Reference: ref}, nil
	case "pm_card_chargeDeclined":
		return ChargeResult{Status: Failed, FailureCode: "card_declined", Reference: ref,
			FailureMessage: "The card was declined. Ask the customer to use another card: attach it through a payment method setup session, then pay the invoice again."}, nil
	case "pm_card_insufficientFunds":
		return ChargeResult{Status: Failed, FailureCode: "insufficient_funds", Reference: ref,
			FailureMessage: "The card has insufficient funds. Ask the customer to use another card, or pay the invoice again once funds are available."}, nil
	}
	return ChargeResult{Status: Failed, FailureCode: "payment_method_unusable", Reference: ref,
		FailureMessage: "The sandbox processor does not know this payment method; attach a test payment method through a setup session."}, nil
}

// Refund implements Processor.
func (Sandbox) Refund(_ context.Context, req RefundRequest) (RefundResult, error) {
	return RefundResult{Status: Succeeded, Reference: "sbre_" + req.IdempotencyRef}, nil
}
