package remit

import (
	"fmt"
	"slices"
	"strings"
)

// Status tables (docs/architecture.md, "Where each rule lives"): every resource with states has
// one table here that says, for each action, the states it may be taken from. The engine asks the
// table before it acts (Check: nil, or the 409 with details.currentState) and never compares a
// status inline; a new action or state is a row here, with a row in states_test.go. Payments keep
// their transitions from state to state instead (PaymentStatus.CanMove).

// StatusTable is one resource's states and the moves between them.
type StatusTable[S ~string] struct {
	// Resource names the resource in a refusal ("invoice", "usage threshold").
	Resource string
	// From lists, for each action (named as a refusal says it: "finalized"), the states it may be
	// taken from.
	From map[string][]S
	// Instead says, for an action, what to do when the state refuses it; it ends the refusal's
	// message.
	Instead map[string]string
}

// Allows reports whether a resource in state s may be acted on.
func (t StatusTable[S]) Allows(s S, action string) bool { return slices.Contains(t.From[action], s) }

// Check is nil when a resource in state s may be acted on; otherwise the conflict a refusal
// answers: 409 with details.currentState and details.reason invalid_state, and a message that
// names the resource, its state, the action and the states that allow it (and, if the table has
// one, what to do instead).
func (t StatusTable[S]) Check(id string, s S, action string) error {
	if t.Allows(s, action) {
		return nil
	}
	from := make([]string, len(t.From[action]))
	for i, f := range t.From[action] {
		from[i] = string(f)
	}
	msg := fmt.Sprintf("The %s '%s' is %s; it can be %s only when %s.", t.Resource, id, s, action, strings.Join(from, " or "))
	if hint := t.Instead[action]; hint != "" {
		msg += " " + hint
	}
	return Errorf(EConflict, "%s", msg).With("currentState", string(s)).With("reason", "invalid_state")
}

// Resource actions, named as a refusal says them.
const (
	ActionRefresh  = "refreshed"
	ActionFinalize = "finalized"
	ActionVoid     = "voided"
	ActionPay      = "paid"
	ActionCredit   = "credited"
	ActionRevise   = "revised"
	ActionAccept   = "accepted"
	ActionCommit   = "committed"
	ActionArchive  = "archived"
	ActionDisable  = "disabled"
	ActionEnable   = "enabled"
	ActionDetach   = "detached"
	ActionDefault  = "made the default" // a payment method a billing account charges
	ActionCharge   = "charged"
	ActionDun      = "retried by dunning"
	ActionSend     = "sent events"
	ActionMigrate  = "migrated a batch further" // a price migration's next batch
	ActionSettle   = "settled"                  // an open invoice whose remaining amount reached 0 is paid
	ActionOffset   = "offset"                   // a credit taken off what the invoice still asks
	ActionName     = "named by a new quote, invoice or subscription item"
	ActionList     = "listed by a new quote or invoice"
	ActionSubmit   = "submitted" // a merchant account's onboarding, for review
	ActionDecide   = "decided"   // an operator approves, rejects or asks for an update
	ActionBook     = "booked to" // a settlement takes the day's payments and refunds
	ActionClose    = "closed"
	ActionPayOut   = "paid out"
	ActionResolve  = "resolved" // a refund, by the processor's answer
)

// InvoiceStates: drafts change (refresh, a proration's revision) and finalize; open invoices are
// paid, voided and dunned; an uncollectible one may still be paid; finalized invoices are
// credited (docs/invoices-and-tax.md, "States").
var InvoiceStates = StatusTable[InvoiceStatus]{
	Resource: "invoice",
	From: map[string][]InvoiceStatus{
		ActionRefresh:  {InvoiceDraft},
		ActionRevise:   {InvoiceDraft},
		ActionFinalize: {InvoiceDraft},
		ActionVoid:     {InvoiceOpen},
		ActionPay:      {InvoiceOpen, InvoiceUncollectible},
		ActionDun:      {InvoiceOpen},
		ActionCredit:   {InvoiceOpen, InvoicePaid},
		ActionSettle:   {InvoiceOpen},
		ActionOffset:   {InvoiceOpen},
		ActionUpdate:   {InvoiceDraft},
	},
	Instead: map[string]string{
		ActionVoid:   "A paid invoice is credited with a credit note instead.",
		ActionUpdate: "After finalization only metadata changes; a credit note corrects what it bills.",
	},
}

// Allows reports whether an invoice in state s may be acted on (InvoiceStates).
func (s InvoiceStatus) Allows(action string) bool { return InvoiceStates.Allows(s, action) }

// QuoteStates: a draft quote is accepted once, or canceled; accepted and canceled are final
// (docs/quotes-and-subscriptions.md "Quotes").
var QuoteStates = StatusTable[QuoteStatus]{
	Resource: "quote",
	From:     map[string][]QuoteStatus{ActionAccept: {QuoteDraft}, ActionCancel: {QuoteDraft}},
	Instead: map[string]string{
		ActionAccept: "A quote is accepted once: create a new quote for other terms.",
		ActionCancel: "An accepted quote stays accepted: cancel or change the subscription or invoice it produced instead.",
	},
}

// TaxTransactionStates: a quoted tax transaction is committed once.
var TaxTransactionStates = StatusTable[TaxStatus]{
	Resource: "tax transaction",
	From:     map[string][]TaxStatus{ActionCommit: {TaxQuoted}},
}

// Allows reports whether a tax transaction in state s may be acted on (TaxTransactionStates).
func (s TaxStatus) Allows(action string) bool { return TaxTransactionStates.Allows(s, action) }

