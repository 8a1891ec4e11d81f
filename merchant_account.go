package remit

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Value sets of the merchant-account record (docs/merchant-accounts.md).
var (
	LegalEntityTypes = []string{"individual_sole_proprietorship", "corporation", "limited_liability_company",
		"partnership", "association_estate_trust", "tax_exempt_organization", "government_agency"}
	MerchantModes    = []string{"direct", "platform", "merchant_of_record"}
	BankAccountTypes = []string{"checking", "savings"}
	RelationTypes    = []string{"individual", "business"}
	IdentityRoles    = []string{"principal", "beneficial_owner", "control_person", "authorized_signer", "director"}
	SubmittedByTypes = []string{"merchant", "operator", "system"}
)

// SoleProprietorship is the legal entity type whose owner's firstName/lastName may stand in for a
// control person at onboarding.
const SoleProprietorship = "individual_sole_proprietorship"

// Payout terms of every merchant account (docs/merchant-accounts.md).
const (
	PayoutSchedule  = "daily"
	PayoutDelayDays = 2
)

// ClaimTTL is how long a sub-merchant's claim link stays valid.
const ClaimTTL = 7 * 24 * time.Hour

// OneOf reports whether v is in set.
func OneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// ValidEmail reports whether s is a bare e-mail address (local@domain, no display name).
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && strings.Contains(s[at+1:], ".")
}

// ValidWebURL reports whether s is an absolute http or https URL with a host.
func ValidWebURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != "" && !strings.ContainsAny(s, " \t\r\n")
}

// ProfileDate is a calendar date given as day, month and year.
type ProfileDate struct {
	Day   int64 `json:"day"`
	Month int64 `json:"month"`
	Year  int64 `json:"year"`
}

// Valid reports whether the date exists in the calendar (no 30 February).
func (d ProfileDate) Valid() bool {
	if d.Month < 1 || d.Month > 12 || d.Day < 1 || d.Day > 31 || d.Year < 1 || d.Year > 9999 {
		return false
	}
	t := d.Time()
	return int64(t.Day()) == d.Day && int64(t.Month()) == d.Month && int64(t.Year()) == d.Year
}

// Time is the start of the date in UTC.
func (d ProfileDate) Time() time.Time {
	return time.Date(int(d.Year), time.Month(d.Month), int(d.Day), 0, 0, 0, 0, time.UTC)
}

// After reports whether the date lies after the UTC calendar day of t.
func (d ProfileDate) After(t time.Time) bool {
	y, m, day := t.UTC().Date()
	return d.Time().After(time.Date(y, m, day, 0, 0, 0, 0, time.UTC))
}

// PostalAddress is a merchant's or an identity's postal address: the same fields as a customer's
// Address (the merchant's checks, merchant_checks.go, are its own).
type PostalAddress = Address

// MaskedBankAccount is the settlement bank account as stored in the profile and shown: the account
// number only as its last four characters.
type MaskedBankAccount struct {
	Name                   string `json:"name"`
	BankCode               string `json:"bankCode"`
	AccountType            string `json:"accountType"`
	Last4                  string `json:"last4"`
	AttemptValidationCheck *bool  `json:"attemptValidationCheck"`
}

// AssociatedIdentity is a person or business associated with the merchant, without its tax ID.
type AssociatedIdentity struct {
	IdentityRoles                []string       `json:"identityRoles"`
	RelationType                 *string        `json:"relationType"`
	FirstName                    *string        `json:"firstName"`
	LastName                     *string        `json:"lastName"`
	Title                        *string        `json:"title"`
	Email                        *string        `json:"email"`
	Phone                        *string        `json:"phone"`
	TaxIDProvided                bool           `json:"taxIdProvided"`
	PrincipalPercentageOwnership *float64       `json:"principalPercentageOwnership"`
	DateOfBirth                  *ProfileDate   `json:"dateOfBirth"`
	PersonalAddress              *PostalAddress `json:"personalAddress"`
}

// IsControlPerson reports whether the identity can stand as the control person at onboarding.
func (i AssociatedIdentity) IsControlPerson() bool {
	return OneOf("control_person", i.IdentityRoles) || OneOf("principal", i.IdentityRoles)
}

