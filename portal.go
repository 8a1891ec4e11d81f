package remit

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// The customer portal (docs/customer-portal.md): sessions the API makes for one customer, and the
// merchant account's configuration of what the portal offers. The rules are here; the pages are
// package portal.

// PortalSessionURLLifetime is how long a portal session's URL can be opened (once).
const PortalSessionURLLifetime = 5 * time.Minute

// PortalIdle is how long a browser's portal session lasts without a request.
const PortalIdle = time.Hour

// Portal flow types: a task the session's URL opens directly.
const (
	FlowPaymentMethodUpdate = "payment_method_update"
	FlowSubscriptionCancel  = "subscription_cancel"
	FlowSubscriptionUpdate  = "subscription_update"
	FlowInvoicePayment      = "invoice_payment"
)

// The portal's cancel modes.
const (
	PortalCancelAtPeriodEnd = "at_period_end"
	PortalCancelImmediately = "immediately"
)

// PortalSession is a customer portal session (POST /v1/customer-portal-sessions).
type PortalSession struct {
	Object            string      `json:"object"` // "customer_portal_session"
	SessionID         string      `json:"sessionId"`
	CustomerID        string      `json:"customerId"`
	URL               string      `json:"url"`
	ReturnURL         *string     `json:"returnUrl"`
	Locale            string      `json:"locale"`
	Flow              *PortalFlow `json:"flow"`
	ExpiresAt         time.Time   `json:"expiresAt"` // the URL's expiry
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
}

// PortalFlow is the one task a session's URL opens.
type PortalFlow struct {
	Type           string  `json:"type"`
	SubscriptionID *string `json:"subscriptionId,omitempty"`
	InvoiceID      *string `json:"invoiceId,omitempty"`
}

// PortalSessionInput is the body of POST /v1/customer-portal-sessions.
type PortalSessionInput struct {
	CustomerID string
	ReturnURL  *string
	Locale     *string
	Flow       *PortalFlow
}

// CheckPortalSession records the problems of a session request's shape: an absolute http(s)
// returnUrl, a portal locale, a flow naming what its type needs.
func CheckPortalSession(in PortalSessionInput, p *Problems) {
	if in.ReturnURL != nil && !webURL(*in.ReturnURL, false) {
		p.Body("returnUrl", "invalid_url", "returnUrl must be an absolute http or https URL.")
	}
	if in.Locale != nil && !slices.Contains(Locales, *in.Locale) {
		p.Body("locale", "invalid_value", "locale is one of en, fr, de, es.")
	}
	if f := in.Flow; f != nil {
		switch f.Type {
		case FlowSubscriptionCancel, FlowSubscriptionUpdate:
			if f.SubscriptionID == nil {
				p.Body("flow.subscriptionId", "required", "A "+f.Type+" flow names its subscriptionId.")
			}
		case FlowInvoicePayment:
			if f.InvoiceID == nil {
				p.Body("flow.invoiceId", "required", "An invoice_payment flow names its invoiceId.")
			}
		}
	}
}

// webURL reports whether s is an absolute http(s) URL (https only when httpsOnly).
func webURL(s string, httpsOnly bool) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || (!httpsOnly && u.Scheme == "http")
}

// PortalConfiguration is what a merchant account's portal offers
// (GET/PUT /v1/customer-portal-configuration).
type PortalConfiguration struct {
	Object              string               `json:"object"` // "customer_portal_configuration"
	InvoiceHistory      bool                 `json:"invoiceHistory"`
	PaymentMethodUpdate bool                 `json:"paymentMethodUpdate"`
	CustomerUpdate      PortalCustomerUpdate `json:"customerUpdate"`
	SubscriptionCancel  PortalCancel         `json:"subscriptionCancel"`
	SubscriptionPause   PortalFeature        `json:"subscriptionPause"`
	SubscriptionUpdate  PortalUpdate         `json:"subscriptionUpdate"`
	Branding            PortalBranding       `json:"branding"`
	Links               PortalLinks          `json:"links"`
	DefaultReturnURL    *string              `json:"defaultReturnUrl"`
	Environment         Environment          `json:"environment"`
	MerchantAccountID   string               `json:"merchantAccountId"`
	UpdatedAt           *time.Time           `json:"updatedAt"` // null while the defaults apply
}

// PortalFeature is a feature that is on or off.
type PortalFeature struct {
	Enabled bool `json:"enabled"`
}

// PortalCustomerUpdate: which billing details the customer may edit.
type PortalCustomerUpdate struct {
	Enabled       bool     `json:"enabled"`
	AllowedFields []string `json:"allowedFields"`
}

// PortalCancel: whether and how the customer may cancel.
type PortalCancel struct {
	Enabled bool   `json:"enabled"`
	Mode    string `json:"mode"` // at_period_end or immediately
	Prorate bool   `json:"prorate"`
}

// PortalUpdate: the prices the customer may switch to, and how the switch is prorated.
type PortalUpdate struct {
	Enabled           bool     `json:"enabled"`
	Prices            []string `json:"prices"`
	ProrationBehavior string   `json:"prorationBehavior"`
}

