package remit_test

import (
	"reflect"
	"testing"

	"github.com/remit-billing/remit"
)

func TestRoundHalfUp(t *testing.T) {
	for _, c := range []struct{ num, den, want int64 }{
		{4995, 100, 50}, {4949, 100, 49}, {4950, 100, 50}, {5, 10, 1}, {4, 10, 0}, {0, 7, 0}, {-5, 10, -1}, {15, 10, 2}, {25, 10, 3},
	} {
		if got := remit.RoundHalfUp(c.num, c.den); got != c.want {
			t.Errorf("RoundHalfUp(%d, %d) = %d, want %d", c.num, c.den, got, c.want)
		}
	}
}

func TestAllocateProportionally(t *testing.T) {
	for _, c := range []struct {
		name    string
		total   int64
		weights []int64
		want    []int64
	}{
		// 1000 × 3000/6000 = 500; × 2000/6000 = 333.33; × 1000/6000 = 166.67: the largest
		// remainder (166.67) gets the missing cent.
		{"largest remainder", 1000, []int64{3000, 2000, 1000}, []int64{500, 333, 167}},
		{"ties go to the earlier line", 100, []int64{1, 1, 1}, []int64{34, 33, 33}},
		{"exact", 500, []int64{1000, 3000}, []int64{125, 375}},
		{"zero weights", 100, []int64{0, 0}, []int64{0, 0}},
		{"zero line keeps nothing", 10, []int64{0, 5, 5}, []int64{0, 5, 5}},
		{"huge amounts do not overflow", 999_999_999_999, []int64{999_999_999_999, 999_999_999_999}, []int64{500_000_000_000, 499_999_999_999}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.AllocateProportionally(c.total, c.weights); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestDiscountLines(t *testing.T) {
	for _, c := range []struct {
		name    string
		amounts []int64
		coupons []remit.CouponTerms
		want    []int64
	}{
		{"percent per line, half-up", []int64{1000, 2550, 333}, []remit.CouponTerms{{PercentOff: 15}}, []int64{150, 383, 50}}, // 382.5→383, 49.95→50
		{"amount spread by proportion", []int64{1000, 3000}, []remit.CouponTerms{{AmountOff: 500}}, []int64{125, 375}},
		{"amount capped at subtotal", []int64{1000, 2000}, []remit.CouponTerms{{AmountOff: 5000}}, []int64{1000, 2000}},
		{"percent then amount on what is left", []int64{1000, 2000}, []remit.CouponTerms{{PercentOff: 10}, {AmountOff: 300}}, []int64{200, 400}},
		{"100 percent", []int64{999, 1}, []remit.CouponTerms{{PercentOff: 100}}, []int64{999, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.DiscountLines(c.amounts, c.coupons); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestApplyPrepaid(t *testing.T) {
	lines := []remit.PricedLine{
		{LineType: remit.LineRecurring, PriceID: "plan"},
		{LineType: remit.LineUsage, PriceID: "api", MeterID: "calls"},
		{LineType: remit.LineOneTime, PriceID: "setup"},
	}
	after := []int64{900, 1800, 500}
	grants := []remit.SpendableGrant{
		{EntryID: "g1", Remaining: 1000, Targets: &remit.BalanceTargets{LineTypes: []string{"usage"}}},
		{EntryID: "g2", Remaining: 1500},
		{EntryID: "g3", Remaining: 700, Targets: &remit.BalanceTargets{PriceIDs: []string{"setup"}, LineTypes: []string{"recurring"}}}, // both must match: none does
	}
	apps, per := remit.ApplyPrepaid(lines, after, grants)
	wantApps := []remit.Application{{EntryID: "g1", Line: 1, Amount: 1000}, {EntryID: "g2", Line: 0, Amount: 900}, {EntryID: "g2", Line: 1, Amount: 600}}
	if !reflect.DeepEqual(apps, wantApps) {
		t.Fatalf("applications %v, want %v", apps, wantApps)
	}
	if want := []int64{900, 1600, 0}; !reflect.DeepEqual(per, want) {
		t.Fatalf("per line %v, want %v", per, want)
	}
}

// FuzzInvoiceArithmetic checks the invariants of discounts and prepaid application for any input:
// no figure is negative, no line is discounted or paid beyond its amount, an amount coupon is
// allocated exactly (up to the subtotal), and no grant is spent beyond its remaining.
func FuzzInvoiceArithmetic(f *testing.F) {
	f.Add(int64(1000), int64(2550), int64(333), int64(15), int64(500), int64(700), int64(400), uint8(3))
	f.Add(int64(1), int64(0), int64(999_999_999_999), int64(100), int64(999_999_999_999), int64(1), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, a, b, c, pct, amountOff, g1, g2 int64, targets uint8) {
		clamp := func(v, hi int64) int64 {
			if v < 0 {
				v = -v
			}
			if v < 0 {
				v = 0
			}
			return v % (hi + 1)
		}
		amounts := []int64{clamp(a, 999_999_999_999), clamp(b, 999_999_999_999), clamp(c, 999_999_999_999)}
		pct, amountOff = clamp(pct, 100), clamp(amountOff, 999_999_999_999)
		coupons := []remit.CouponTerms{{PercentOff: pct}, {AmountOff: amountOff}}
		disc := remit.DiscountLines(amounts, coupons)
		var subtotal, discTotal int64
		after := make([]int64, len(amounts))
		for i := range amounts {
			if disc[i] < 0 || disc[i] > amounts[i] {
				t.Fatalf("line %d discount %d of %d", i, disc[i], amounts[i])
			}
			subtotal += amounts[i]
			discTotal += disc[i]
			after[i] = amounts[i] - disc[i]
		}
		pctTotal := int64(0)
		for i := range amounts {
			pctTotal += remit.PercentOf(amounts[i], pct)
		}
		if want := min(subtotal, pctTotal+min(amountOff, subtotal-pctTotal)); discTotal != want {
			t.Fatalf("discount total %d, want %d", discTotal, want)
		}
		lines := []remit.PricedLine{{LineType: "recurring", PriceID: "p"}, {LineType: "usage", MeterID: "m"}, {LineType: "one_time"}}
		tg := &remit.BalanceTargets{}
		if targets&1 == 1 {
			tg.LineTypes = []string{"usage"}
		}
		grants := []remit.SpendableGrant{{EntryID: "g1", Remaining: clamp(g1, 999_999_999_999), Targets: tg}, {EntryID: "g2", Remaining: clamp(g2, 999_999_999_999)}}
		apps, per := remit.ApplyPrepaid(lines, after, grants)
		spent := map[string]int64{}
		for _, ap := range apps {
			if ap.Amount <= 0 {
				t.Fatalf("non-positive application %+v", ap)
			}
			spent[ap.EntryID] += ap.Amount
		}
		for _, g := range grants {
			if spent[g.EntryID] > g.Remaining {
				t.Fatalf("grant %s spent %d of %d", g.EntryID, spent[g.EntryID], g.Remaining)
			}
		}
		for i := range per {
			if per[i] < 0 || per[i] > after[i] {
				t.Fatalf("line %d prepaid %d of %d", i, per[i], after[i])
			}
		}
	})
}