// CardVolumeDistribution splits card volume across channels, in percent.
type CardVolumeDistribution struct {
	CardPresentPercentage             *float64 `json:"cardPresentPercentage"`
	EcommercePercentage               *float64 `json:"ecommercePercentage"`
	MailOrderTelephoneOrderPercentage *float64 `json:"mailOrderTelephoneOrderPercentage"`
}

// VolumeDistributionByBusinessType splits volume across business types, in percent.
type VolumeDistributionByBusinessType struct {
	BusinessToConsumerVolumePercentage *float64 `json:"businessToConsumerVolumePercentage"`
	ConsumerToConsumerVolumePercentage *float64 `json:"consumerToConsumerVolumePercentage"`
	OtherVolumePercentage              *float64 `json:"otherVolumePercentage"`
}

// Underwriting is what the merchant declares about its business.
type Underwriting struct {
	AnnualAchVolume                  *int64                            `json:"annualAchVolume"`
	AverageAchTransferAmount         *int64                            `json:"averageAchTransferAmount"`
	AverageCardTransferAmount        *int64                            `json:"averageCardTransferAmount"`
	BusinessDescription              *string                           `json:"businessDescription"`
	CreditCheckAllowed               *bool                             `json:"creditCheckAllowed"`
	CreditCheckIPAddress             *string                           `json:"creditCheckIpAddress"`
	CreditCheckTimestamp             *time.Time                        `json:"creditCheckTimestamp"`
	CreditCheckUserAgent             *string                           `json:"creditCheckUserAgent"`
	RefundPolicy                     *string                           `json:"refundPolicy"`
	CardVolumeDistribution           *CardVolumeDistribution           `json:"cardVolumeDistribution"`
	VolumeDistributionByBusinessType *VolumeDistributionByBusinessType `json:"volumeDistributionByBusinessType"`
}

// MerchantProfile is the onboarding record of a merchant account as stored
// (merchant_accounts.profile) and shown. It holds no secret: the bank account number is masked and
// tax IDs are only flagged as provided (they live sealed in MerchantSecrets).
type MerchantProfile struct {
	DoingBusinessAs                  *string              `json:"doingBusinessAs"`
	BusinessPhone                    *string              `json:"businessPhone"`
	Phone                            *string              `json:"phone"`
	Email                            *string              `json:"email"`
	SupportEmail                     *string              `json:"supportEmail"` // where documents tell customers to write
	FirstName                        *string              `json:"firstName"`
	LastName                         *string              `json:"lastName"`
	MCC                              *string              `json:"mcc"`
	URL                              *string              `json:"url"`
	BusinessTaxIDProvided            bool                 `json:"businessTaxIdProvided"`
	TaxIDProvided                    bool                 `json:"taxIdProvided"`
	MaxTransactionAmount             *int64               `json:"maxTransactionAmount"`
	AchMaxTransactionAmount          *int64               `json:"achMaxTransactionAmount"`
	AnnualCardVolume                 *int64               `json:"annualCardVolume"`
	PrincipalPercentageOwnership     *float64             `json:"principalPercentageOwnership"`
	HasAcceptedCreditCardsPreviously *bool                `json:"hasAcceptedCreditCardsPreviously"`
	DateOfBirth                      *ProfileDate         `json:"dateOfBirth"`
	IncorporationDate                *ProfileDate         `json:"incorporationDate"`
	BusinessAddress                  *PostalAddress       `json:"businessAddress"`
	PersonalAddress                  *PostalAddress       `json:"personalAddress"`
	SettlementBankAccount            *MaskedBankAccount   `json:"settlementBankAccount"`
	AssociatedIdentities             []AssociatedIdentity `json:"associatedIdentities"`
	Underwriting                     *Underwriting        `json:"underwriting"`
	Metadata                         map[string]string    `json:"metadata"`
}

// MerchantSecrets are the parts of the record that are kept but never shown or logged: the full
// settlement account number and the tax IDs. Package app seals them before they are stored.
type MerchantSecrets struct {
	BankAccountNumber string   `json:"bankAccountNumber,omitempty"`
	BusinessTaxID     string   `json:"businessTaxId,omitempty"`
	TaxID             string   `json:"taxId,omitempty"`
	IdentityTaxIDs    []string `json:"identityTaxIds,omitempty"` // by index of AssociatedIdentities
}

// String keeps secrets out of formatted output (%v, %s, log lines).
func (MerchantSecrets) String() string { return "[redacted merchant secrets]" }

