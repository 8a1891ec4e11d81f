package remit

import (
	"sort"
)

// Invoice arithmetic (docs/invoices-and-tax.md): the pure rules that turn priced lines into figures.
// Order: discounts, then prepaid balance (eligible lines after discounts, before tax), then tax on
// what is left of each line. Every figure is int64 minor units; line figures always add up to the
// invoice's totals.

// Coupon is a discount as the arithmetic needs it: PercentOff (1..100) or AmountOff (> 0).
type CouponTerms struct {
	ID         string
	PercentOff int64
	AmountOff  int64
}

// PricedLine is one invoice line before discounts: Amount = quantity × unit amount.
type PricedLine struct {
	LineType string
	PriceID  string
	MeterID  string
	Amount   int64
}

// PercentOf returns pct percent of amount, rounded half-up (pct may be 0..100).
func PercentOf(amount, pct int64) int64 { return RoundHalfUp(amount*pct, 100) }

// AllocateProportionally splits total over weights in proportion to them, by largest remainder,
// so that the parts add up to total exactly. Ties go to the earlier weight. If every weight is 0
// nothing is allocated. total must not exceed the sum of weights for the parts to stay within them.
func AllocateProportionally(total int64, weights []int64) []int64 {
	parts := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += w
	}
	if sum <= 0 || total <= 0 {
		return parts
	}
	type rem struct {
		i int
		r int64
	}
	rems := make([]rem, len(weights))
	var given int64
	for i, w := range weights {
		// floor(total*w/sum) without overflow: amounts are bounded (≤ 10^12 each) but a product
		// of two can exceed int64, so divide through 128-bit arithmetic.
		q, r := mulDiv(total, w, sum)
		parts[i] = q
		rems[i] = rem{i, r}
		given += q
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < total; k++ {
		parts[rems[k%len(rems)].i]++
		given++
	}
	return parts
}

// mulDiv returns floor(a*b/c) and the remainder, for non-negative a, b and positive c, without
// overflowing when a*b exceeds int64.
func mulDiv(a, b, c int64) (q, r int64) {
	hi, lo := mul64(uint64(a), uint64(b))
	qq, rr := div128(hi, lo, uint64(c))
	return int64(qq), int64(rr)
}

// DiscountLines applies coupons in order to the lines' amounts and returns each line's discount.
// A percent coupon discounts each line by its percentage of what is left of the line, rounded
// half-up per line; an amount coupon, capped at what is left in total, is spread over the lines in
// proportion to what is left of each, by largest remainder.
func DiscountLines(amounts []int64, coupons []CouponTerms) []int64 {
	disc := make([]int64, len(amounts))
	left := append([]int64(nil), amounts...)
	for _, c := range coupons {
		switch {
		case c.PercentOff > 0:
			for i := range left {
				d := PercentOf(left[i], c.PercentOff)
				if d > left[i] {
					d = left[i]
				}
				disc[i] += d
				left[i] -= d
			}
		case c.AmountOff > 0:
			var total int64
			for _, l := range left {
				total += l
			}
			amt := c.AmountOff
			if amt > total {
				amt = total
			}
			parts := AllocateProportionally(amt, left)
			for i, p := range parts {
				disc[i] += p
				left[i] -= p
			}
		}
	}
	return disc
}

// SpendableGrant is prepaid balance available to an invoice, in the order it should be used
// (earliest expiry first).
type SpendableGrant struct {
	EntryID   string
	Remaining int64
	Targets   *BalanceTargets // nil pays any line
}

// Application is an amount of one grant applied to one line.
type Application struct {
	EntryID string
	Line    int
	Amount  int64
}

// ApplyPrepaid applies grants, in the given order, to what is left of each line after discounts;
// each grant pays the eligible lines in line order. It returns the applications and each line's
// prepaid total. No line is paid beyond what is left of it and no grant beyond its remaining.
func ApplyPrepaid(lines []PricedLine, afterDiscount []int64, grants []SpendableGrant) ([]Application, []int64) {
	left := append([]int64(nil), afterDiscount...)
	perLine := make([]int64, len(lines))
	var apps []Application
	for _, g := range grants {
		rem := g.Remaining
		for i, l := range lines {
			if rem <= 0 {
				break
			}
			if left[i] <= 0 || !g.Targets.Matches(l.LineType, l.PriceID, l.MeterID) {
				continue
			}
			amt := min(rem, left[i])
			apps = append(apps, Application{EntryID: g.EntryID, Line: i, Amount: amt})
			perLine[i] += amt
			left[i] -= amt
			rem -= amt
		}
	}
	return apps, perLine
}
