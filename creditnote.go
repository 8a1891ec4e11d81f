package remit

import "time"

// Credit note reasons and buckets (docs/credit-notes.md).
const (
	BucketCredit = "credit" // adds a credit_note entry to the customer's prepaid balance
	BucketRefund = "refund" // returns money through the processor
	BucketOffset = "offset" // lowers what is still due on the invoice
)

// CreditNote is an issued credit note. Amounts include tax: TaxTotal is the tax share reversed.
type CreditNote struct {
	Object            string            `json:"object"` // "credit_note"
	CreditNoteID      string            `json:"creditNoteId"`
	Number            string            `json:"number"` // CN-000001
	InvoiceID         string            `json:"invoiceId"`
	CustomerID        string            `json:"customerId"`
	Currency          string            `json:"currency"`
	Reason            string            `json:"reason"`
	Status            string            `json:"status"` // "issued"
	Description       *string           `json:"description"`
	Lines             []CreditNoteLine  `json:"lines"`
	CreditAmount      int64             `json:"creditAmount"`
	RefundAmount      int64             `json:"refundAmount"`
	OffsetAmount      int64             `json:"offsetAmount"`
	Total             int64             `json:"total"`
	TaxTotal          int64             `json:"taxTotal"`
	TaxTransactionID  *string           `json:"taxTransactionId"`
	BalanceEntryID    *string           `json:"balanceEntryId"` // the credit bucket's ledger entry
	RefundIDs         []string          `json:"refundIds"`
	UsageEventID      *string           `json:"usageEventId"` // the voided usage event a usage_correction note gives back
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// CreditNoteLine is one line of a credit note; an invoice-level line (no InvoiceLineID) is spread
// over the invoice's lines, which Allocations shows.
type CreditNoteLine struct {
	CreditNoteLineID string             `json:"creditNoteLineId"`
	InvoiceLineID    *string            `json:"invoiceLineId"`
	Bucket           string             `json:"bucket"`
	Description      string             `json:"description"`
	Amount           int64              `json:"amount"`
	TaxAmount        int64              `json:"taxAmount"`
	Allocations      []CreditAllocation `json:"allocations"`
	Metadata         map[string]string  `json:"metadata"`
}

// CreditAllocation is the part of a credit note line that credits one invoice line.
type CreditAllocation struct {
	InvoiceLineID string `json:"invoiceLineId"`
	Amount        int64  `json:"amount"`
	TaxAmount     int64  `json:"taxAmount"`
}

// LineBilled is what an invoice line charged: its amount after discount and prepaid balance,
// plus its tax. Credits are measured against it.
func LineBilled(l InvoiceLine) int64 {
	return l.Amount - l.DiscountAmount - l.PrepaidApplied + l.TaxAmount
}

// LineCreditable is what is left to credit of an invoice line.
func LineCreditable(l InvoiceLine) int64 { return LineBilled(l) - l.CreditedAmount }

// CreditNoteLineInput is one requested line.
type CreditNoteLineInput struct {
	InvoiceLineID *string
	Bucket        *string // default: offset on an open invoice, credit on a paid one
	Description   string
	Amount        int64
	Metadata      map[string]string
}

// Credit note reasons Remit itself gives (the contract's CreditNoteReason lists every reason).
const (
	ReasonOrderChange          = "order_change"
	ReasonSubscriptionCanceled = "subscription_canceled"
	ReasonUsageCorrection      = "usage_correction"
)

// CreditNoteInput is a credit note to issue.
type CreditNoteInput struct {
	CreditNoteID string
	InvoiceID    string
	Reason       string
	Description  *string
	CreditAmount *int64
	RefundAmount *int64
	OffsetAmount *int64
	Lines        []CreditNoteLineInput
	Metadata     map[string]string
	UsageEventID *string // a usage correction's voided event
}