// GoString keeps secrets out of %#v.
func (MerchantSecrets) GoString() string { return "remit.MerchantSecrets{[redacted]}" }

// MerchantAccountInput is a create request after decoding: the profile as it will be stored (its
// masked and derived parts are filled by the engine) and the secrets beside it.
type MerchantAccountInput struct {
	Environment               string
	ExternalMerchantRef       *string
	DisplayName               string
	LegalEntityType           string
	Country                   string
	MerchantMode              string
	DefaultCurrency           string
	TenantID                  *string
	PlatformMerchantAccountID *string
	ProcessorAccountID        *string // processorAccountId: a Stripe connected account (acct_...)
	Profile                   MerchantProfile
	BankAccountNumber         *string   // settlementBankAccount.accountNumber
	BusinessTaxID             *string   // businessTaxId
	TaxID                     *string   // taxId
	IdentityTaxIDs            []*string // associatedIdentities[i].taxId
}

// OnboardingSubmission is a submit request after decoding, with what the edge observed of the
// request (client address and User-Agent) for the agreement defaults.
type OnboardingSubmission struct {
	Environment     *string
	SubmittedByType *string
	IPAddress       *string
	UserAgent       *string
	ClientIP        string
	ClientUserAgent string
}

// CheckOnboardingSubmission records the problems of a submission's own fields: an environment
// other than the request's, an unknown submittedByType, an IP address that is not one. What the
// account's record still lacks (its state and requirements) is the engine's part.
func CheckOnboardingSubmission(in OnboardingSubmission, env Environment, p *Problems) {
	if in.Environment != nil && *in.Environment != string(env) {
		p.Body("environment", "environment_mismatch", fmt.Sprintf("environment must equal the environment query parameter (%s) or be omitted.", env))
	}
	if in.SubmittedByType != nil && !OneOf(*in.SubmittedByType, SubmittedByTypes) {
		p.Body("submittedByType", "invalid_enum", "submittedByType must be one of merchant, operator, system.")
	}
	if in.IPAddress != nil && *in.IPAddress != "" {
		IPAddressProblem(p, "merchantAgreementIpAddress", *in.IPAddress)
	}
}

// IPAddressProblem records a value that is not an IPv4 or IPv6 address.
func IPAddressProblem(p *Problems, field, v string) {
	if _, err := netip.ParseAddr(v); err != nil {
		p.Body(field, "invalid_ip_address", field+" must be an IPv4 or IPv6 address.")
	}
}

// Onboarding is the underwriting record of a merchant account (merchant_accounts.onboarding).
type Onboarding struct {
	SubmittedAt     *time.Time `json:"submittedAt"`
	SubmittedByType *string    `json:"submittedByType"`
	DecidedAt       *time.Time `json:"decidedAt"`
	Agreement       *Agreement `json:"agreement"`
}

// Agreement is the acceptance of the merchant agreement, captured at submission.
type Agreement struct {
	IPAddress  string    `json:"ipAddress"`
	UserAgent  string    `json:"userAgent"`
	AcceptedAt time.Time `json:"acceptedAt"`
}

// OnboardingObject is the onboarding record as shown.
type OnboardingObject struct {
	Status MerchantStatus `json:"status"`
	Onboarding
}

