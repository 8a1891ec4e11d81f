package remit

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// EndpointStatus is a webhook endpoint's state.
type EndpointStatus string

// Webhook endpoint states.
const (
	EndpointEnabled  EndpointStatus = "enabled"
	EndpointDisabled EndpointStatus = "disabled"
)

// Why an endpoint was disabled.
const (
	DisabledRequested = "requested" // POST /v1/webhook-endpoints/{id}/disable
	DisabledGone      = "gone"      // the endpoint answered 410 Gone
)

// DeliveryStatus is a webhook delivery's state.
type DeliveryStatus string

// Webhook delivery states and triggers.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"

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
	Status            EndpointStatus    `json:"status"`
	DisabledReason    *string           `json:"disabledReason"`
	DisabledAt        *time.Time        `json:"disabledAt"`
	Secret            string            `json:"secret,omitempty"` // only in the answers to create and rotate-secret
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`

	// PreviousSecretExpiresAt is when the secret the last rotation replaced stops (or stopped)
	// signing deliveries, on the merchant clock; nil when the secret was never rotated.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

// PreviousSecretSigns reports whether the secret the last rotation replaced still signs a delivery
// made at now (the merchant clock): until it expires every delivery carries both signatures.
func (e WebhookEndpoint) PreviousSecretSigns(now time.Time) bool {
	return e.PreviousSecretExpiresAt != nil && now.Before(*e.PreviousSecretExpiresAt)
}

// A rotation keeps the replaced secret signing for expireCurrentAfter seconds: 24 hours unless the
// request says otherwise, at most 7 days; 0 stops it at once (a leaked secret).
const (
	DefaultSecretOverlap = 24 * time.Hour
	MaxSecretOverlap     = 7 * 24 * time.Hour
)

// SecretOverlap is how long a rotation keeps the replaced secret signing: DefaultSecretOverlap when
// expireCurrentAfter is nil, else that many seconds, recording a problem outside [0, 7 days].
func SecretOverlap(expireCurrentAfter *int64, p *Problems) time.Duration {
	if expireCurrentAfter == nil {
		return DefaultSecretOverlap
	}
	s := *expireCurrentAfter
	if s < 0 || s > int64(MaxSecretOverlap/time.Second) {
		p.Body("expireCurrentAfter", "out_of_range", fmt.Sprintf("expireCurrentAfter must be between 0 and %d seconds (7 days).", int64(MaxSecretOverlap/time.Second)))
		return 0
	}
	return time.Duration(s) * time.Second
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
	Status            DeliveryStatus   `json:"status"`
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

// WebhookEndpointInput is a create request.
type WebhookEndpointInput struct {
	EndpointID    string // "" = generate we_...
	URL           string
	EnabledEvents []string // nil = ["*"]
	Description   *string
	Metadata      map[string]string
}

// EndpointURL parses a webhook endpoint URL and records the problems of its shape: absolute http or
// https (https in production), no fragment, a host that is a name or an address (HostAddress). It
// reports false when the URL is unusable. An address host is returned in its usual spelling
// (http://0x7f000001/ becomes http://127.0.0.1/, as a browser writes it), so what is stored is
// what is dialled. Where it may point (EndpointTarget, no private address) is checked apart: the
// engine's part needs a lookup.
func EndpointURL(raw string, env Environment, p *Problems) (*url.URL, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		p.Body("url", "invalid_url", "url must be an absolute URL such as https://hooks.example.com/remit.")
		return nil, false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		p.Body("url", "invalid_scheme", "url must use https (or http in the sandbox).")
		return nil, false
	case u.Scheme != "https" && env == Production:
		p.Body("url", "https_required", "Production endpoints must use https.")
	}
	if u.Fragment != "" {
		p.Body("url", "invalid_url", "url must not carry a #fragment.")
	}
	addr, isAddr, err := HostAddress(u.Hostname())
	switch {
	case err != nil:
		p.Body("url", "invalid_url", "url's host must be a name such as hooks.example.com or an IP address.")
		return nil, false
	case isAddr && addr.Is4():
		u.Host = joinPort(addr.String(), u.Port())
	case isAddr:
		u.Host = joinPort("["+addr.String()+"]", u.Port())
	}
	return u, true
}

func joinPort(host, port string) string {
	if port == "" {
		return host
	}
	return host + ":" + port
}

// EndpointTarget says where an endpoint URL (as EndpointURL returned it) points: name is the host
// name to resolve, lower case ("" when the host is an address literal or a local name); blocked
// reports an address literal or a local name that endpoints may not reach unless private
// addresses are allowed (BlockedAddress, LocalName).
func EndpointTarget(u *url.URL) (name string, blocked bool) {
	if addr, isAddr, err := HostAddress(u.Hostname()); err != nil || isAddr {
		return "", err != nil || BlockedAddress(addr)
	}
	host, err := ASCIIHost(strings.TrimSuffix(u.Hostname(), "."))
	if err != nil || LocalName(host) {
		return "", true
	}
	return host, false
}

// CheckWebhookEndpoint records the problems of an endpoint to create that need no lookup: the
// URL's shape, the event types subscribed to, the metadata rule.
func CheckWebhookEndpoint(in WebhookEndpointInput, env Environment, p *Problems) {
	EndpointURL(in.URL, env, p)
	for i, t := range in.EnabledEvents {
		EventTypeProblem(p, fmt.Sprintf("enabledEvents[%d]", i), t)
	}
	MetadataProblems(p, "metadata", in.Metadata)
}
