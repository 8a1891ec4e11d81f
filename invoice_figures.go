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

// TaxOnLine is one line's tax in one jurisdiction, as the tax engine (package tax) computes it:
// the line's index, the jurisdiction and its rate, what was taxable and the tax, rounded.
type TaxOnLine struct {
	Line          int
	Jurisdiction  string
	RatePPM       int64
	TaxableAmount int64
	TaxAmount     int64
}

// TaxFunc computes the tax of each line on its taxable amount (what is left after discounts and
// prepaid balance), for the invoice's place: the tax engine, bound to a place (tax.Calculator).
type TaxFunc func(taxable []int64) []TaxOnLine

// InvoiceFiguresInput is everything the arithmetic of one invoice needs besides its tax.
type InvoiceFiguresInput struct {
	Lines   []PricedLine
	Coupons []CouponTerms
	Grants  []SpendableGrant // spendable prepaid balance, earliest expiry first; nil for a draft
}

// LineFigures are one line's computed figures.
type LineFigures struct {
	Amount         int64
	DiscountAmount int64
	PrepaidApplied int64
	TaxAmount      int64
	Taxes          []TaxOnLine // one per jurisdiction
}

// InvoiceFigures are the computed lines and totals. Totals are sums of the line figures:
// Total = Subtotal − DiscountTotal − PrepaidApplied + TaxTotal.
type InvoiceFigures struct {
	Lines          []LineFigures
	Applications   []Application
	Subtotal       int64
	DiscountTotal  int64
	PrepaidApplied int64
	TaxTotal       int64
	Total          int64
}

// ComputeInvoiceFigures runs the invoice arithmetic in its fixed order: discounts (DiscountLines),
// then prepaid balance on eligible lines after discounts (ApplyPrepaid), then tax per line and
// jurisdiction on what is left (taxOf). It is pure: the same input always gives the same figures.
func ComputeInvoiceFigures(in InvoiceFiguresInput, taxOf TaxFunc) InvoiceFigures {
	n := len(in.Lines)
	amounts := make([]int64, n)
	for i, l := range in.Lines {
		amounts[i] = l.Amount
	}
	disc := DiscountLines(amounts, in.Coupons)
	after := make([]int64, n)
	for i := range amounts {
		after[i] = amounts[i] - disc[i]
	}
	apps, prepaid := ApplyPrepaid(in.Lines, after, in.Grants)
	taxable := make([]int64, n)
	for i := range after {
		taxable[i] = after[i] - prepaid[i]
	}
	out := InvoiceFigures{Lines: make([]LineFigures, n), Applications: apps}
	for i := range in.Lines {
		out.Lines[i] = LineFigures{Amount: amounts[i], DiscountAmount: disc[i], PrepaidApplied: prepaid[i]}
	}
	for _, t := range taxOf(taxable) {
		lf := &out.Lines[t.Line]
		lf.TaxAmount += t.TaxAmount
		lf.Taxes = append(lf.Taxes, t)
	}
	for _, lf := range out.Lines {
		out.Subtotal += lf.Amount
		out.DiscountTotal += lf.DiscountAmount
		out.PrepaidApplied += lf.PrepaidApplied
		out.TaxTotal += lf.TaxAmount
	}
	out.Total = out.Subtotal - out.DiscountTotal - out.PrepaidApplied + out.TaxTotal
	return out
}
