package remit

import "time"

// Payments, receipts, settlements and payouts (docs/payments.md). An invoice has at most one
// payment intent (pi_); each collection attempt is one payment (pay_) under it, succeeded or failed. Each succeeded payment has one receipt (rcpt_) and,
// when its money went through the processor, lands in the day's settlement (stl_), which closes at
// the end of its UTC day and is paid out (po_) two days later.

// Payment statuses.
// PaymentStatus is a payment attempt's outcome.
type PaymentStatus string

// A payment attempt's states (docs/payments.md "Payments as intents"): processing → succeeded |
// failed | requires_action; requires_action → processing | failed | canceled.
const (
	PaymentProcessing     PaymentStatus = "processing"
	PaymentSucceeded      PaymentStatus = "succeeded"
	PaymentFailed         PaymentStatus = "failed"
	PaymentRequiresAction PaymentStatus = "requires_action"
	PaymentCanceled       PaymentStatus = "canceled"
)

// PaymentStatuses lists the states, for filters.
var PaymentStatuses = []PaymentStatus{PaymentProcessing, PaymentSucceeded, PaymentFailed, PaymentRequiresAction, PaymentCanceled}

var paymentMoves = map[PaymentStatus][]PaymentStatus{
	PaymentProcessing:     {PaymentSucceeded, PaymentFailed, PaymentRequiresAction},
	PaymentRequiresAction: {PaymentProcessing, PaymentSucceeded, PaymentFailed, PaymentCanceled},
}

