package remit

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Each resource's update rule (patch.go; docs/api-conventions.md "Updates"): its updatable fields
// with their own checks. null is taken where the resource's field is nullable (it clears it);
// every other field of the resource is immutable. What needs stored rows (a payment method of
// the customer, an endpoint host's addresses, a line's price) is checked by the engine after the
// rule.

// CustomerPatch updates a customer: name, email, address, taxExempt, preferredLocale, externalId,
// metadata. Draft invoices take a new address (their tax place) at their next refresh or at
// finalization; finalized documents keep the parties they were issued to.
var CustomerPatch = NewPatchRule("customer", Customer{},
	Field("name", false, func(c *Customer) *string { return &c.Name }, nil),
	Field("email", true, func(c *Customer) **string { return &c.Email }, func(c *Customer, p *Problems) {
		if c.Email != nil && *c.Email == "" {
			c.Email = nil // an empty e-mail is no e-mail, as at creation
		}
		if c.Email != nil {
			EmailProblem(p, "email", *c.Email)
		}
	}),
	Field("address", true, func(c *Customer) **Address { return &c.Address }, func(c *Customer, p *Problems) {
		AddressProblems(p, "address", c.Address)
	}),
	Field("taxExempt", false, func(c *Customer) *bool { return &c.TaxExempt }, nil),
	Field("preferredLocale", false, func(c *Customer) *string { return &c.PreferredLocale }, func(c *Customer, p *Problems) {
		LocaleProblem(p, "preferredLocale", c.PreferredLocale)
	}),
	Field("externalId", true, func(c *Customer) **string { return &c.ExternalID }, nil),
	MetadataField(func(c *Customer) *map[string]string { return &c.Metadata }),
)

// BillingAccountPatch updates a billing account: collectionMethod, defaultPaymentMethodId (a
// payment method of the account's customer, checked by the engine; null: none), dunning (null:
// the deployment's schedule), metadata. A new collection method applies to invoices created
// afterwards.
var BillingAccountPatch = NewPatchRule("billing account", BillingAccount{},
	Field("collectionMethod", false, func(b *BillingAccount) *string { return &b.CollectionMethod }, nil),
	defaultPaymentMethodField(),
	Field("dunning", true, func(b *BillingAccount) **Dunning { return &b.Dunning }, func(b *BillingAccount, p *Problems) {
		if b.Dunning != nil {
			CheckDunning(*b.Dunning, "dunning", p)
			if b.Dunning.FinalAction == "" {
				b.Dunning.FinalAction = FinalMarkUncollectible
			}
		}
	}),
	MetadataField(func(b *BillingAccount) *map[string]string { return &b.Metadata }),
)

// defaultPaymentMethodField is the member defaultPaymentMethodId, which changes the field
// defaultPaymentMethod: the method it names (its brand and last4 filled by the engine), or none.
func defaultPaymentMethodField() PatchField[BillingAccount] {
	f := Field("defaultPaymentMethodId", true, func(b *BillingAccount) **string { return new(*string) }, nil)
	f.Attribute = "defaultPaymentMethod"
	f.get = func(b *BillingAccount) any { return b.DefaultPaymentMethod }
	f.set = func(b *BillingAccount, raw json.RawMessage, p *Problems) {
		var id *string
		if err := json.Unmarshal(raw, &id); err != nil {
			p.Body("defaultPaymentMethodId", "invalid_type", "defaultPaymentMethodId must be a payment method ID (pm_...) or null.")
			return
		}
		b.DefaultPaymentMethod = nil
		if id != nil {
			b.DefaultPaymentMethod = &PaymentMethodSummary{PaymentMethodID: *id}
		}
	}
	return f
}

// PricePatch updates a price: active (false archives it: no new quote, invoice or subscription
// item may name it, while what already bills it keeps billing it), nickname, metadata. What it
// bills (amounts, currency, type, interval, tiers, meter) never changes: create a new price.
var PricePatch = NewPatchRule("price", Price{},
	Field("active", false, func(pr *Price) *bool { return &pr.Active }, nil),
	Field("nickname", true, func(pr *Price) **string { return &pr.Nickname }, nil),
	MetadataField(func(pr *Price) *map[string]string { return &pr.Metadata }),
)

// CouponPatch updates a coupon: active (false archives it: no new quote or invoice may list it)
// and metadata. Its discount never changes: create a new coupon.
var CouponPatch = NewPatchRule("coupon", Coupon{},
	Field("active", false, func(c *Coupon) *bool { return &c.Active }, nil),
	MetadataField(func(c *Coupon) *map[string]string { return &c.Metadata }),
)

// WebhookEndpointPatch updates a webhook endpoint: url (the create's URL rule; where it may point
// is checked by the engine, after the host was looked up before the transaction), enabledEvents,
// description, metadata. The endpoint's Environment must be set: the URL rule depends on it.
var WebhookEndpointPatch = NewPatchRule("webhook endpoint", WebhookEndpoint{},
	Field("url", false, func(e *WebhookEndpoint) *string { return &e.URL }, func(e *WebhookEndpoint, p *Problems) {
		if u, ok := EndpointURL(e.URL, e.Environment, p); ok {
			e.URL = u.String()
		}
	}),
	Field("enabledEvents", false, func(e *WebhookEndpoint) *[]string { return &e.EnabledEvents }, func(e *WebhookEndpoint, p *Problems) {
		e.EnabledEvents = EnabledEventTypes(e.EnabledEvents, p)
	}),
	Field("description", true, func(e *WebhookEndpoint) **string { return &e.Description }, nil),
	MetadataField(func(e *WebhookEndpoint) *map[string]string { return &e.Metadata }),
)

