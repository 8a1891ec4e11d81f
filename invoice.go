package remit

import "time"

// Invoice states (docs/invoices-and-tax.md): draft → open → paid, open → void, open →
// uncollectible → paid (dunning's final action; docs/dunning.md). A draft's lines and figures are
// recomputed by refresh; from finalization on they never change again, except through payments
// and credit notes.
const (
	InvoiceDraft         InvoiceStatus = "draft"
	InvoiceOpen          InvoiceStatus = "open"
	InvoicePaid          InvoiceStatus = "paid"
	InvoiceVoid          InvoiceStatus = "void"
	InvoiceUncollectible InvoiceStatus = "uncollectible"
)

// InvoiceStatuses lists an invoice's states, in lifecycle order.
var InvoiceStatuses = []InvoiceStatus{InvoiceDraft, InvoiceOpen, InvoicePaid, InvoiceVoid, InvoiceUncollectible}

// InvoiceStatus is an invoice's state.
type InvoiceStatus string

// Payable reports whether an invoice in state s can still be paid: open, or marked uncollectible
// by dunning (a late payment makes it paid). InvoiceStates is the table.
func (s InvoiceStatus) Payable() bool { return s.Allows(ActionPay) }

// Invoice is an invoice with its lines and figures. Amounts are minor units of Currency.
//
// Total = Subtotal − DiscountTotal − PrepaidApplied + TaxTotal; AmountDue = Total;
// AmountRemaining = AmountDue − AmountPaid − what credit notes offset.
type Invoice struct {
	Object           string        `json:"object"` // "invoice"
	InvoiceID        string        `json:"invoiceId"`
	Number           *string       `json:"number"` // INV-000001, assigned at finalization
	CustomerID       string        `json:"customerId"`
	BillingAccountID string        `json:"billingAccountId"`
	Currency         string        `json:"currency"`
	Status           InvoiceStatus `json:"status"`
	CollectionMethod string        `json:"collectionMethod"`
	SubscriptionID   *string       `json:"subscriptionId"`
	QuoteID          *string       `json:"quoteId"`
	PeriodStart      *time.Time    `json:"periodStart"`
	PeriodEnd        *time.Time    `json:"periodEnd"`
	CouponIDs        []string      `json:"couponIds"`
	Lines            []InvoiceLine `json:"lines"`
	Subtotal         int64         `json:"subtotal"`
	DiscountTotal    int64         `json:"discountTotal"`
	PrepaidApplied   int64         `json:"prepaidApplied"`
	TaxTotal         int64         `json:"taxTotal"`
	// TaxStale: the tax provider did not answer the draft's last pricing (creation or refresh), so
	// its tax is the previous calculation's (none for a draft never calculated); finalization asks
	// again (docs/invoices-and-tax.md, "Tax providers").
	TaxStale bool `json:"taxStale"`
	// TaxCalculationID is the tax provider's calculation the figures were just computed from (not
	// stored with the invoice: its tax transaction keeps it); empty for the built-in table.
	TaxCalculationID  string            `json:"-"`
	Total             int64             `json:"total"`
	AmountDue         int64             `json:"amountDue"`
	AmountPaid        int64             `json:"amountPaid"`
	AmountRemaining   int64             `json:"amountRemaining"`
	CreditedTotal     int64             `json:"creditedTotal"`
	OffsetTotal       int64             `json:"offsetTotal"` // credit notes' offset bucket
	RefundedTotal     int64             `json:"refundedTotal"`
	TaxTransactionID  *string           `json:"taxTransactionId"`
	PaymentURL        *string           `json:"paymentUrl"`       // open invoices: the hosted pay route
	HostedInvoiceURL  *string           `json:"hostedInvoiceUrl"` // finalized invoices: the hosted page, whatever they became
	AutoFinalizeAt    *time.Time        `json:"autoFinalizeAt"`   // subscription drafts finalize themselves then
	LastPaymentError  *PaymentError     `json:"lastPaymentError"`
	LatestPaymentID   *string           `json:"latestPaymentId"`   // the last payment attempt, if any (GET /v1/payments/{id})  // the last failed collection, if any
	FinalizedByRef    *string           `json:"finalizedByRef"`    // the caller's reference given at finalization
	FinalizedAt       *time.Time        `json:"finalizedAt"`       //
	PaidAt            *time.Time        `json:"paidAt"`            //
	VoidedAt          *time.Time        `json:"voidedAt"`          //
	DaysUntilDue      *int64            `json:"daysUntilDue"`      // payment terms: dueDate is finalizedAt plus this many days
	DueDate           *time.Time        `json:"dueDate"`           // set at finalization when daysUntilDue is
	Memo              *string           `json:"memo"`              // a note to the customer, shown on the invoice
	Metadata          map[string]string `json:"metadata"`          //
	Environment       Environment       `json:"environment"`       //
	MerchantAccountID string            `json:"merchantAccountId"` //
	CreatedAt         time.Time         `json:"createdAt"`
	UpdatedAt         time.Time         `json:"updatedAt"`

	// Dunning (docs/dunning.md): attempts made, the next automatic retry, and where the schedule is.
	AttemptCount         int64         `json:"attemptCount"`
	NextPaymentAttemptAt *time.Time    `json:"nextPaymentAttemptAt"`
	DunningStatus        DunningStatus `json:"dunningStatus"`
	DunningStartedAt     *time.Time    `json:"-"` // the first failed automatic charge: the schedule counts from it
	DunningRetries       int64         `json:"-"` // retries the schedule has made
}

