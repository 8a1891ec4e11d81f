package remit

import (
	"encoding/json"
	"time"
)

// Merchant account states (docs/merchant-accounts.md).
// MerchantStatus is a merchant account's state.
type MerchantStatus string

const (
	MerchantDraft           MerchantStatus = "draft"
	MerchantInReview        MerchantStatus = "in_review"
	MerchantApproved        MerchantStatus = "approved"
	MerchantRejected        MerchantStatus = "rejected"
	MerchantUpdateRequested MerchantStatus = "update_requested"
)

// Organization owns API keys and merchant accounts.
type Organization struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// APIKey is a stored key. The secret itself is never stored: only its SHA-256 hash.
type APIKey struct {
	ID             string
	OrganizationID string
	SecretHash     string
	Environments   []Environment
	CreatedAt      time.Time
	RevokedAt      *time.Time
}

// MerchantAccount is a merchant account as the store keeps it. Profile holds the onboarding record
// (addresses, identities, underwriting) as JSON.
type MerchantAccount struct {
	ID                        string
	OrganizationID            string
	Environment               Environment
	ExternalRef               string
	DisplayName               string
	LegalEntityType           string
	Country                   string
	MerchantMode              string
	DefaultCurrency           string
	Status                    MerchantStatus
	PlatformEnabled           bool
	PlatformMerchantAccountID string
	ProcessorAccountID        string // the processor's connected account charged on behalf of (Stripe acct_...), if any
	ClockOffset               time.Duration
	Profile                   json.RawMessage
	Onboarding                Onboarding
	ClaimExpiresAt            *time.Time // sub-merchants: when the claim link expires
	ClaimedAt                 *time.Time // sub-merchants: when the organization was claimed
	CreatedAt                 time.Time
	UpdatedAt                 time.Time
}

// LinkedTo reports whether m is a sub-merchant that the platform account platformID still reaches:
// provisioned under it and not yet claimed by its owner.
func (m MerchantAccount) LinkedTo(platformID string) bool {
	return platformID != "" && m.PlatformMerchantAccountID == platformID && m.ClaimedAt == nil
}

// MerchantClaim hands an organization provisioned for a sub-merchant to its owner, once. Only the
// token's hash is stored.
type MerchantClaim struct {
	TokenHash                 string
	OrganizationID            string
	MerchantAccountID         string
	PlatformMerchantAccountID string
	ExpiresAt                 time.Time
	ClaimedAt                 *time.Time
	APIKeyID                  string
	CreatedAt                 time.Time
}
