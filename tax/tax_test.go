package tax_test

import (
	"reflect"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

func TestAmountRoundsHalfUpPerLine(t *testing.T) {
	for _, c := range []struct{ taxable, ppm, want int64 }{
		{1000, 72500, 73},     // 72.5 → 73
		{999, 72500, 72},      // 72.4275 → 72
		{10000, 149750, 1498}, // 1497.5 → 1498 (14.975%)
		{1, 149750, 0},        // 0.14975 → 0
		{3, 190000, 1},        // 0.57 → 1
		{0, 200000, 0},
	} {
		if got := tax.Amount(c.taxable, c.ppm); got != c.want {
			t.Errorf("Amount(%d, %d) = %d, want %d", c.taxable, c.ppm, got, c.want)
		}
	}
}

func TestDefaultTable(t *testing.T) {
	d := tax.Default()
	for _, place := range []string{"US-CA", "US-NY", "US-TX", "US-WA", "GB", "DE", "FR", "HU", "CA-ON", "CA-BC", "CA-QC", "CA-AB"} {
		country, region := place, ""
		if len(place) > 2 {
			country, region = place[:2], place[3:]
		}
		if len(d.Lookup(country, region)) == 0 {
			t.Errorf("no rate for %s", place)
		}
	}
	eu := []string{"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE"}
	for _, c := range eu {
		if len(d.Lookup(c, "")) != 1 {
			t.Errorf("EU member %s has no standard VAT rate", c)
		}
	}
	if got := d.Lookup("US", "OR"); len(got) != 0 {
		t.Errorf("Oregon has no sales tax in the default table, got %v", got)
	}
	if got := d.Lookup("DE", "BY"); len(got) != 1 || got[0].Jurisdiction != "DE" {
		t.Errorf("a region without its own rate falls back to the country: %v", got)
	}
}

func TestComputeTwoJurisdictions(t *testing.T) {
	bc := tax.Default().Lookup("CA", "BC") // GST 5% + PST 7%
	got := tax.Compute([]int64{10000, 333}, bc, false)
	want := []tax.LineTax{
		{Line: 0, Jurisdiction: "CA", RatePPM: 50000, TaxableAmount: 10000, TaxAmount: 500},
		{Line: 0, Jurisdiction: "CA-BC", RatePPM: 70000, TaxableAmount: 10000, TaxAmount: 700},
		{Line: 1, Jurisdiction: "CA", RatePPM: 50000, TaxableAmount: 333, TaxAmount: 17},    // 16.65 → 17
		{Line: 1, Jurisdiction: "CA-BC", RatePPM: 70000, TaxableAmount: 333, TaxAmount: 23}, // 23.31 → 23
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	exempt := tax.Compute([]int64{10000}, bc, true)
	for _, l := range exempt {
		if l.TaxAmount != 0 || l.RatePPM != 0 {
			t.Fatalf("exempt customer taxed: %+v", l)
		}
	}
}

// Partial credits: shares are rounded on the cumulative credited amount, so that crediting a line
// in full reverses exactly its tax — the cases where rounding each credit on its own would not
// (37 + 37 = 74 ≠ 73, and 6 + 6 + 6 = 18 ≠ 19).
func TestReversalShare(t *testing.T) {
	for _, c := range []struct {
		name             string
		lineTax, taxable int64
		credits          []int64
		want             []int64
	}{
		{"halves of 0.73", 73, 1000, []int64{500, 500}, []int64{37, 36}},       // 36.5→37; 73−37
		{"thirds of 0.19", 19, 100, []int64{33, 33, 34}, []int64{6, 7, 6}},     // 6.27→6; 12.54→13 (−6); 19−13
		{"full at once", 73, 1000, []int64{1000}, []int64{73}},                 //
		{"small then rest", 1498, 10000, []int64{1, 9999}, []int64{0, 1498}},   // 0.1498→0
		{"one cent each at 14.975%", 1, 3, []int64{1, 1, 1}, []int64{0, 1, 0}}, // 0.33→0; 0.67→1; 1
	} {
		t.Run(c.name, func(t *testing.T) {
			var credited, reversed int64
			for i, cr := range c.credits {
				got := remit.ReversalShare(c.lineTax, c.taxable, credited, cr, reversed)
				if got != c.want[i] {
					t.Fatalf("credit %d (%d): share %d, want %d", i, cr, got, c.want[i])
				}
				credited += cr
				reversed += got
			}
			if credited == c.taxable && reversed != c.lineTax {
				t.Fatalf("full credit reversed %d of %d", reversed, c.lineTax)
			}
		})
	}
}

func TestParseRejectsBadRates(t *testing.T) {
	if _, err := tax.Parse([]byte(`{"US-CA":[{"jurisdiction":"US-CA","ratePpm":2000000}]}`)); err == nil {
		t.Fatal("a rate over 100% was accepted")
	}
	tb, err := tax.Parse([]byte(`{"US-OR":[{"jurisdiction":"US-OR","ratePpm":10000}]}`))
	if err != nil || tb.Lookup("US", "OR")[0].RatePPM != 10000 {
		t.Fatalf("custom table: %v", err)
	}
}
