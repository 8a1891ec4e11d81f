package remit

import "time"

// Usage metering (docs/usage.md).

// UsageFutureTolerance is how far past the merchant clock a usage event's timestamp may be: enough
// for the caller's clock to run a little ahead, not enough to book usage in a later period.
const UsageFutureTolerance = 5 * time.Minute

// UsageEvent is one metered quantity of a customer on a meter. EventID is the caller's and makes the
// event idempotent: a repeat is counted once.
type UsageEvent struct {
	Object            string            `json:"object"` // "usage_event"
	EventID           string            `json:"eventId"`
	CustomerID        string            `json:"customerId"`
	MeterID           string            `json:"meterId"`
	Quantity          int64             `json:"quantity"`
	Timestamp         time.Time         `json:"timestamp"`
	Properties        map[string]string `json:"properties"`
	Status            string            `json:"status"` // "recorded" | "voided"
	VoidedAt          *time.Time        `json:"voidedAt"`
	Corrections       []UsageCorrection `json:"corrections"` // the credit notes its void issued
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
	UniqueValue       *string           `json:"-"` // the value of the meter's unique property, for unique_count
	Seq               *int64            `json:"-"` // its place among the events of its customer and meter (nil: recorded before seqs)
}

// Usage event states.
const (
	UsageRecorded = "recorded"
	UsageVoided   = "voided"
)

// UsageCorrection is what the void of a usage event changed on one finalized invoice line that
// billed it: the line's usage before and after (aggregated, before packages), the amount the
// line's price gives back for the difference (Amount, before tax and discount) and the credit
// note that gave it back (CreditNoteID; nil when there was nothing to give back). The usage event,
// the invoice line and the credit note each carry it, so that each names the others.
type UsageCorrection struct {
	EventID       string  `json:"eventId"`
	InvoiceID     string  `json:"invoiceId"`
	InvoiceLineID string  `json:"invoiceLineId"`
	UsageBefore   int64   `json:"usageBefore"`
	UsageAfter    int64   `json:"usageAfter"`
	Amount        int64   `json:"amount"`
	CreditNoteID  *string `json:"creditNoteId"`
}

// ThresholdStatus is a usage threshold's state.
type ThresholdStatus string

// Usage threshold states. A threshold that was crossed stays active with CrossedAt set (it is never
// evaluated again); archived stops evaluation for good.
const (
	ThresholdActive   ThresholdStatus = "active"
	ThresholdArchived ThresholdStatus = "archived"
)

// UsageThreshold watches a customer's total usage of a meter and is crossed once, when the total
// first reaches Threshold.
type UsageThreshold struct {
	Object            string            `json:"object"` // "usage_threshold"
	ThresholdID       string            `json:"thresholdId"`
	CustomerID        string            `json:"customerId"`
	MeterID           string            `json:"meterId"`
	Threshold         int64             `json:"threshold"`
	Status            ThresholdStatus   `json:"status"`
	CrossedAt         *time.Time        `json:"crossedAt"`
	ArchivedAt        *time.Time        `json:"archivedAt"`
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// UsageEventInput is a usage event as the caller sends it (POST /v1/usage-events).
type UsageEventInput struct {
	EventID    string
	CustomerID string
	MeterID    string
	Quantity   int64
	Timestamp  *time.Time // default: now on the merchant clock
	Properties map[string]string
}

// UsageBatchMax is the most usage events one batch (POST /v1/usage-events/batch) carries; the
// contract states it as the events array's maxItems.
const UsageBatchMax = 1000

// UsageBatchEvent is one event of a batch as the engine records it. Judge, when set, turns what
// recording the event alone returned into its answer, as the single route's edge does (it adds the
// problems the edge's own checks found); an error it returns rolls the event back.
type UsageBatchEvent struct {
	Input UsageEventInput
	Judge func(error) error
}

// UsageBatchOutcome is what a batch did with one event: Status is UsageBatchCreated,
// UsageBatchDuplicate (a repeat of a recorded event, counted once) or UsageBatchRejected, with Err
// the answer the single route would have given the event alone.
type UsageBatchOutcome struct {
	Status string
	Err    error
}

// Outcomes of a batch's event.
const (
	UsageBatchCreated   = "created"
	UsageBatchDuplicate = "duplicate"
	UsageBatchRejected  = "rejected"
)
