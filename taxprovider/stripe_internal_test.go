package taxprovider

import (
	"fmt"
	"testing"

	"github.com/stripe/stripe-go/v83"

	"github.com/remit-billing/remit"
)

// Stripe's line items map back to the lines asked on by reference, else in the order sent (lines
// with nothing taxable are not sent); a breakdown entry is one tax, its rate from
// percentage_decimal; a line item without a breakdown is one tax of its amount_tax.
func TestTaxesOfStripeLineItems(t *testing.T) {
	req := Request{Address: &remit.Address{Country: "us"}, Lines: []Line{
		{Reference: "il_a", Taxable: 1000}, {Reference: "il_free", Taxable: 0}, {Reference: "il_b", Taxable: 2000}, {Reference: "il_c", Taxable: 400}}}
	sent := []int{0, 2, 3}
	items := []*stripe.TaxCalculationLineItem{
		{Reference: "il_b", TaxBreakdown: []*stripe.TaxCalculationLineItemTaxBreakdown{
			{Amount: 178, TaxableAmount: 2000, Jurisdiction: &stripe.TaxCalculationLineItemTaxBreakdownJurisdiction{Country: "US", State: "NY"},
				TaxRateDetails: &stripe.TaxCalculationLineItemTaxBreakdownTaxRateDetails{PercentageDecimal: "8.875"}},
			{Amount: 0, TaxableAmount: 2000, Jurisdiction: &stripe.TaxCalculationLineItemTaxBreakdownJurisdiction{Country: "US"}}}},
		{Reference: "Pepperoni Pizza", AmountTax: 50}, // not ours: the second line sent
		{Reference: "il_c", AmountTax: 0},             // nothing owed
		{Reference: "extra", AmountTax: 9},            // past the lines sent: ignored
	}
	got := fmt.Sprint(taxesOf(req, sent, items))
	want := fmt.Sprint([]remit.TaxOnLine{
		{Line: 2, Jurisdiction: "US-NY", RatePPM: 88750, TaxableAmount: 2000, TaxAmount: 178},
		{Line: 2, Jurisdiction: "US", RatePPM: 0, TaxableAmount: 2000, TaxAmount: 0},
		{Line: 2, Jurisdiction: "US", RatePPM: 25000, TaxableAmount: 2000, TaxAmount: 50},
	})
	if got != want {
		t.Fatalf("taxes\n got %s\nwant %s", got, want)
	}
}