// InvoiceLine is one line of an invoice.
type InvoiceLine struct {
	Object         string     `json:"object"` // "invoice_line"
	InvoiceLineID  string     `json:"invoiceLineId"`
	LineType       string     `json:"lineType"` // recurring | one_time | usage
	PriceID        string     `json:"priceId"`
	PriceType      string     `json:"priceType"`
	MeterID        *string    `json:"meterId"`
	Description    string     `json:"description"`
	Quantity       int64      `json:"quantity"`
	UnitAmount     int64      `json:"unitAmount"`
	UnitOverride   bool       `json:"-"` // the unit amount was given on the line, not read from the catalog
	Amount         int64      `json:"amount"`
	DiscountAmount int64      `json:"discountAmount"`
	PrepaidApplied int64      `json:"prepaidApplied"`
	TaxAmount      int64      `json:"taxAmount"`
	CreditedAmount int64      `json:"creditedAmount"`
	CreditedTax    int64      `json:"creditedTaxAmount"` // the tax reversed by credit notes so far
	Taxes          []LineTax  `json:"taxes"`
	PeriodStart    *time.Time `json:"periodStart"`
	PeriodEnd      *time.Time `json:"periodEnd"`
	// TierBreakdown shows how a tiered line's amount was reached, tier by tier (nil otherwise).
	TierBreakdown []TierBreakdown `json:"tierBreakdown"`
	// UsageCorrections are the voids of usage this finalized usage line billed, each with the
	// credit note that gave the difference back.
	UsageCorrections []UsageCorrection `json:"usageCorrections"`
	// UsageQuantity is the usage a usage line bills, aggregated by its meter, before packages.
	UsageQuantity *int64 `json:"-"`
	// UsageSeq is, on a finalized usage line, the seq of the last usage event of its customer and
	// meter counted when it was finalized: it billed the events with a seq up to it.
	UsageSeq *int64 `json:"-"`
}

// Billed reports whether finalized usage line l billed usage event e (whose timestamp lies in the
// line's period): e was counted before the line's finalization read the usage. Lines and events
// from before seqs were kept compare times: recorded at or before the finalization.
func (l InvoiceLine) Billed(e UsageEvent, finalizedAt time.Time) bool {
	if l.UsageSeq != nil && e.Seq != nil {
		return *e.Seq <= *l.UsageSeq
	}
	return !e.CreatedAt.After(finalizedAt)
}

// BilledUsage is the usage a finalized usage line bills now: what it billed at finalization,
// less the corrections made since.
func (l InvoiceLine) BilledUsage() int64 {
	if n := len(l.UsageCorrections); n > 0 {
		return l.UsageCorrections[n-1].UsageAfter
	}
	if l.UsageQuantity != nil {
		return *l.UsageQuantity
	}
	return l.Quantity
}

// LineTax is a line's tax in one jurisdiction. Rate is a decimal fraction (0.0725); RatePPM is the
// exact rate in parts per million.
type LineTax struct {
	Jurisdiction  string  `json:"jurisdiction"`
	Rate          float64 `json:"rate"`
	RatePPM       int64   `json:"ratePpm"`
	TaxableAmount int64   `json:"taxableAmount"`
	TaxAmount     int64   `json:"taxAmount"`
	Reversed      int64   `json:"reversedAmount"` // reversed by credit notes so far
}

