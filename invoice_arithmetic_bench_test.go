package remit_test

import (
	"fmt"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

// BenchmarkComputeInvoiceFigures: an invoice's totals (remit.ComputeInvoiceFigures) — 12 lines of three types, a
// percent and an amount coupon, three prepaid grants (one restricted to usage lines), taxed in
// British Columbia (two jurisdictions). Pure arithmetic: what finalization and refresh spend
// beyond their reads and writes.
//
//	go test -run '^$' -bench ComputeInvoiceFigures -benchtime 2s .
func BenchmarkComputeInvoiceFigures(b *testing.B) {
	var lines []remit.PricedLine
	types := []string{remit.LineRecurring, remit.LineUsage, remit.LineOneTime}
	for i := range 12 {
		l := remit.PricedLine{LineType: types[i%3], PriceID: fmt.Sprintf("price_%d", i), Amount: int64(1000 + 137*i)}
		if l.LineType == remit.LineUsage {
			l.MeterID = "calls"
		}
		lines = append(lines, l)
	}
	in := remit.InvoiceFiguresInput{
		Lines:   lines,
		Coupons: []remit.CouponTerms{{PercentOff: 10}, {AmountOff: 500}},
		Grants: []remit.SpendableGrant{
			{EntryID: "g1", Remaining: 3000, Targets: &remit.BalanceTargets{LineTypes: []string{remit.LineUsage}}},
			{EntryID: "g2", Remaining: 1500},
			{EntryID: "g3", Remaining: 700},
		},
	}
	taxOf := tax.Calculator(tax.Default().Lookup("CA", "BC"), false)
	b.ReportAllocs()
	for b.Loop() {
		if f := remit.ComputeInvoiceFigures(in, taxOf); f.Total <= 0 {
			b.Fatal("no total")
		}
	}
}
