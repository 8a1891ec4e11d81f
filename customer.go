package remit

import (
	"fmt"
	"strings"
	"time"
)

// Address is a postal address (customers' address, billing accounts' taxAddress). Country is ISO
// 3166-1 alpha-2; country and region drive tax.
type Address struct {
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2"`
	City       string  `json:"city"`
	Region     *string `json:"region"`
	PostalCode string  `json:"postalCode"`
	Country    string  `json:"country"`
}

// AddressProblems records the problems of an address the contract's shape cannot catch.
func AddressProblems(p *Problems, field string, a *Address) {
	if a != nil {
		CountryProblem(p, field+".country", a.Country)
	}
}

// Customer is a merchant account's customer.
type Customer struct {
	Object            string            `json:"object"` // "customer"
	CustomerID        string            `json:"customerId"`
	ExternalID        *string           `json:"externalId"`
	Name              string            `json:"name"`
	Email             *string           `json:"email"`
	Address           *Address          `json:"address"`
	TaxExempt         bool              `json:"taxExempt"`
	PreferredLocale   string            `json:"preferredLocale"` // one of Locales; e-mails, PDFs and hosted pages use it
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// Locales are the languages Remit writes to customers in (a customer's preferredLocale), each with
// a message catalog in package locale. DefaultLocale is a customer's when it names none.
var Locales = []string{"en", "fr", "de", "es"}

// DefaultLocale is the language of a customer without a preferredLocale.
const DefaultLocale = "en"

// EmailProblem records a problem with an email address that is not a plain addr-spec
// (name@domain.tld, ValidEmail).
func EmailProblem(p *Problems, field, email string) {
	if !ValidEmail(email) {
		p.Body(field, "invalid_format", fmt.Sprintf("%s must be an email address such as billing@example.com.", field))
	}
}

// Collection methods of a billing account.
const (
	ChargeAutomatically = "charge_automatically"
	SendInvoice         = "send_invoice"
)

// BillingAccount is a customer's billing in one currency.
type BillingAccount struct {
	Object               string                `json:"object"` // "billing_account"
	BillingAccountID     string                `json:"billingAccountId"`
	CustomerID           string                `json:"customerId"`
	Currency             string                `json:"currency"`
	CollectionMethod     string                `json:"collectionMethod"`
	TaxAddress           *Address              `json:"taxAddress"`
	DefaultPaymentMethod *PaymentMethodSummary `json:"defaultPaymentMethod"`
	Dunning              *Dunning              `json:"dunning"` // null: the deployment's REMIT_DUNNING_SCHEDULE
	Metadata             map[string]string     `json:"metadata"`
	Environment          Environment           `json:"environment"`
	MerchantAccountID    string                `json:"merchantAccountId"`
	CreatedAt            time.Time             `json:"createdAt"`
}

// PaymentMethodSummary is a masked payment method as other resources show it.
type PaymentMethodSummary struct {
	PaymentMethodID string `json:"paymentMethodId"`
	Brand           string `json:"brand"`
	Last4           string `json:"last4"`
}

// PaymentMethod is a card attached to a customer (and to one of its billing accounts). No raw card
// number is ever accepted or stored. Token is what the processor charges: in the sandbox the test
// token the method was made from (the sandbox processor reads it to decide a charge's outcome:
// pm_card_chargeDeclined declines, pm_card_insufficientFunds declines for insufficient funds, ...);
// in production the processor's own method (Stripe's pm_…), saved through a hosted setup session,
// with ProcessorCustomer the processor's customer it belongs to.
type PaymentMethod struct {
	Object            string      `json:"object"` // "payment_method"
	PaymentMethodID   string      `json:"paymentMethodId"`
	CustomerID        string      `json:"customerId"`
	BillingAccountID  *string     `json:"billingAccountId"`
	Type              string      `json:"type"` // "card"
	Brand             string      `json:"brand"`
	Last4             string      `json:"last4"`
	Token             string      `json:"-"`
	ProcessorCustomer string      `json:"-"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`

	// Status is attached until the method is detached (DetachedAt, merchant clock).
	Status     PaymentMethodStatus `json:"status"`
	DetachedAt *time.Time          `json:"detachedAt"`
}

// PaymentMethodStatus is a payment method's state: attached to its customer, or detached (never
// charged again, never made a default; PaymentMethodStates).
type PaymentMethodStatus string

// Payment method states.
const (
	PaymentMethodAttached PaymentMethodStatus = "attached"
	PaymentMethodDetached PaymentMethodStatus = "detached"
)

// DefaultUse is a billing account whose default payment method is the one to detach, with the IDs
// of its open invoices that still ask for money (the ones the default would collect).
type DefaultUse struct {
	BillingAccount BillingAccount
	OpenInvoiceIDs []string
}

// CheckDetach decides whether a payment method may be detached: it must be attached (409 with
// details.currentState detached), and it must not be the default of a charge_automatically
// billing account that has open invoices left to pay: detaching it would leave them with nothing
// to collect them (409 default_payment_method_in_use, naming the billing accounts and invoices;
// save another method as the default, or settle the invoices, first). An uncollectible invoice
// does not count: dunning gave up collecting it, and paying it later asks for a method anyway.
// Detaching the default of any other billing account clears that default.
func CheckDetach(pm PaymentMethod, uses []DefaultUse) error {
	if err := PaymentMethodStates.Check(pm.PaymentMethodID, pm.Status, ActionDetach); err != nil {
		return err
	}
	accounts, invoices := []string{}, []string{}
	for _, u := range uses {
		if u.BillingAccount.CollectionMethod != ChargeAutomatically || len(u.OpenInvoiceIDs) == 0 {
			continue
		}
		accounts = append(accounts, u.BillingAccount.BillingAccountID)
		invoices = append(invoices, u.OpenInvoiceIDs...)
	}
	if len(accounts) == 0 {
		return nil
	}
	named := quoted(invoices[:min(len(invoices), detachNamedInvoices)])
	if len(invoices) > detachNamedInvoices {
		named = append(named, fmt.Sprintf("and %d more", len(invoices)-detachNamedInvoices))
	}
	which := "billing account %s, which charges automatically and has"
	if len(accounts) > 1 {
		which = "billing accounts %s, which charge automatically and have"
	}
	return Errorf(EConflict, "The payment method '%s' is the default of "+which+" %d open invoice(s) to collect (%s). Make another payment method the default, or settle the invoices, before detaching it.",
		pm.PaymentMethodID, strings.Join(quoted(accounts), ", "), len(invoices), strings.Join(named, ", ")).
		With("reason", "default_payment_method_in_use").With("billingAccountIds", accounts).
		With("invoiceIds", invoices[:min(len(invoices), detachListedInvoices)]).With("openInvoices", len(invoices))
}

// How many of the stranded invoices a detach refusal names in its message and lists in
// details.invoiceIds (details.openInvoices counts them all).
const (
	detachNamedInvoices  = 5
	detachListedInvoices = 100
)

func quoted(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "'" + id + "'"
	}
	return out
}

