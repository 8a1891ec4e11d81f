package processor

import (
	"context"
	"errors"
)

// Vault is implemented by a connector that keeps payment methods itself (Stripe): in production the
// customer types the card into the processor's own element on Remit's hosted setup page, so no card
// number ever reaches Remit, and Remit keeps only the processor's references. The sandbox
// processor is not a Vault: sandbox setup sessions take test methods (docs/payments.md "Stripe").
//
// The engine calls a Vault with no store transaction open, and stores what it answers in a
// transaction of its own. A Vault must honour these rules, besides the Processor's:
//
//   - CreateCustomer and StartSetup are idempotent on their IdempotencyRef: asked again (a retry,
//     two browsers opening one setup page) they answer the same customer and the same setup.
//   - FinishSetup never trusts the browser: it asks the processor for the setup and answers
//     ErrSetupMismatch unless that setup succeeded with exactly the payment method the page sent,
//     for the customer it was started for; ErrSetupIncomplete when the customer has not finished it.
//   - DetachMethod is idempotent: a method already detached from its customer, or gone, answers
//     nil. A failure that a retry may cure (the processor unreachable, 5xx, rate limited) wraps
//     ErrUnavailable.
type Vault interface {
	// CreateCustomer creates the processor's customer for a Remit customer.
	CreateCustomer(ctx context.Context, req CustomerRequest) (string, error)
	// StartSetup starts saving a payment method for off-session charges to the processor's customer.
	StartSetup(ctx context.Context, req SetupRequest) (Setup, error)
	// FinishSetup checks that the setup saved paymentMethod and answers the method.
	FinishSetup(ctx context.Context, req FinishSetupRequest) (SavedMethod, error)
	// Element is what the hosted setup page loads to collect the card in the browser.
	Element() Element
	// DetachMethod detaches a saved payment method from its processor customer: it can never be
	// charged again.
	DetachMethod(ctx context.Context, req DetachRequest) error
}

// DetachRequest names a saved payment method to detach.
type DetachRequest struct {
	PaymentMethod string // the processor's method (SavedMethod.Token, pm_…)
	Account       string // the connected account, if any
}

// CustomerRequest names the Remit customer a processor customer is made for.
type CustomerRequest struct {
	CustomerID     string // Remit's cus_…, kept in the processor's metadata
	Email, Name    string // optional
	Account        string // the connected account (processorAccountId), if any
	IdempotencyRef string
}

// SetupRequest starts a setup for a processor customer.
type SetupRequest struct {
	Customer       string // the processor's customer
	SessionID      string // Remit's pmss_…, kept in the processor's metadata
	Account        string
	IdempotencyRef string
}

// Setup is a started setup: its reference and the secret the browser confirms it with.
type Setup struct {
	Reference    string // seti_…
	ClientSecret string // given to the hosted page only
}

// FinishSetupRequest asks whether a setup saved a payment method.
type FinishSetupRequest struct {
	Reference     string // Setup.Reference
	Customer      string // the processor's customer the setup was started for
	PaymentMethod string // what the browser says the setup saved (pm_…)
	Account       string
}

// SavedMethod is a payment method a setup saved: the token the processor charges, and the card's
// brand and last four digits for display.
type SavedMethod struct {
	Token, Brand, Last4 string
}

// Element says how the hosted page loads the processor's card element: the script, the
// publishable key it is started with, and the origins the page's Content-Security-Policy must allow.
type Element struct {
	Script         string   // e.g. https://js.stripe.com/v3/
	PublishableKey string   // pk_…; empty means the page cannot collect cards
	ScriptSources  []string // script-src
	FrameSources   []string // frame-src
	ConnectSources []string // connect-src
}

var (
	// ErrSetupMismatch: the setup did not save the payment method the browser named, or saved it
	// for another customer.
	ErrSetupMismatch = errors.New("processor: the setup did not save this payment method")
	// ErrSetupIncomplete: the customer has not finished the setup (no method confirmed yet).
	ErrSetupIncomplete = errors.New("processor: the setup is not complete")
	// ErrUnavailable: the processor could not be reached or could not answer now (a network
	// error, a 5xx, rate limited); the same request may succeed later.
	ErrUnavailable = errors.New("processor: unavailable")
)