// MerchantAccountObject is the merchant account as the API shows it: every stored field except the
// secrets.
type MerchantAccountObject struct {
	Object                    string           `json:"object"`
	MerchantAccountID         string           `json:"merchantAccountId"`
	OrganizationID            string           `json:"organizationId"`
	Environment               Environment      `json:"environment"`
	Status                    MerchantStatus   `json:"status"`
	ExternalMerchantRef       string           `json:"externalMerchantRef"`
	DisplayName               string           `json:"displayName"`
	LegalEntityType           string           `json:"legalEntityType"`
	Country                   string           `json:"country"`
	MerchantMode              string           `json:"merchantMode"`
	DefaultCurrency           string           `json:"defaultCurrency"`
	PlatformEnabled           bool             `json:"platformEnabled"`
	PlatformMerchantAccountID *string          `json:"platformMerchantAccountId"`
	ProcessorAccountID        *string          `json:"processorAccountId"`
	ClaimURL                  *string          `json:"claimUrl"`
	ClaimExpiresAt            *time.Time       `json:"claimExpiresAt"`
	ClaimedAt                 *time.Time       `json:"claimedAt"`
	Onboarding                OnboardingObject `json:"onboarding"`
	SubmittedAt               *time.Time       `json:"submittedAt"`
	DecidedAt                 *time.Time       `json:"decidedAt"`
	MerchantProfile
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// NewMerchantAccountObject renders a stored merchant account. Accounts without a profile (those
// made by bootstrap) render with every optional field null.
func NewMerchantAccountObject(m MerchantAccount) (MerchantAccountObject, error) {
	var p MerchantProfile
	if len(m.Profile) > 0 {
		if err := json.Unmarshal(m.Profile, &p); err != nil {
			return MerchantAccountObject{}, err
		}
	}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	if p.AssociatedIdentities == nil {
		p.AssociatedIdentities = []AssociatedIdentity{}
	}
	for i := range p.AssociatedIdentities {
		if p.AssociatedIdentities[i].IdentityRoles == nil {
			p.AssociatedIdentities[i].IdentityRoles = []string{}
		}
	}
	o := MerchantAccountObject{
		Object: "merchant_account", MerchantAccountID: m.ID, OrganizationID: m.OrganizationID, Environment: m.Environment,
		Status: m.Status, ExternalMerchantRef: m.ExternalRef, DisplayName: m.DisplayName, LegalEntityType: m.LegalEntityType,
		Country: m.Country, MerchantMode: m.MerchantMode, DefaultCurrency: m.DefaultCurrency, PlatformEnabled: m.PlatformEnabled,
		ClaimExpiresAt: m.ClaimExpiresAt, ClaimedAt: m.ClaimedAt,
		Onboarding:  OnboardingObject{Status: m.Status, Onboarding: m.Onboarding},
		SubmittedAt: m.Onboarding.SubmittedAt, DecidedAt: m.Onboarding.DecidedAt,
		MerchantProfile: p, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
	if m.PlatformMerchantAccountID != "" {
		id := m.PlatformMerchantAccountID
		o.PlatformMerchantAccountID = &id
	}
	if m.ProcessorAccountID != "" {
		id := m.ProcessorAccountID
		o.ProcessorAccountID = &id
	}
	return o, nil
}

// PayoutBankAccount is the masked bank account of a payout profile.
type PayoutBankAccount struct {
	Name        string `json:"name"`
	BankCode    string `json:"bankCode"`
	AccountType string `json:"accountType"`
	Last4       string `json:"last4"`
}

// PayoutProfile says how and when a merchant account is paid out.
type PayoutProfile struct {
	Object            string             `json:"object"`
	MerchantAccountID string             `json:"merchantAccountId"`
	Environment       Environment        `json:"environment"`
	Status            MerchantStatus     `json:"status"`
	PayoutsEnabled    bool               `json:"payoutsEnabled"`
	Schedule          string             `json:"schedule"`
	DelayDays         int64              `json:"delayDays"`
	Currency          string             `json:"currency"`
	BankAccount       *PayoutBankAccount `json:"bankAccount"`
	CreatedAt         time.Time          `json:"createdAt"`
}

// NewPayoutProfile renders the payout profile of a stored merchant account.
func NewPayoutProfile(m MerchantAccount) (PayoutProfile, error) {
	o, err := NewMerchantAccountObject(m)
	if err != nil {
		return PayoutProfile{}, err
	}
	pp := PayoutProfile{
		Object: "payout_profile", MerchantAccountID: m.ID, Environment: m.Environment, Status: m.Status,
		PayoutsEnabled: m.Status == MerchantApproved, Schedule: PayoutSchedule, DelayDays: PayoutDelayDays,
		Currency: m.DefaultCurrency, CreatedAt: m.CreatedAt,
	}
	if b := o.SettlementBankAccount; b != nil {
		pp.BankAccount = &PayoutBankAccount{Name: b.Name, BankCode: b.BankCode, AccountType: b.AccountType, Last4: b.Last4}
	}
	return pp, nil
}

// OrganizationClaim is the answer to a claim: the organization handed over, its merchant account and
// a new API key, shown once.
type OrganizationClaim struct {
	Object            string      `json:"object"`
	OrganizationID    string      `json:"organizationId"`
	MerchantAccountID string      `json:"merchantAccountId"`
	Environment       Environment `json:"environment"`
	APIKey            string      `json:"apiKey"`
	ClaimedAt         time.Time   `json:"claimedAt"`
	CreatedAt         time.Time   `json:"createdAt"`
}
