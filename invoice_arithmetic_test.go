package remit_test

import (
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

// The invoice arithmetic in its order (remit.ComputeInvoiceFigures) with the tax engine
// (tax.Calculator).
//
// A hand-checked invoice: a plan of 50.00, 1,234 API calls at 0.10, a setup fee of 25.00; a 10%
// coupon and a 5.00 coupon; a usage-only grant of 30.00; billed in British Columbia (GST 5% + PST 7%).
//
//	amounts        5000        12340       2500        = 19840
//	10% off         500         1234        250        → left 4500, 11106, 2250 (17856)
//	5.00 spread     126 (126.0) 311 (310.99) 63 (63.0)  → largest remainder: 4500×500/17856 = 126.008, 11106×500/17856 = 310.988, 2250×500/17856 = 63.004 → floors 126, 310, 63 = 499; +1 to line 1
//	discount        626         1545        313        = 2484
//	after           4374        10795       2187
//	grant (usage)     0         3000          0
//	taxable         4374         7795       2187
//	GST 5%          218.7→219    389.75→390  109.35→109
//	PST 7%          306.18→306   545.65→546  153.09→153
//	tax              525          936         262      = 1723
//	total = 19840 − 2484 − 3000 + 1723 = 16079
func TestComputeInvoiceFiguresHandChecked(t *testing.T) {
	got := remit.ComputeInvoiceFigures(remit.InvoiceFiguresInput{
		Lines: []remit.PricedLine{
			{LineType: remit.LineRecurring, PriceID: "plan", Amount: 5000},
			{LineType: remit.LineUsage, PriceID: "api", MeterID: "calls", Amount: 12340},
			{LineType: remit.LineOneTime, PriceID: "setup", Amount: 2500},
		},
		Coupons: []remit.CouponTerms{{PercentOff: 10}, {AmountOff: 500}},
		Grants:  []remit.SpendableGrant{{EntryID: "g", Remaining: 3000, Targets: &remit.BalanceTargets{LineTypes: []string{"usage"}}}},
	}, tax.Calculator(tax.Default().Lookup("CA", "BC"), false))
	check := func(name string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	check("line 0 discount", got.Lines[0].DiscountAmount, 626)
	check("line 1 discount", got.Lines[1].DiscountAmount, 1545)
	check("line 2 discount", got.Lines[2].DiscountAmount, 313)
	check("line 1 prepaid", got.Lines[1].PrepaidApplied, 3000)
	check("line 0 tax", got.Lines[0].TaxAmount, 525)
	check("line 1 tax", got.Lines[1].TaxAmount, 936)
	check("line 2 tax", got.Lines[2].TaxAmount, 262)
	check("subtotal", got.Subtotal, 19840)
	check("discountTotal", got.DiscountTotal, 2484)
	check("prepaidApplied", got.PrepaidApplied, 3000)
	check("taxTotal", got.TaxTotal, 1723)
	check("total", got.Total, 16079)
}

// FuzzComputeInvoiceFigures: for any input, line figures add up to the totals and no figure is negative.
func FuzzComputeInvoiceFigures(f *testing.F) {
	f.Add(int64(5000), int64(12340), int64(2500), int64(10), int64(500), int64(3000), uint8(1), uint8(3))
	f.Add(int64(1), int64(1), int64(1), int64(100), int64(0), int64(0), uint8(0), uint8(0))
	places := [][2]string{{"US", "CA"}, {"CA", "BC"}, {"CA", "QC"}, {"DE", ""}, {"US", "OR"}, {"HU", ""}}
	f.Fuzz(func(t *testing.T, a, b, c, pct, off, grant int64, target, place uint8) {
		pos := func(v, hi int64) int64 {
			if v < 0 {
				v = -(v + 1)
			}
			return v % (hi + 1)
		}
		const maxAmt = 999_999_999_999
		p := places[int(place)%len(places)]
		in := remit.InvoiceFiguresInput{
			Lines: []remit.PricedLine{
				{LineType: remit.LineRecurring, PriceID: "plan", Amount: pos(a, maxAmt)},
				{LineType: remit.LineUsage, MeterID: "m", Amount: pos(b, maxAmt)},
				{LineType: remit.LineOneTime, Amount: pos(c, maxAmt)},
			},
			Coupons: []remit.CouponTerms{{PercentOff: pos(pct, 100)}, {AmountOff: pos(off, maxAmt)}},
			Grants:  []remit.SpendableGrant{{EntryID: "g", Remaining: pos(grant, maxAmt)}},
		}
		exempt := target&2 == 2
		if target&1 == 1 {
			in.Grants[0].Targets = &remit.BalanceTargets{LineTypes: []string{"usage"}}
		}
		got := remit.ComputeInvoiceFigures(in, tax.Calculator(tax.Default().Lookup(p[0], p[1]), exempt))
		var sub, disc, pre, tx int64
		for i, l := range got.Lines {
			if l.Amount < 0 || l.DiscountAmount < 0 || l.PrepaidApplied < 0 || l.TaxAmount < 0 {
				t.Fatalf("negative figure on line %d: %+v", i, l)
			}
			if l.DiscountAmount+l.PrepaidApplied > l.Amount {
				t.Fatalf("line %d reduced below zero: %+v", i, l)
			}
			sub, disc, pre, tx = sub+l.Amount, disc+l.DiscountAmount, pre+l.PrepaidApplied, tx+l.TaxAmount
		}
		if sub != got.Subtotal || disc != got.DiscountTotal || pre != got.PrepaidApplied || tx != got.TaxTotal {
			t.Fatalf("lines do not add up to totals: %+v", got)
		}
		if got.Total != sub-disc-pre+tx || got.Total < 0 {
			t.Fatalf("total %d", got.Total)
		}
		if exempt && got.TaxTotal != 0 {
			t.Fatalf("exempt invoice taxed %d", got.TaxTotal)
		}
	})
}