// Summary is the masked form of the method.
func (m PaymentMethod) Summary() *PaymentMethodSummary {
	return &PaymentMethodSummary{PaymentMethodID: m.PaymentMethodID, Brand: m.Brand, Last4: m.Last4}
}

// TestCard is a sandbox test payment method token and the card it stands for.
type TestCard struct {
	Token   string
	Brand   string
	Last4   string
	Outcome string // what a charge to it does, for the sandbox setup page
}

// TestCards are the sandbox test tokens a setup session accepts, in documentation order.
var TestCards = []TestCard{
	{"pm_card_visa", "visa", "4242", "charges succeed"},
	{"pm_card_mastercard", "mastercard", "4444", "charges succeed"},
	{"pm_card_chargeDeclined", "visa", "0002", "charges are declined (card_declined)"},
	{"pm_card_insufficientFunds", "visa", "9995", "charges are declined (insufficient_funds)"},
	{"pm_card_expired", "visa", "0069", "charges fail (expired_card)"},
	{"pm_card_threeDSecureRequired", "visa", "3184", "charges need 3-D Secure authentication"},
}

// LookupTestCard returns the test card of token.
func LookupTestCard(token string) (TestCard, bool) {
	for _, c := range TestCards {
		if c.Token == token {
			return c, true
		}
	}
	return TestCard{}, false
}

// SessionStatus is a payment-method setup session's state.
type SessionStatus string

// Setup session states. "expired" is not stored: an open session is expired once the merchant
// clock reaches its expiresAt.
const (
	SessionOpen      SessionStatus = "open"
	SessionCompleted SessionStatus = "completed"
	SessionExpired   SessionStatus = "expired"
)

