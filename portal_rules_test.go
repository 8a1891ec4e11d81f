package remit_test

import (
	"strings"
	"testing"

	"github.com/remit-billing/remit"
)

func TestPortalAddress(t *testing.T) {
	full := map[string]string{"line1": " 1 rue de la Paix ", "city": "Paris", "postalCode": "75002", "country": "fr"}
	for _, c := range []struct {
		name   string
		form   map[string]string
		want   string // the address as line1|line2|city|region|postalCode|country, "" for nil
		fields string // the problems' fields and reasons
	}{
		{"empty is no address", map[string]string{"line1": "  "}, "", ""},
		{"complete, trimmed, country upper-cased", full, "1 rue de la Paix||Paris||75002|FR", ""},
		{"line2 and region", map[string]string{"line1": "1 Main St", "line2": "Suite 2", "city": "Austin", "region": "TX", "postalCode": "78701", "country": "US"},
			"1 Main St|Suite 2|Austin|TX|78701|US", ""},
		{"required fields", map[string]string{"line2": "Suite 2"}, "|Suite 2||||", "address.line1 required,address.city required,address.postalCode required,address.country required"},
		{"unknown country", map[string]string{"line1": "x", "city": "y", "postalCode": "1", "country": "UK"}, "x||y||1|UK", "address.country invalid_country"},
		{"bad country", map[string]string{"line1": "x", "city": "y", "postalCode": "1", "country": "USA"}, "x||y||1|USA", "address.country invalid_format"},
		{"too long", map[string]string{"line1": strings.Repeat("a", 201), "city": "y", "postalCode": "1", "country": "US"}, strings.Repeat("a", 201) + "||y||1|US", "address.line1 too_long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			a := remit.PortalAddress(c.form, &p)
			got := ""
			if a != nil {
				got = strings.Join([]string{a.Line1, deref(a.Line2), a.City, deref(a.Region), a.PostalCode, a.Country}, "|")
			}
			var fields []string
			for _, f := range p.Fields() {
				fields = append(fields, f.Field+" "+f.Reason)
			}
			if got != c.want || strings.Join(fields, ",") != c.fields {
				t.Fatalf("got %q %q, want %q %q", got, fields, c.want, c.fields)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestCardBrandName(t *testing.T) {
	for brand, want := range map[string]string{"visa": "Visa", "VISA": "Visa", "mastercard": "Mastercard", "amex": "American Express",
		"discover": "Discover", "jcb": "JCB", "diners": "Diners Club", "unionpay": "UnionPay", "elo": "elo", "": "Card"} {
		if got := remit.CardBrandName(brand); got != want {
			t.Errorf("CardBrandName(%q) = %q, want %q", brand, got, want)
		}
	}
	if got := remit.CardLabel("visa", "4242"); got != "Visa •••• 4242" {
		t.Errorf("CardLabel %q", got)
	}
	if got := remit.CardLabel("", ""); got != "Card" {
		t.Errorf("CardLabel without anything %q", got)
	}
}

func TestPortalBackPath(t *testing.T) {
	for back, want := range map[string]bool{"/portal": true, "/portal/invoices": true, "/portal/payment-methods": true,
		"": false, "/": false, "/portalx": false, "https://evil.example/portal": false, "//evil.example/portal": false,
		"/portal//evil.example": false, "/portal/../v1/customers": false, "/portal/\\evil": false, "/portal?x=1": false,
		"/portal/%2e%2e/v1": false, "/portal/a b": false, "/dashboard": false, "/portal/./x": false} {
		if got := remit.PortalBackPath(back); got != want {
			t.Errorf("PortalBackPath(%q) = %v, want %v", back, got, want)
		}
	}
}

func TestChangeFiguresOf(t *testing.T) {
	inv := func(status remit.InvoiceStatus, total int64) remit.Invoice {
		return remit.Invoice{Status: status, Total: total}
	}
	for _, c := range []struct {
		name string
		pv   remit.SubscriptionChangePreview
		want remit.ChangeFigures
	}{
		{"nothing now (create_prorations: pending charges)", remit.SubscriptionChangePreview{}, remit.ChangeFigures{}},
		{"credit note and an invoice billed at once (always_invoice)", remit.SubscriptionChangePreview{
			CreditNotes: []remit.CreditNote{{Total: 1200}, {Total: 300}}, Invoices: []remit.Invoice{inv(remit.InvoiceOpen, 4100)}},
			remit.ChangeFigures{Credited: 1500, Billed: 4100}},
		{"a paid invoice is billed now too", remit.SubscriptionChangePreview{Invoices: []remit.Invoice{inv(remit.InvoicePaid, 900)}},
			remit.ChangeFigures{Billed: 900}},
		{"the period's draft revised: its new total, not billed now", remit.SubscriptionChangePreview{
			Invoices: []remit.Invoice{inv(remit.InvoiceDraft, 8800)}}, remit.ChangeFigures{Revised: 8800}},
		{"both", remit.SubscriptionChangePreview{Invoices: []remit.Invoice{inv(remit.InvoiceDraft, 8800), inv(remit.InvoiceOpen, 100)}},
			remit.ChangeFigures{Billed: 100, Revised: 8800}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.ChangeFiguresOf(c.pv); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