// ThresholdStates: an active usage threshold is archived once.
var ThresholdStates = StatusTable[ThresholdStatus]{
	Resource: "usage threshold",
	From:     map[string][]ThresholdStatus{ActionArchive: {ThresholdActive}},
}

// EndpointStates: an enabled webhook endpoint is disabled, and is sent events (a resend to a
// disabled one is refused); a disabled one is enabled again. Its secret is rotated in either state.
var EndpointStates = StatusTable[EndpointStatus]{
	Resource: "webhook endpoint",
	From: map[string][]EndpointStatus{ActionDisable: {EndpointEnabled}, ActionSend: {EndpointEnabled},
		ActionEnable: {EndpointDisabled}},
}

// PriceMigrationStates: a running price migration migrates its next batch; a completed or failed
// one does nothing more (docs/price-changes.md "Price migrations").
var PriceMigrationStates = StatusTable[PriceMigrationStatus]{
	Resource: "price migration",
	From:     map[string][]PriceMigrationStatus{ActionMigrate: {PriceMigrationRunning}},
}

// Allows reports whether a price migration in state s may be acted on (PriceMigrationStates).
func (s PriceMigrationStatus) Allows(action string) bool {
	return PriceMigrationStates.Allows(s, action)
}

// PaymentMethodStates: an attached payment method is detached once; only an attached one is
// charged or made a billing account's default (docs/payments.md "Detaching a payment method").
var PaymentMethodStates = StatusTable[PaymentMethodStatus]{
	Resource: "payment method",
	From: map[string][]PaymentMethodStatus{ActionDetach: {PaymentMethodAttached}, ActionDefault: {PaymentMethodAttached},
		ActionCharge: {PaymentMethodAttached}},
	Instead: map[string]string{ActionDefault: "Save a new payment method with a setup session instead."},
}

// Allows reports whether a payment method in state s may be acted on (PaymentMethodStates).
func (s PaymentMethodStatus) Allows(action string) bool { return PaymentMethodStates.Allows(s, action) }

// SubscriptionStates: the subscription lifecycle (docs/quotes-and-subscriptions.md "States").
var SubscriptionStates = StatusTable[SubscriptionStatus]{
	Resource: "subscription",
	From: map[string][]SubscriptionStatus{
		ActionCancel: {SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue, SubscriptionPaused},
		ActionPause:  {SubscriptionActive},
		ActionResume: {SubscriptionPaused},
		ActionChange: {SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue},
		ActionAmend:  {SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue},
	},
}

// Allows reports whether a subscription in state s may be acted on (SubscriptionStates).
func (s SubscriptionStatus) Allows(action string) bool { return SubscriptionStates.Allows(s, action) }

// MerchantStates: onboarding (docs/merchant-accounts.md "States and decisions"): a draft account, or one asked for an update,
// is submitted; one in review is decided (approved, rejected or asked for an update).
var MerchantStates = StatusTable[MerchantStatus]{
	Resource: "merchant account",
	From: map[string][]MerchantStatus{ActionSubmit: {MerchantDraft, MerchantUpdateRequested},
		ActionDecide: {MerchantInReview}},
}

// SettlementStates: a day's settlement takes the day's movements while open, is closed at the end
// of its day, and is paid out once closed (docs/payments.md "Settlements, fees and payouts").
var SettlementStates = StatusTable[SettlementStatus]{
	Resource: "settlement",
	From: map[string][]SettlementStatus{ActionBook: {SettlementOpen}, ActionClose: {SettlementOpen},
		ActionPayOut: {SettlementClosed}},
}

// Allows reports whether a settlement in state s may be acted on (SettlementStates).
func (s SettlementStatus) Allows(action string) bool { return SettlementStates.Allows(s, action) }

// RefundStates: a pending refund is resolved once, succeeded or failed, by the processor's answer
// (docs/payments.md "Refunds"); a refund's status is a plain string on the wire type.
var RefundStates = StatusTable[string]{
	Resource: "refund",
	From:     map[string][]string{ActionResolve: {RefundPending}},
}

// JobStates: a job failed for good is retried by an operator (docs/reliability.md).
var JobStates = StatusTable[JobStatus]{
	Resource: "job",
	From:     map[string][]JobStatus{ActionRetry: {JobFailed}},
}

// Allows reports whether a job in state s may be acted on (JobStates).
func (s JobStatus) Allows(action string) bool { return JobStates.Allows(s, action) }

// CatalogStatus is a price's or a coupon's state: active, or archived (active false).
type CatalogStatus string

// Catalog states.
const (
	CatalogActive   CatalogStatus = "active"
	CatalogArchived CatalogStatus = "archived"
)

func catalogStatus(active bool) CatalogStatus {
	if active {
		return CatalogActive
	}
	return CatalogArchived
}

// Status is the price's state (PriceStates).
func (p Price) Status() CatalogStatus { return catalogStatus(p.Active) }

// Status is the coupon's state (CouponStates).
func (c Coupon) Status() CatalogStatus { return catalogStatus(c.Active) }

// PriceStates: an archived price is named by no new quote, invoice or subscription item (what
// already bills it keeps billing it: a subscription's renewals, a draft's own lines).
var PriceStates = StatusTable[CatalogStatus]{
	Resource: "price",
	From:     map[string][]CatalogStatus{ActionName: {CatalogActive}},
	Instead:  map[string]string{ActionName: "Use an active price, or set the price's active to true again."},
}

// CouponStates: an archived coupon is listed by no new quote or invoice.
var CouponStates = StatusTable[CatalogStatus]{
	Resource: "coupon",
	From:     map[string][]CatalogStatus{ActionList: {CatalogActive}},
	Instead:  map[string]string{ActionList: "Use an active coupon, or set the coupon's active to true again."},
}