// CanMove reports whether an attempt in state from may move to state to. A requires_action
// attempt the customer completed moves through processing to its outcome; the engine records both
// steps at once, so succeeded and failed are allowed from it directly.
func (from PaymentStatus) CanMove(to PaymentStatus) bool {
	for _, s := range paymentMoves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Refundable reports whether a credit note's refund may take money back from the attempt: only a
// succeeded one moved money (docs/payments.md "Refunds").
func (s PaymentStatus) Refundable() bool { return s == PaymentSucceeded }

// Open reports whether the attempt has no outcome yet.
func (s PaymentStatus) Open() bool { return s == PaymentProcessing || s == PaymentRequiresAction }

// Processors of a payment: the built-in sandbox, a connector (stripe), or none (out_of_band).
const (
	ProcessorSandbox   = "sandbox"
	ProcessorOutOfBand = "out_of_band"
)

// NextAction is what the customer must do for a requires_action payment.
type NextAction struct {
	Type string `json:"type"` // redirect_to_url
	URL  string `json:"url"`
}

// Payment methods of a payment: a card charged through the processor, or money the merchant
// received outside Remit (POST /v1/invoices/{id}/pay {"outOfBand": true}).
const (
	MethodCard      = "card"
	MethodOutOfBand = "out_of_band"
)

// Where a payment attempt came from.
const (
	SourceFinalize = "finalize" // collection at finalization (charge_automatically)
	SourceAPI      = "api"      // POST /v1/invoices/{id}/pay
	SourcePortal   = "portal"   // PUT /customer-portal/invoices/{id}/pay
	SourceDunning  = "dunning"  // a scheduled retry of a failed automatic charge (docs/dunning.md)
)

// IntentStatus is a payment intent's state.
type IntentStatus string

// Payment intent statuses: one intent per invoice collects it across attempts.
const (
	IntentRequiresPaymentMethod IntentStatus = "requires_payment_method" // created, or the last attempt failed
	IntentSucceeded             IntentStatus = "succeeded"
)

// ReceiptStatus is a payment receipt's state.
type ReceiptStatus string

// Receipt statuses.
const (
	ReceiptSucceeded         ReceiptStatus = "succeeded"
	ReceiptPartiallyRefunded ReceiptStatus = "partially_refunded"
	ReceiptRefunded          ReceiptStatus = "refunded"
)

// ReceiptStatuses lists the receipt statuses in documentation order.
var ReceiptStatuses = []string{string(ReceiptSucceeded), string(ReceiptPartiallyRefunded), string(ReceiptRefunded)}

// ReceiptStatusOf is the status of a receipt of amount of which refunded was refunded.
func ReceiptStatusOf(amount, refunded int64) ReceiptStatus {
	switch {
	case refunded <= 0:
		return ReceiptSucceeded
	case refunded < amount:
		return ReceiptPartiallyRefunded
	}
	return ReceiptRefunded
}

// Settlement statuses: open → closed (end of its UTC day on the merchant clock) → paid (two days
// later, with a payout).
// SettlementStatus is a settlement's state.
type SettlementStatus string

const (
	SettlementOpen   SettlementStatus = "open"
	SettlementClosed SettlementStatus = "closed"
	SettlementPaid   SettlementStatus = "paid"
)

// SettlementScopes are the values of the settlements list's scope filter ("all" is the default).
var SettlementScopes = []string{string(SettlementOpen), string(SettlementClosed), string(SettlementPaid), "all"}

// SandboxFee is the sandbox processor's fee for a card payment of amount minor units: 2.9% of the
// amount rounded half-up, plus 30 minor units.
func SandboxFee(amount int64) int64 {
	return RoundHalfUp(amount*29, 1000) + 30
}

// SettlementDay is the UTC day [start, start+24h) that a moment on the merchant clock falls in.
func SettlementDay(at time.Time) time.Time {
	return at.UTC().Truncate(24 * time.Hour)
}

// PaymentError is an invoice's last failed collection attempt.
type PaymentError struct {
	Code      string    `json:"code"`    // card_declined, insufficient_funds, ...
	Message   string    `json:"message"` // what happened and what to do next
	PaymentID string    `json:"paymentId"`
	At        time.Time `json:"at"`
}

// PaymentIntent collects one invoice; its payments are the attempts.
type PaymentIntent struct {
	Object            string        `json:"object"` // "payment_intent"
	PaymentIntentID   string        `json:"paymentIntentId"`
	InvoiceID         string        `json:"invoiceId"`
	CustomerID        string        `json:"customerId"`
	Amount            int64         `json:"amount"`
	Currency          string        `json:"currency"`
	Status            IntentStatus  `json:"status"`
	LastPaymentError  *PaymentError `json:"lastPaymentError"`
	Environment       Environment   `json:"environment"`
	MerchantAccountID string        `json:"merchantAccountId"`
	CreatedAt         time.Time     `json:"createdAt"`
	UpdatedAt         time.Time     `json:"updatedAt"`
}

// Payment is one collection attempt of an invoice.
type Payment struct {
	Object             string                `json:"object"` // "payment"
	PaymentID          string                `json:"paymentId"`
	PaymentIntentID    string                `json:"paymentIntentId"`
	InvoiceID          string                `json:"invoiceId"`
	CustomerID         string                `json:"customerId"`
	BillingAccountID   string                `json:"billingAccountId"`
	Attempt            int64                 `json:"attempt"` // 1, 2, ... per invoice
	Amount             int64                 `json:"amount"`
	Currency           string                `json:"currency"`
	Status             PaymentStatus         `json:"status"` // succeeded | failed
	Method             string                `json:"method"` // card | out_of_band
	PaymentMethod      *PaymentMethodSummary `json:"paymentMethod"`
	Source             string                `json:"source"` // finalize | api | portal
	FailureCode        *string               `json:"failureCode"`
	FailureMessage     *string               `json:"failureMessage"`
	FeeAmount          int64                 `json:"feeAmount"`
	AmountRefunded     int64                 `json:"amountRefunded"`
	SettlementID       *string               `json:"settlementId"`
	ProcessorReference *string               `json:"processorReference"`
	Processor          string                `json:"processor"` // sandbox | stripe | out_of_band
	NextAction         *NextAction           `json:"nextAction"`
	Environment        Environment           `json:"environment"`
	MerchantAccountID  string                `json:"merchantAccountId"`
	CreatedAt          time.Time             `json:"createdAt"`
	UpdatedAt          time.Time             `json:"updatedAt"`
	IdempotencyRef     string                `json:"-"` // what the processor knows the attempt by
	ReconcileAfter     *time.Time            `json:"-"` // real time: when the reconciler may ask the processor (processing only)
	MethodToken        string                `json:"-"` // the processor's token of the method charged
	ProcessorCustomer  string                `json:"-"` // the processor's customer the method belongs to, if any
}

// Settled reports whether the payment's money went through the processor and so belongs in a
// settlement. Out-of-band payments were received by the merchant directly: never settled.
func (p Payment) Settled() bool { return p.Status == PaymentSucceeded && p.Method == MethodCard }

// ReceiptPaymentMethod is how a receipt's payment was made, masked. Brand and Last4 are null for
// out-of-band payments.
type ReceiptPaymentMethod struct {
	Type  string  `json:"type"` // card | out_of_band
	Brand *string `json:"brand"`
	Last4 *string `json:"last4"`
}

// PaymentReceipt is the receipt of one successful payment.
type PaymentReceipt struct {
	Object             string               `json:"object"` // "payment_receipt"
	ReceiptID          string               `json:"receiptId"`
	ReceiptNumber      string               `json:"receiptNumber"` // RCPT-000001, gap-free per merchant account
	InvoiceID          string               `json:"invoiceId"`
	InvoiceNumber      *string              `json:"invoiceNumber"`
	CustomerID         string               `json:"customerId"`
	CustomerExternalID *string              `json:"customerExternalId"`
	BillingAccountID   string               `json:"billingAccountId"`
	PaymentID          string               `json:"paymentId"`
	PaymentIntentID    string               `json:"paymentIntentId"`
	Amount             int64                `json:"amount"`
	AmountRefunded     int64                `json:"amountRefunded"`
	Currency           string               `json:"currency"`
	Status             ReceiptStatus        `json:"status"`
	PaymentMethod      ReceiptPaymentMethod `json:"paymentMethod"`
	Environment        Environment          `json:"environment"`
	MerchantAccountID  string               `json:"merchantAccountId"`
	CreatedAt          time.Time            `json:"createdAt"`
	UpdatedAt          time.Time            `json:"updatedAt"`
}

// Settlement gathers a merchant account's processed payments and refunds of one currency and one
// UTC day. NetAmount = GrossAmount − RefundAmount − FeeAmount.
type Settlement struct {
	Object            string           `json:"object"` // "settlement"
	SettlementID      string           `json:"settlementId"`
	Currency          string           `json:"currency"`
	Status            SettlementStatus `json:"status"`
	PeriodStart       time.Time        `json:"periodStart"`
	PeriodEnd         time.Time        `json:"periodEnd"`
	GrossAmount       int64            `json:"grossAmount"`
	RefundAmount      int64            `json:"refundAmount"`
	FeeAmount         int64            `json:"feeAmount"`
	NetAmount         int64            `json:"netAmount"`
	PaymentCount      int64            `json:"paymentCount"`
	RefundCount       int64            `json:"refundCount"`
	ClosedAt          *time.Time       `json:"closedAt"`
	PaidAt            *time.Time       `json:"paidAt"`
	PayoutID          *string          `json:"payoutId"`
	Environment       Environment      `json:"environment"`
	MerchantAccountID string           `json:"merchantAccountId"`
	CreatedAt         time.Time        `json:"createdAt"`
	UpdatedAt         time.Time        `json:"updatedAt"`
}

// Payout pays a closed settlement's net amount to the merchant's bank account. A negative amount
// (refunds and fees above the day's payments) is a debit.
type Payout struct {
	Object            string      `json:"object"` // "payout"
	PayoutID          string      `json:"payoutId"`
	SettlementID      string      `json:"settlementId"`
	Amount            int64       `json:"amount"`
	Currency          string      `json:"currency"`
	Status            string      `json:"status"` // "paid"
	BankAccountLast4  *string     `json:"bankAccountLast4"`
	ArrivalDate       time.Time   `json:"arrivalDate"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
}

// OffsetList is the data of a list paged by offset (payment receipts):
// {"object":"list","items":[...],"hasMore":bool,"offset":n,"limit":n}.
type OffsetList[T any] struct {
	Object  string `json:"object"`
	Items   []T    `json:"items"`
	HasMore bool   `json:"hasMore"`
	Offset  int64  `json:"offset"`
	Limit   int    `json:"limit"`
}

// NewOffsetList builds an offset page. items is never null in JSON.
func NewOffsetList[T any](items []T, more bool, offset int64, limit int) OffsetList[T] {
	if items == nil {
		items = []T{}
	}
	return OffsetList[T]{Object: "list", Items: items, HasMore: more, Offset: offset, Limit: limit}
}

// Refund is money returned to the customer against one payment, made by a credit note's refund
// bucket.
type Refund struct {
	Object             string      `json:"object"` // "refund"
	RefundID           string      `json:"refundId"`
	PaymentID          string      `json:"paymentId"`
	InvoiceID          string      `json:"invoiceId"`
	CreditNoteID       string      `json:"creditNoteId"`
	Amount             int64       `json:"amount"`
	Currency           string      `json:"currency"`
	Status             string      `json:"status"`    // RefundPending, RefundSucceeded, RefundFailed
	Processor          *string     `json:"processor"` // the processor of the payment refunded; null out of band
	ProcessorReference *string     `json:"processorReference"`
	FailureCode        *string     `json:"failureCode"`
	FailureMessage     *string     `json:"failureMessage"`
	Environment        Environment `json:"environment"`
	MerchantAccountID  string      `json:"merchantAccountId"`
	CreatedAt          time.Time   `json:"createdAt"`
	UpdatedAt          time.Time   `json:"updatedAt"`

	ChargeReference string     `json:"-"` // the payment's processor reference, which the refund names
	ReconcileAfter  *time.Time `json:"-"` // real time: when the reconciler may send a pending refund again
}

// Refund states (docs/payments.md "Refunds"): a refund of a card payment is pending from the
// credit note's transaction until the processor answers; one of a payment received out of band
// succeeds at once.
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// SetupSessionInput is the body of POST /v1/customers/{id}/payment-method-setup.
type SetupSessionInput struct {
	BillingAccountID *string // the method is attached to it (and may become its default)
	MethodType       string  // "card" (the default)
	SetAsDefault     bool
}

// CheckSetupSession records the problems of a setup session request on its own: setAsDefault
// needs billingAccountId (the default payment method is a billing account's).
func CheckSetupSession(in SetupSessionInput, p *Problems) {
	if in.SetAsDefault && in.BillingAccountID == nil {
		p.Body("setAsDefault", "requires_billing_account", "setAsDefault needs billingAccountId: the default payment method is a billing account's.")
	}
}

// PaymentQuery is the payments list's query, every value the raw query string ("" when absent).
type PaymentQuery struct {
	InvoiceID, CustomerID, Status string
	ListQuery
}

// ReceiptQuery is the receipt list's query, every value the raw query string ("" when absent).
type ReceiptQuery struct {
	Customer, CustomerID string // aliases
	CustomerExternalID   string
	BillingAccountID     string
	Invoice, InvoiceID   string // aliases
	PaymentID            string
	PaymentIntentID      string
	Status               string
	Limit, Offset        string
	// CreatedFrom and CreatedTo bound the receipts' creation time, [from, to) in RFC 3339.
	CreatedFrom, CreatedTo string
}

// ProcessorWebhookAck is the answer to a processor's webhook.
type ProcessorWebhookAck struct {
	Object   string `json:"object"` // "processor_webhook"
	Received bool   `json:"received"`
	Handled  bool   `json:"handled"` // it settled one of Remit's payment attempts
}