// MerchantAccountPatch updates a merchant account: displayName, supportEmail (the address
// documents give customers to write to), metadata. The underwriting record changes through
// onboarding, not here.
var MerchantAccountPatch = NewPatchRule("merchant account", MerchantAccountObject{},
	Field("displayName", false, func(m *MerchantAccountObject) *string { return &m.DisplayName }, nil),
	Field("supportEmail", true, func(m *MerchantAccountObject) **string { return &m.SupportEmail }, func(m *MerchantAccountObject, p *Problems) {
		if m.SupportEmail != nil {
			EmailProblem(p, "supportEmail", *m.SupportEmail)
		}
	}),
	MetadataField(func(m *MerchantAccountObject) *map[string]string { return &m.Metadata }),
)

// ActionUpdate is changing a document's terms and lines by a patch: drafts only (InvoiceStates).
const ActionUpdate = "updated"

// InvoiceEdit is an invoice under a patch: the invoice, and the lines the patch gives it (nil
// when it keeps its own), which the engine prices into the invoice's Lines (PlanInvoiceLines).
type InvoiceEdit struct {
	Invoice
	NewLines []InvoiceLineInput
}

// InvoicePatch updates an invoice: while it is a draft, lines (the whole list, priced again),
// daysUntilDue and memo; in every state, metadata. Anything else after finalization is 409 with
// details.currentState: a finalized invoice is corrected with a credit note.
var InvoicePatch = func() PatchRule[InvoiceEdit] {
	r := NewPatchRule("invoice", Invoice{},
		invoiceLinesField(),
		Field("daysUntilDue", true, func(e *InvoiceEdit) **int64 { return &e.DaysUntilDue }, nil),
		Field("memo", true, func(e *InvoiceEdit) **string { return &e.Memo }, nil),
		MetadataField(func(e *InvoiceEdit) *map[string]string { return &e.Metadata }),
	)
	for i := range r.Fields {
		if r.Fields[i].Name != "metadata" {
			r.Fields[i].Action = ActionUpdate
		}
	}
	r.Allows = func(e *InvoiceEdit, action string) error { return InvoiceStates.Check(e.InvoiceID, e.Status, action) }
	return r
}()

// invoiceLinesField is the member lines: the lines as a create request gives them, replacing the
// invoice's own (previousAttributes: the lines as they were).
func invoiceLinesField() PatchField[InvoiceEdit] {
	return PatchField[InvoiceEdit]{
		Name: "lines", Action: ActionUpdate,
		get: func(e *InvoiceEdit) any { return e.Lines },
		set: func(e *InvoiceEdit, raw json.RawMessage, p *Problems) {
			var lines []struct {
				PriceID     string  `json:"priceId"`
				Quantity    *int64  `json:"quantity"`
				UnitAmount  *int64  `json:"unitAmount"`
				Description *string `json:"description"`
			}
			if err := json.Unmarshal(raw, &lines); err != nil {
				p.Body("lines", "invalid_type", "lines must be a list of lines such as [{\"priceId\": \"price_basic\", \"quantity\": 1}].")
				return
			}
			e.NewLines = make([]InvoiceLineInput, len(lines))
			for i, l := range lines {
				e.NewLines[i] = InvoiceLineInput{PriceID: l.PriceID, Quantity: l.Quantity, UnitAmount: l.UnitAmount, Description: l.Description}
			}
		},
		check: func(e *InvoiceEdit, p *Problems) {
			if len(e.NewLines) == 0 {
				p.Body("lines", "required", "An invoice needs at least one line.")
			}
		},
	}
}

// PatchRules are the update rules by the name the contract's patch schemas give them
// (x-remit-patch), for the edge to word a field that cannot change (immutable_field) as the rule
// does, and for the test that holds the contract's patch schemas to the rules.
var PatchRules = map[string]interface {
	ImmutableProblem(field string) (FieldError, bool)
	IsImmutable(field string) bool
	Updatable() []string
	Clearable() []string
}{
	"customer": CustomerPatch, "billing_account": BillingAccountPatch, "price": PricePatch, "coupon": CouponPatch,
	"product":          ProductPatch,
	"webhook_endpoint": WebhookEndpointPatch, "merchant_account": MerchantAccountPatch, "invoice": InvoicePatch,
}

// LocaleProblem records a preferredLocale that is not one of Locales.
func LocaleProblem(p *Problems, field, l string) {
	if !slices.Contains(Locales, l) {
		p.Body(field, "invalid_value", fmt.Sprintf("%s must be one of en, fr, de, es.", field))
	}
}

// EnabledEventTypes checks an endpoint's enabledEvents (each "*" or a type of the catalog:
// unknown_event_type at its index) and returns them without repeats, in order.
func EnabledEventTypes(types []string, p *Problems) []string {
	out := []string{}
	for i, t := range types {
		if t != "*" && !KnownEventType(t) {
			EventTypeProblem(p, fmt.Sprintf("enabledEvents[%d]", i), t)
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
