// Package processor is where Remit meets a payment processor. The engine (package app) charges and
// refunds through the Processor interface only; the sandbox processor is built in (sandbox.go), and
// a production connector is any other implementation handed to the engine (app.Config.Processor).
// Without one, production charges answer 501 not_implemented and invoices can only be settled out
// of band.
//
// A payment attempt is an intent (docs/payments.md "Payments as intents"): the engine commits the
// attempt as processing first, calls Charge with no store transaction open and no lock held, and
// records the outcome in a second transaction. A connector must honour these rules:
//
//   - A decline is not an error. Charge returns a ChargeResult with Status Failed, a stable
//     FailureCode (card_declined, insufficient_funds, expired_card, ...) and a FailureMessage a
//     person can act on. The error return is for faults (the processor could not be reached, an
//     unexpected answer): the attempt stays processing, and the reconciler asks Lookup later.
//   - "Not yet" is an answer. Charge may return Processing (the processor has the charge and will
//     settle it later: a webhook or Lookup tells) or RequiresAction with NextActionURL, where the
//     customer completes the payment (3-D Secure). Neither is final.
//   - IdempotencyRef is stable per attempt (the engine derives it from the attempt's payment ID) and
//     is passed to the processor as its idempotency key: a Charge repeated after a crash or a
//     timeout is answered with the same charge, never a second one.
//   - Lookup answers what the processor knows of the charge made for an IdempotencyRef: found false
//     when it never received one (the engine then marks the attempt failed, nothing was taken).
//     The reconciler calls it for every attempt left processing; it must not create a charge.
//   - A refund is an intent too: the engine commits it pending, then calls Refund with no
//     transaction open. Refund is idempotent on its IdempotencyRef for good (not only within a
//     processor's idempotency window): asked again after a crash, it answers the refund it made
//     (Stripe: it first looks for a refund carrying the reference in its metadata). A refusal is a
//     RefundResult with Status Failed; the error return is for faults (the reconciler sends it
//     again later).
//   - Charge, Refund and Lookup never call back into Remit and honour ctx's deadline
//     (REMIT_PROCESSOR_TIMEOUT).
package processor

import (
	"context"
)

// Charge outcomes.
const (
	Succeeded      = "succeeded"
	Failed         = "failed"
	Processing     = "processing"      // the processor holds the charge; its outcome comes later
	RequiresAction = "requires_action" // the customer must act first (NextActionURL)
)

// Processor charges and refunds payment methods.
type Processor interface {
	// Charge takes Amount minor units of Currency from the payment method.
	Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error)
	// Lookup returns the charge made for an idempotency reference, and whether there is one.
	Lookup(ctx context.Context, idempotencyRef string) (ChargeResult, bool, error)
	// Refund returns Amount minor units of an earlier successful charge.
	Refund(ctx context.Context, req RefundRequest) (RefundResult, error)
	// Name is the processor's name on payments: sandbox, stripe.
	Name() string
}

// ChargeRequest is one charge attempt.
type ChargeRequest struct {
	Amount         int64  // minor units, > 0
	Currency       string // ISO 4217, upper case
	PaymentMethod  string // the processor's token of the method (in the sandbox: the test token, pm_card_visa, ...)
	IdempotencyRef string // stable per attempt; see the package comment
	Description    string // shown on the processor's dashboard
	ReturnURL      string // where a customer who completed a required action comes back to
	Customer       string // the processor's customer the payment method belongs to, when it has one
	Account        string // the connected account to charge on behalf of (processorAccountId), if any
}

// ChargeResult is a charge's outcome.
type ChargeResult struct {
	Status         string // Succeeded, Failed, Processing or RequiresAction
	FailureCode    string // when Failed
	FailureMessage string // when Failed: what happened and what to do next
	Fee            int64  // the processor's fee for a succeeded charge, minor units of the currency
	Reference      string // the processor's ID of the charge
	NextActionURL  string // when RequiresAction: where the customer completes the payment
}

// Final reports whether the result ends the attempt.
func (r ChargeResult) Final() bool { return r.Status == Succeeded || r.Status == Failed }

// RefundRequest refunds part or all of a charge.
type RefundRequest struct {
	Amount          int64
	Currency        string
	ChargeReference string // ChargeResult.Reference of the charge
	IdempotencyRef  string // stable per refund (the engine uses the refund's ID)
	Account         string // the connected account the charge was made on, if any
}

// RefundResult is a refund's outcome.
type RefundResult struct {
	Status         string // Succeeded or Failed
	FailureCode    string
	FailureMessage string
	Reference      string
}
