package remit

import "time"

// Usage metering (docs/usage.md).

// UsageFutureTolerance is how far past the merchant clock a usage event's timestamp may be: enough
// for the caller's clock to run a little ahead, not enough to book usage in a later period.
const UsageFutureTolerance = 5 * time.Minute

// UsageEvent is one metered quantity of a customer on a meter. EventID is the caller's and makes the
// event idempotent: a repeat is counted once.
type UsageEvent struct {
	Object            string      `json:"object"` // "usage_event"
	EventID           string      `json:"eventId"`
	CustomerID        string      `json:"customerId"`
	MeterID           string      `json:"meterId"`
	Quantity          int64       `json:"quantity"`
	Timestamp         time.Time   `json:"timestamp"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
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
}