// PortalBranding: how the portal shows the merchant.
type PortalBranding struct {
	DisplayName  *string `json:"displayName"`
	PrimaryColor *string `json:"primaryColor"` // #rrggbb
	LogoURL      *string `json:"logoUrl"`      // https
}

// PortalLinks: the merchant's terms and privacy policy.
type PortalLinks struct {
	TermsOfServiceURL *string `json:"termsOfServiceUrl"`
	PrivacyPolicyURL  *string `json:"privacyPolicyUrl"`
}

// PortalCustomerFields are the billing details the portal can let a customer edit.
var PortalCustomerFields = []string{"name", "email", "address", "preferredLocale"}

// DefaultPortalConfiguration is the configuration of an account that set none: invoice history,
// payment methods and cancel at period end on, the rest off.
func DefaultPortalConfiguration() PortalConfiguration {
	return PortalConfiguration{Object: "customer_portal_configuration", InvoiceHistory: true, PaymentMethodUpdate: true,
		CustomerUpdate:     PortalCustomerUpdate{AllowedFields: []string{}},
		SubscriptionCancel: PortalCancel{Enabled: true, Mode: PortalCancelAtPeriodEnd, Prorate: true},
		SubscriptionUpdate: PortalUpdate{Prices: []string{}, ProrationBehavior: ProrationCreate}}
}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// CheckPortalConfiguration records every problem of a configuration: the enums, the colour, the
// URLs (the logo https).
func CheckPortalConfiguration(c PortalConfiguration, p *Problems) {
	for i, f := range c.CustomerUpdate.AllowedFields {
		if !slices.Contains(PortalCustomerFields, f) {
			p.Body(fieldAt("customerUpdate.allowedFields", i), "invalid_value", "An allowed field is one of name, email, address, preferredLocale.")
		}
	}
	if c.SubscriptionCancel.Mode != PortalCancelAtPeriodEnd && c.SubscriptionCancel.Mode != PortalCancelImmediately {
		p.Body("subscriptionCancel.mode", "invalid_value", "mode is at_period_end or immediately.")
	}
	if !slices.Contains([]string{ProrationCreate, ProrationAlways, ProrationNone}, c.SubscriptionUpdate.ProrationBehavior) {
		p.Body("subscriptionUpdate.prorationBehavior", "invalid_value", "prorationBehavior is create_prorations, always_invoice or none.")
	}
	if b := c.Branding; b.PrimaryColor != nil && !hexColor.MatchString(*b.PrimaryColor) {
		p.Body("branding.primaryColor", "invalid_value", "primaryColor is a colour written #rrggbb.")
	}
	if b := c.Branding; b.LogoURL != nil && !webURL(*b.LogoURL, true) {
		p.Body("branding.logoUrl", "invalid_url", "logoUrl must be an absolute https URL.")
	}
	for field, u := range map[string]*string{"links.termsOfServiceUrl": c.Links.TermsOfServiceURL, "links.privacyPolicyUrl": c.Links.PrivacyPolicyURL,
		"defaultReturnUrl": c.DefaultReturnURL} {
		if u != nil && !webURL(*u, false) {
			p.Body(field, "invalid_url", field+" must be an absolute http or https URL.")
		}
	}
}

func fieldAt(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// PortalContext is what a portal page acts for: the opened session, its merchant account, its
// customer and the account's configuration.
type PortalContext struct {
	Session  PortalSession
	Merchant MerchantAccount
	Customer Customer
	Config   PortalConfiguration
}

// Portal features a configuration turns on and off.
const (
	PortalFeatureInvoiceHistory = "invoice_history"
	PortalFeaturePaymentMethods = "payment_method_update"
	PortalFeatureCustomerUpdate = "customer_update"
	PortalFeatureCancel         = "subscription_cancel"
	PortalFeaturePause          = "subscription_pause"
	PortalFeatureUpdate         = "subscription_update"
)

// PortalAllows is nil when the configuration turns feature on, else forbidden: the portal hides
// the feature's page and refuses its form.
func PortalAllows(c PortalConfiguration, feature string) error {
	on := map[string]bool{PortalFeatureInvoiceHistory: c.InvoiceHistory, PortalFeaturePaymentMethods: c.PaymentMethodUpdate,
		PortalFeatureCustomerUpdate: c.CustomerUpdate.Enabled, PortalFeatureCancel: c.SubscriptionCancel.Enabled,
		PortalFeaturePause: c.SubscriptionPause.Enabled, PortalFeatureUpdate: c.SubscriptionUpdate.Enabled}[feature]
	if !on {
		return Errorf(EForbidden, "The merchant's portal does not offer this.").With("feature", feature)
	}
	return nil
}

// PortalChangeItems are the items of a subscription switched to priceID in the portal: the new
// price in place of its fixed items, its usage items kept.
func PortalChangeItems(sub Subscription, priceID string) []ChangeItem {
	items := []ChangeItem{{PriceID: priceID}}
	for _, it := range sub.Items {
		if it.PriceType == PriceUsageMetered {
			items = append(items, ChangeItem{PriceID: it.PriceID})
		}
	}
	return items
}
