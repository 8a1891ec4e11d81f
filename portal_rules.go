package remit

import (
	"strings"
)

// Pure rules of the customer portal's pages (docs/customer-portal.md): the billing address a form
// gives, a card's name for people, and the portal path a hosted page may link back to.

// PortalAddressFields are the form fields of the portal's billing address, in the page's order.
var PortalAddressFields = []string{"line1", "line2", "city", "region", "postalCode", "country"}

// portalAddressMax is the longest value of an address field the portal accepts.
const portalAddressMax = 200

// PortalAddress is the address of the portal's form (values by PortalAddressFields name, trimmed):
// nil when every field is empty (no address); else line1, city, postalCode and country are
// required, the country an ISO 3166-1 alpha-2 code (upper-cased), each value at most 200
// characters. Problems are at address.<field>.
func PortalAddress(form map[string]string, p *Problems) *Address {
	v := map[string]string{}
	empty := true
	for _, f := range PortalAddressFields {
		v[f] = strings.TrimSpace(form[f])
		if v[f] != "" {
			empty = false
		}
		if len(v[f]) > portalAddressMax {
			p.Body("address."+f, "too_long", "address."+f+" is at most 200 characters.")
		}
	}
	if empty {
		return nil
	}
	for _, f := range []string{"line1", "city", "postalCode", "country"} {
		if v[f] == "" {
			p.Body("address."+f, "required", "address."+f+" is required in an address.")
		}
	}
	a := &Address{Line1: v["line1"], City: v["city"], PostalCode: v["postalCode"], Country: strings.ToUpper(v["country"])}
	if a.Country != "" {
		CountryProblem(p, "address.country", a.Country)
	}
	if v["line2"] != "" {
		a.Line2 = &[]string{v["line2"]}[0]
	}
	if v["region"] != "" {
		a.Region = &[]string{v["region"]}[0]
	}
	return a
}

// cardBrands are the card brands' names for people, by the brand a payment method records.
var cardBrands = map[string]string{"visa": "Visa", "mastercard": "Mastercard", "amex": "American Express", "discover": "Discover",
	"jcb": "JCB", "diners": "Diners Club", "unionpay": "UnionPay"}

// CardBrandName is a card brand's name for people ("visa": "Visa"); an unknown brand as recorded,
// none "Card".
func CardBrandName(brand string) string {
	if name := cardBrands[strings.ToLower(brand)]; name != "" {
		return name
	}
	if brand == "" {
		return "Card"
	}
	return brand
}

// CardLabel names a card for people: "Visa •••• 4242" (the brand alone without last4).
func CardLabel(brand, last4 string) string {
	if last4 == "" {
		return CardBrandName(brand)
	}
	return CardBrandName(brand) + " •••• " + last4
}

// PortalBackPath reports whether back is a path of the customer portal a hosted page may link
// back to: /portal or below it, without a host, scheme, query, "..", or anything a browser could
// read as another origin (a backslash, "//").
func PortalBackPath(back string) bool {
	if back != "/portal" && !strings.HasPrefix(back, "/portal/") {
		return false
	}
	return !strings.ContainsAny(back, "\\?#%:@ \t\r\n") && !strings.Contains(back, "//") && !strings.Contains(back, "/..") && !strings.Contains(back, "/./")
}

// ChangeFigures are what a plan change's confirmation page tells (docs/customer-portal.md "Change
// plan"): the credit notes it issues (Credited), the invoices it creates already final, billed now
// (Billed), and the draft of the current period it revises, whose new total is what the period's
// invoice will bill when it is finalized (Revised; nothing is billed for it now).
type ChangeFigures struct {
	Credited, Billed, Revised int64
}

// ChangeFiguresOf sums a change preview's documents into the confirmation's figures.
func ChangeFiguresOf(pv SubscriptionChangePreview) ChangeFigures {
	var f ChangeFigures
	for _, cn := range pv.CreditNotes {
		f.Credited += cn.Total
	}
	for _, inv := range pv.Invoices {
		if inv.Status == InvoiceDraft {
			f.Revised += inv.Total
		} else {
			f.Billed += inv.Total
		}
	}
	return f
}
