package remit

import (
	"fmt"
	"time"
)

// Proration (docs/quotes-and-subscriptions.md "Proration"): a share of a billing period is
// measured in seconds, and an amount prorated for it is rounded half-up per line, in the
// currency's minor units (so a currency without minor units, JPY, rounds to whole yen).

// RemainingShare is the part of the period [start, end) left at `at`, as seconds remaining and
// seconds in the period. A moment before the period leaves all of it; at or after its end, none.
func RemainingShare(start, end, at time.Time) (remaining, total int64) {
	total = int64(end.Sub(start) / time.Second)
	if total <= 0 {
		return 0, 1
	}
	switch {
	case !at.After(start):
		return total, total
	case !at.Before(end):
		return 0, total
	}
	return int64(end.Sub(at) / time.Second), total
}

// ProrateAmount is amount × remaining ÷ total, rounded half-up (amount ≥ 0, 0 ≤ remaining ≤ total,
// total > 0), without overflow for any amount Remit accepts.
func ProrateAmount(amount, remaining, total int64) int64 {
	if amount <= 0 || remaining <= 0 {
		return 0
	}
	if remaining >= total {
		return amount
	}
	q, r := mulDiv(amount, remaining, total)
	if 2*r >= total {
		q++
	}
	return q
}

// ItemAmounts prices one whole period of a subscription item: by its price's tiers or packages
// when prices (by ID) holds a price so priced (LineAmount; never more than MaxAmount), else at its
// unit amount × quantity.
func ItemAmounts(prices map[string]Price) func(SubscriptionItem) int64 {
	return func(it SubscriptionItem) int64 {
		if p, ok := prices[it.PriceID]; ok && p.PricedByTiersOrPackages() {
			if _, amount, _, err := LineAmount(p, it.UnitAmount, false, quantityOf(it)); err == nil {
				return amount
			}
			return MaxAmount
		}
		return it.UnitAmount * quantityOf(it)
	}
}

// ProrationLine is one line of a proration: the unused time of an item the customer stops paying
// for (Credit), or the remaining time of one they start (charge), over [From, To).
type ProrationLine struct {
	Item        SubscriptionItem
	Credit      bool
	Amount      int64 // ≥ 0; a credit is given back, a charge billed
	From, To    time.Time
	Name        string // the item for people: "Pro", "3 × Seat"
	Description string
}

// ProrateChange prices a change of a subscription's fixed items at `at` within the period
// [start, end): a credit for the unused time of each old fixed_recurring item that does not carry
// on unchanged, and a charge for the remaining time of each new one. Items that stay the same
// (price, quantity and unit amount) are not prorated; usage_metered items bill what is measured
// and are never prorated. Lines of amount 0 are left out.
//
// amount is the amount of one whole period of an item (ItemAmounts); nil prices every item at its
// unit amount × quantity.
func ProrateChange(old, new []SubscriptionItem, start, end, at time.Time, amount func(SubscriptionItem) int64) []ProrationLine {
	if amount == nil {
		amount = ItemAmounts(nil)
	}
	remaining, total := RemainingShare(start, end, at)
	from := at
	if at.Before(start) {
		from = start
	}
	var out []ProrationLine
	add := func(it SubscriptionItem, credit bool) {
		amt := ProrateAmount(amount(it), remaining, total)
		if amt == 0 {
			return
		}
		verb := "Remaining time on"
		if credit {
			verb = "Unused time on"
		}
		out = append(out, ProrationLine{Item: it, Credit: credit, Amount: amt, From: from, To: end, Name: itemName(it),
			Description: fmt.Sprintf("%s %s from %s to %s", verb, itemName(it), ProrationDate(from), ProrationDate(end))})
	}
	for _, it := range old {
		if it.PriceType == PriceFixedRecurring && !containsItem(new, it) {
			add(it, true)
		}
	}
	for _, it := range new {
		if it.PriceType == PriceFixedRecurring && !containsItem(old, it) {
			add(it, false)
		}
	}
	return out
}

// ProrationDate writes a proration's boundary for people: "3 Mar 2026".
func ProrationDate(t time.Time) string { return t.UTC().Format("2 Jan 2006") }

func quantityOf(it SubscriptionItem) int64 {
	if it.Quantity == nil {
		return 1
	}
	return *it.Quantity
}

func itemName(it SubscriptionItem) string {
	name := it.Description
	if name == "" {
		name = it.PriceID
	}
	if q := quantityOf(it); q != 1 {
		name = fmt.Sprintf("%d × %s", q, name)
	}
	return name
}

func containsItem(items []SubscriptionItem, it SubscriptionItem) bool {
	for _, o := range items {
		if o.PriceID == it.PriceID && o.UnitAmount == it.UnitAmount && quantityOf(o) == quantityOf(it) && o.PriceType == it.PriceType {
			return true
		}
	}
	return false
}

// UnusedOf is the part of amount, billed for [start, end), that falls after at (rounded half-up):
// what a change or a cancel at `at` gives back of it.
func UnusedOf(amount int64, start, end, at time.Time) int64 {
	remaining, total := RemainingShare(start, end, at)
	return ProrateAmount(amount, remaining, total)
}

// Overlaps reports whether a line billed for [start, end) bills time after at, within the period
// that starts at periodStart.
func Overlaps(start, end *time.Time, periodStart, at time.Time) bool {
	return start != nil && end != nil && !start.Before(periodStart) && end.After(at)
}
