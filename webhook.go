package remit

import (
	"slices"
	"time"
)

// Webhook endpoint states.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// Why an endpoint was disabled.
const (
	DisabledRequested = "requested" // POST /v1/webhook-endpoints/{id}/disable
	DisabledGone      = "gone"      // the endpoint answered 410 Gone
)

// Webhook delivery states and triggers.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"

	TriggerDispatch = "dispatch" // the event's first delivery, made by the outbox dispatcher
	TriggerResend   = "resend"   // POST /v1/events/{eventId}/resend
)

// WebhookEndpoint is a URL that receives a merchant account's events.
type WebhookEndpoint struct {
	Object            string            `json:"object"` // always "webhook_endpoint"
	ID                string            `json:"endpointId"`
	URL               string            `json:"url"`
	EnabledEvents     []string          `json:"enabledEvents"`
	Description       *string           `json:"description"`
	Status            string            `json:"status"`
	DisabledReason    *string           `json:"disabledReason"`
	DisabledAt        *time.Time        `json:"disabledAt"`
	Secret            string            `json:"secret,omitempty"` // only in the answer to create
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// Subscribed reports whether the endpoint wants events of type typ ("*" or the exact type).
func (e WebhookEndpoint) Subscribed(typ string) bool {
	return slices.Contains(e.EnabledEvents, "*") || slices.Contains(e.EnabledEvents, typ)
}

// WebhookDelivery is one delivery of an event to an endpoint: up to 1 + len(retry schedule)
// attempts until one is answered 2xx. Its times are real time, not the merchant clock.
type WebhookDelivery struct {
	Object            string           `json:"object"` // always "webhook_delivery"
	ID                string           `json:"deliveryId"`
	EventID           string           `json:"eventId"`
	EndpointID        string           `json:"endpointId"`
	Trigger           string           `json:"trigger"`
	Status            string           `json:"status"`
	Attempts          int              `json:"attempts"`
	LastAttemptAt     *time.Time       `json:"lastAttemptAt"`
	NextAttemptAt     *time.Time       `json:"nextAttemptAt"`
	ResponseStatus    *int             `json:"responseStatus"`
	LastError         *string          `json:"lastError"`
	AttemptHistory    []WebhookAttempt `json:"attemptHistory"`
	Environment       Environment      `json:"environment"`
	MerchantAccountID string           `json:"merchantAccountId"`
	CreatedAt         time.Time        `json:"createdAt"`
}

// WebhookAttempt is one HTTP request of a delivery.
type WebhookAttempt struct {
	Attempt          int       `json:"attempt"`
	AttemptedAt      time.Time `json:"attemptedAt"`
	WebhookTimestamp int64     `json:"webhookTimestamp"`
	ResponseStatus   *int      `json:"responseStatus"`
	DurationMs       *int64    `json:"durationMs"`
	Error            *string   `json:"error"`
}

// EventTypes is the catalog of event types Remit emits or will emit (docs/events.md documents each
// one). An endpoint may subscribe to these or to "*". An area that emits a new type adds it here
// and to docs/events.md.
var EventTypes = []string{
	"merchant_account.created", "merchant_account.submitted", "merchant_account.approved",
	"merchant_account.rejected", "merchant_account.update_requested", "merchant_account.claimed",
	"price.created", "coupon.created", "customer.created", "billing_account.created", "billing_account.updated",
	"customer_balance.granted", "customer_balance.grant_effective", "customer_balance.expired", "customer_balance.applied", "customer_balance.credited",
	"payment_method.setup_session.created", "payment_method.setup_session.completed", "payment_method.attached",
	"quote.created", "quote.accepted",
	"subscription.created", "subscription.updated", "subscription.renewed",
	"invoice.created", "invoice.refreshed", "invoice.finalized", "invoice.voided", "invoice.paid", "invoice.payment_failed",
	"tax_transaction.created", "tax_transaction.committed", "tax_transaction.reversed",
	"payment.succeeded", "payment.failed", "payment_receipt.created", "payment_receipt.updated",
	"settlement.closed", "settlement.paid", "payout.created",
	"credit_note.created", "refund.created",
	"usage_threshold.created", "usage_threshold.crossed", "usage_threshold.archived",
	"webhook_endpoint.created", "webhook_endpoint.disabled",
}

// KnownEventType reports whether typ is in the catalog.
func KnownEventType(typ string) bool { return slices.Contains(EventTypes, typ) }

// WebhookEndpointInput is a create request.
type WebhookEndpointInput struct {
	EndpointID    string // "" = generate we_...
	URL           string
	EnabledEvents []string // nil = ["*"]
	Description   *string
	Metadata      map[string]string
}