// TaxStatus is a tax transaction's state.
type TaxStatus string

// Tax transaction states and types (docs/invoices-and-tax.md).
const (
	TaxQuoted    TaxStatus = "quoted"
	TaxCommitted TaxStatus = "committed"
	TaxReversed  TaxStatus = "reversed"
	TaxSale                = "sale"
	TaxReversal            = "reversal"
)

// TaxStatuses are the tax transaction states, in their order (the list's status= filter).
var TaxStatuses = []TaxStatus{TaxQuoted, TaxCommitted, TaxReversed}

// TaxTransaction records the tax of an invoice (type sale: quoted while the invoice is a draft,
// committed at finalization) or of a credit note (type reversal, committed at once).
type TaxTransaction struct {
	Object           string               `json:"object"` // "tax_transaction"
	TaxTransactionID string               `json:"taxTransactionId"`
	Status           TaxStatus            `json:"status"`
	Type             string               `json:"type"`
	SourceDocumentID string               `json:"sourceDocumentId"` // invoice or credit note
	CustomerID       string               `json:"customerId"`
	Currency         string               `json:"currency"`
	Lines            []TaxTransactionLine `json:"lines"`
	TotalTax         int64                `json:"totalTax"`
	TaxExempt        bool                 `json:"taxExempt"`
	CommittedAt      *time.Time           `json:"committedAt"`
	// Provider is where the tax came from (REMIT_TAX_PROVIDER: builtin or stripe); with stripe, the
	// calculation it was made from and Stripe's own transaction (a committed sale or a reversal).
	Provider              string      `json:"provider"`
	ProviderCalculationID *string     `json:"providerCalculationId"`
	ProviderTransactionID *string     `json:"providerTransactionId"`
	Environment           Environment `json:"environment"`
	MerchantAccountID     string      `json:"merchantAccountId"`
	CreatedAt             time.Time   `json:"createdAt"`
	UpdatedAt             time.Time   `json:"updatedAt"`
}

// TaxTransactionLine is one line's tax in one jurisdiction. Reversal amounts are negative.
type TaxTransactionLine struct {
	LineID        string  `json:"lineId"` // the invoice line
	TaxableAmount int64   `json:"taxableAmount"`
	TaxAmount     int64   `json:"taxAmount"`
	Rate          float64 `json:"rate"`
	RatePPM       int64   `json:"ratePpm"`
	Jurisdiction  string  `json:"jurisdiction"`
}

// InvoiceLineInput is one requested line.
type InvoiceLineInput struct {
	PriceID     string
	Quantity    *int64
	UnitAmount  *int64
	Description *string
	TrialDays   *int64 // quote lines of a subscription_creation quote only
	// Agreed marks a line that bills what a quote or subscription agreed: its UnitAmount is the
	// agreed one, which a price priced by tiers or packages does not have (its pricing applies).
	Agreed bool
	// Trial marks a fixed line of a subscription's trial: billed at its UnitAmount (0), whatever
	// the price's tiers or packages.
	Trial bool
	// Prorated marks a proration charge: its UnitAmount is the share of a period that the price's
	// own pricing (LineAmount, through ItemAmounts) already priced, billed once as it is, whatever
	// the price's tiers or packages.
	Prorated bool
}

// InvoiceDraftInput is a draft invoice to create, from the API or from a quote or subscription.
type InvoiceDraftInput struct {
	InvoiceID        string
	CustomerID       string
	BillingAccountID string
	Currency         string
	Lines            []InvoiceLineInput
	PeriodStart      *time.Time
	PeriodEnd        *time.Time
	CouponIDs        []string
	Metadata         map[string]string
	SubscriptionID   *string
	QuoteID          *string
	AutoFinalizeAt   *time.Time
	DaysUntilDue     *int64 // payment terms: dueDate is finalizedAt plus this many days
	// RefuseArchived: a new invoice of the API, which may name no archived price or coupon
	// (PriceStates, CouponStates); a quote's or a subscription's bills what was agreed.
	RefuseArchived bool
	Memo           *string // a note to the customer, shown on the invoice
	// LinePeriods optionally gives each line its own service period (subscriptions bill fixed
	// lines in advance and usage in arrears); nil entries use the invoice's period.
	LinePeriods []*[2]time.Time
}