// SetupSession is a hosted payment-method setup session (pmss_). Token is set only in the answer
// that created it: the store keeps the token's hash, never the token.
type SetupSession struct {
	Object            string                `json:"object"` // "payment_method_setup_session"
	SessionID         string                `json:"sessionId"`
	CustomerID        string                `json:"customerId"`
	BillingAccountID  *string               `json:"billingAccountId"`
	MethodType        string                `json:"methodType"`
	SetAsDefault      bool                  `json:"setAsDefault"`
	URL               string                `json:"url,omitempty"`
	Token             string                `json:"token,omitempty"`
	ExpiresAt         time.Time             `json:"expiresAt"`
	Status            SessionStatus         `json:"status"`
	PaymentMethodID   *string               `json:"paymentMethodId"`
	PaymentMethod     *PaymentMethodSummary `json:"paymentMethod"`
	CompletedAt       *time.Time            `json:"completedAt"`
	Environment       Environment           `json:"environment"`
	MerchantAccountID string                `json:"merchantAccountId"`
	CreatedAt         time.Time             `json:"createdAt"`
	Processor         ProcessorSetup        `json:"-"` // production: the setup started at the processor
}

// ProcessorSetup is the setup a production setup session started at the processor (a Stripe
// SetupIntent) when its hosted page was first opened. The client secret, which lets a browser
// confirm the setup, is sealed at rest.
type ProcessorSetup struct {
	Reference          string // seti_…; empty until the page is first opened
	SealedClientSecret string
	Customer           string // the processor's customer the setup saves the method for
}

// StatusAt is the session's status at the merchant time now.
func (s SetupSession) StatusAt(now time.Time) SessionStatus {
	if s.Status == SessionOpen && !now.Before(s.ExpiresAt) {
		return SessionExpired
	}
	return s.Status
}

// Hosted token kinds: what a customer-portal token may act on.
const (
	HostedSetupSession = "setup_session"
	HostedInvoice      = "invoice"
	HostedPayment      = "payment" // a requires_action payment the customer authenticates
)

// HostedToken is a stored hosted token (its hash only): the credential of the customer-portal
// routes, scoped to one resource of one merchant account.
type HostedToken struct {
	TokenHash         string
	Kind              string // HostedSetupSession, HostedInvoice or HostedPayment
	ResourceID        string
	MerchantAccountID string
	ExpiresAt         time.Time
	CreatedAt         time.Time
}

// Authorize checks that the token was issued for the resource a request acts on: the kind and the
// ID of the one resource it was issued for.
//
// Errors: forbidden (a token of another resource).
func (t HostedToken) Authorize(kind, resourceID string) error {
	if t.Kind != kind || t.ResourceID != resourceID {
		return Errorf(EForbidden, "This token was issued for another resource; use the token of this %s's hosted URL.", strings.ReplaceAll(kind, "_", " "))
	}
	return nil
}

// CheckCustomer records every problem of a customer about to be created (an e-mail address, the
// address, the metadata rule); an empty e-mail is no e-mail.
func CheckCustomer(c *Customer, p *Problems) {
	if c.Email != nil && *c.Email == "" {
		c.Email = nil
	}
	if c.Email != nil {
		EmailProblem(p, "email", *c.Email)
	}
	AddressProblems(p, "address", c.Address)
	MetadataProblems(p, "metadata", c.Metadata)
	if c.PreferredLocale == "" {
		c.PreferredLocale = DefaultLocale
	} else {
		LocaleProblem(p, "preferredLocale", c.PreferredLocale)
	}
}

// CheckBillingAccount records every problem of a billing account about to be created (a
// supported currency, the tax address, the metadata rule) and fills its default collection
// method, charge_automatically.
func CheckBillingAccount(b *BillingAccount, p *Problems) {
	CurrencyProblem(p, InBody, "currency", b.Currency)
	if b.Dunning != nil {
		CheckDunning(*b.Dunning, "dunning", p)
		if b.Dunning.FinalAction == "" {
			b.Dunning.FinalAction = FinalMarkUncollectible
		}
	}
	AddressProblems(p, "taxAddress", b.TaxAddress)
	MetadataProblems(p, "metadata", b.Metadata)
	if b.CollectionMethod == "" {
		b.CollectionMethod = ChargeAutomatically
	}
}
