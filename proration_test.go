package remit

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestRemainingShareAndProrateAmount(t *testing.T) {
	for _, c := range []struct {
		name            string
		start, end, at  time.Time
		amount, want    int64
		remaining, secs int64
	}{
		{"half of a 30-day month", day(2026, 4, 1), day(2026, 5, 1), day(2026, 4, 16), 4900, 2450, 15 * 86400, 30 * 86400},
		{"at the very start: all of it", day(2026, 4, 1), day(2026, 5, 1), day(2026, 4, 1), 4900, 4900, 30 * 86400, 30 * 86400},
		{"before the start: all of it", day(2026, 4, 1), day(2026, 5, 1), day(2026, 3, 20), 4900, 4900, 30 * 86400, 30 * 86400},
		{"at the very end: nothing", day(2026, 4, 1), day(2026, 5, 1), day(2026, 5, 1), 4900, 0, 0, 30 * 86400},
		{"after the end: nothing", day(2026, 4, 1), day(2026, 5, 1), day(2026, 6, 1), 4900, 0, 0, 30 * 86400},
		{"one second left", day(2026, 4, 1), day(2026, 5, 1), day(2026, 5, 1).Add(-time.Second), 2592000, 1, 1, 30 * 86400},
		// February of a leap year has 29 days: 14 of 29 left of 2900 is 1400.
		{"leap February", day(2028, 2, 1), day(2028, 3, 1), day(2028, 2, 16), 2900, 1400, 14 * 86400, 29 * 86400},
		{"February of a common year", day(2026, 2, 1), day(2026, 3, 1), day(2026, 2, 15), 2800, 1400, 14 * 86400, 28 * 86400},
		// Half-up: 1 of 3 days of 100 is 33.33 → 33; 2 of 3 is 66.67 → 67; 1 of 2 of 1 is 0.5 → 1.
		{"rounds down below a half", day(2026, 1, 1), day(2026, 1, 4), day(2026, 1, 3), 100, 33, 86400, 3 * 86400},
		{"rounds up above a half", day(2026, 1, 1), day(2026, 1, 4), day(2026, 1, 2), 100, 67, 2 * 86400, 3 * 86400},
		{"a half rounds up", day(2026, 1, 1), day(2026, 1, 3), day(2026, 1, 2), 1, 1, 86400, 2 * 86400},
		// A month-end anchor: Jan 31 → Feb 28 is 28 days.
		{"month end anchor", day(2026, 1, 31), day(2026, 2, 28), day(2026, 2, 14), 2800, 1400, 14 * 86400, 28 * 86400},
		{"zero amount", day(2026, 4, 1), day(2026, 5, 1), day(2026, 4, 16), 0, 0, 15 * 86400, 30 * 86400},
		// JPY has no minor unit: 9,800 yen a year, 100 days of 365 left: 2,684.9 → 2,685 yen.
		{"JPY over a year", day(2026, 1, 1), day(2027, 1, 1), day(2026, 9, 23), 9800, 2685, 100 * 86400, 365 * 86400},
		{"the largest amount", day(2026, 1, 1), day(2026, 1, 3), day(2026, 1, 2), MaxAmount, MaxAmount/2 + 1, 86400, 2 * 86400},
	} {
		t.Run(c.name, func(t *testing.T) {
			rem, total := RemainingShare(c.start, c.end, c.at)
			if rem != c.remaining || total != c.secs {
				t.Fatalf("share %d/%d, want %d/%d", rem, total, c.remaining, c.secs)
			}
			if got := ProrateAmount(c.amount, rem, total); got != c.want {
				t.Fatalf("prorated %d, want %d", got, c.want)
			}
		})
	}
}

func TestProrateChange(t *testing.T) {
	q := func(n int64) *int64 { return &n }
	pro := SubscriptionItem{PriceID: "pro", PriceType: PriceFixedRecurring, Quantity: q(1), UnitAmount: 3000, Description: "Pro"}
	team := SubscriptionItem{PriceID: "team", PriceType: PriceFixedRecurring, Quantity: q(1), UnitAmount: 9000, Description: "Team"}
	seats3 := SubscriptionItem{PriceID: "seat", PriceType: PriceFixedRecurring, Quantity: q(3), UnitAmount: 1000, Description: "Seat"}
	seats5 := SubscriptionItem{PriceID: "seat", PriceType: PriceFixedRecurring, Quantity: q(5), UnitAmount: 1000, Description: "Seat"}
	api := SubscriptionItem{PriceID: "api", PriceType: PriceUsageMetered, UnitAmount: 2, Description: "API calls"}
	free := SubscriptionItem{PriceID: "free", PriceType: PriceFixedRecurring, Quantity: q(1), UnitAmount: 0, Description: "Free"}
	start, end := day(2026, 3, 1), day(2026, 3, 31) // 30 days
	at := day(2026, 3, 11)                          // 20 days left
	type line struct {
		credit bool
		amount int64
		desc   string
	}
	for _, c := range []struct {
		name     string
		old, new []SubscriptionItem
		at       time.Time
		want     []line
	}{
		{"upgrade", []SubscriptionItem{pro, api}, []SubscriptionItem{team, api}, at, []line{
			{true, 2000, "Unused time on Pro from 11 Mar 2026 to 31 Mar 2026"},
			{false, 6000, "Remaining time on Team from 11 Mar 2026 to 31 Mar 2026"}}},
		{"more seats", []SubscriptionItem{seats3}, []SubscriptionItem{seats5}, at, []line{
			{true, 2000, "Unused time on 3 × Seat from 11 Mar 2026 to 31 Mar 2026"},
			{false, 3333, "Remaining time on 5 × Seat from 11 Mar 2026 to 31 Mar 2026"}}},
		{"unchanged items are not prorated", []SubscriptionItem{pro, seats3}, []SubscriptionItem{pro, seats5}, at, []line{
			{true, 2000, "Unused time on 3 × Seat from 11 Mar 2026 to 31 Mar 2026"},
			{false, 3333, "Remaining time on 5 × Seat from 11 Mar 2026 to 31 Mar 2026"}}},
		{"usage and zero-amount items are not", []SubscriptionItem{pro, api}, []SubscriptionItem{free}, at, []line{
			{true, 2000, "Unused time on Pro from 11 Mar 2026 to 31 Mar 2026"}}},
		{"at the end of the period: nothing", []SubscriptionItem{pro}, []SubscriptionItem{team}, end, nil},
		{"at the start: whole periods", []SubscriptionItem{pro}, []SubscriptionItem{team}, start, []line{
			{true, 3000, "Unused time on Pro from 1 Mar 2026 to 31 Mar 2026"},
			{false, 9000, "Remaining time on Team from 1 Mar 2026 to 31 Mar 2026"}}},
		{"no change", []SubscriptionItem{pro}, []SubscriptionItem{pro}, at, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ProrateChange(c.old, c.new, start, end, c.at, nil)
			if len(got) != len(c.want) {
				t.Fatalf("lines %+v, want %+v", got, c.want)
			}
			for i, w := range c.want {
				if got[i].Credit != w.credit || got[i].Amount != w.amount || got[i].Description != w.desc {
					t.Fatalf("line %d: %+v, want %+v", i, got[i], w)
				}
			}
		})
	}
}

// Prorations of prices priced by tiers or packages: each item's whole period is priced by the
// price's own pricing (ItemAmounts → LineAmount), across tier boundaries, then prorated.
func TestProrateChangeTieredAndPackaged(t *testing.T) {
	q := func(n int64) *int64 { return &n }
	up := func(n int64) *int64 { return &n }
	graduated, volume := TiersGraduated, TiersVolume
	tiers := []Tier{{UpTo: up(2), UnitAmount: 1000}, {UpTo: up(5), UnitAmount: 700, FlatAmount: 100}, {UnitAmount: 500}}
	prices := map[string]Price{
		"grad": {PriceID: "grad", PriceType: PriceFixedRecurring, Tiers: tiers, TiersMode: &graduated},
		"vol":  {PriceID: "vol", PriceType: PriceFixedRecurring, Tiers: tiers, TiersMode: &volume},
		"pack": {PriceID: "pack", PriceType: PriceFixedRecurring, UnitAmount: q(2500), TransformQuantity: &TransformQuantity{DivideBy: 5, Round: "up"}},
	}
	item := func(price string, n int64) SubscriptionItem { // as a subscription holds it: a tiered item has no unit amount
		it := SubscriptionItem{PriceID: price, PriceType: PriceFixedRecurring, Quantity: q(n), Description: price}
		if p := prices[price]; p.UnitAmount != nil {
			it.UnitAmount = *p.UnitAmount
		}
		return it
	}
	start, end := day(2026, 3, 1), day(2026, 3, 31) // 30 days
	at := day(2026, 3, 11)                          // 20 of 30 days left: two thirds
	for _, c := range []struct {
		name                  string
		from, to              SubscriptionItem
		credit, charge        int64
		wholeOld, wholeCharge int64 // the whole periods, for the reader
	}{
		// graduated: 2 × 1000 = 2000; 4 → 2000 + 2 × 700 + 100 = 3500; 7 → 2000 + 3 × 700 + 100 + 2 × 500 = 5200.
		{"graduated within the first tier to the second", item("grad", 2), item("grad", 4), 1333, 2333, 2000, 3500},
		{"graduated across two boundaries", item("grad", 2), item("grad", 7), 1333, 3467, 2000, 5200},
		{"graduated down a tier", item("grad", 7), item("grad", 1), 3467, 667, 5200, 1000},
		// volume: 2 → 2 × 1000 = 2000; 4 → 4 × 700 + 100 = 2900; 7 → 7 × 500 = 3500 (cheaper per seat).
		{"volume into the second tier", item("vol", 2), item("vol", 4), 1333, 1933, 2000, 2900},
		{"volume into the last tier", item("vol", 4), item("vol", 7), 1933, 2333, 2900, 3500},
		// packages of 5, rounded up: 2 → 1 pack 2500, 7 → 2 packs 5000; 5 → 1 pack.
		{"packages: one more pack", item("pack", 2), item("pack", 7), 1667, 3333, 2500, 5000},
		{"packages: same pack count still prorates (quantity changed)", item("pack", 2), item("pack", 5), 1667, 1667, 2500, 2500},
	} {
		t.Run(c.name, func(t *testing.T) {
			amounts := ItemAmounts(prices)
			if got := amounts(c.from); got != c.wholeOld {
				t.Fatalf("whole period of %v: %d, want %d", c.from, got, c.wholeOld)
			}
			if got := amounts(c.to); got != c.wholeCharge {
				t.Fatalf("whole period of %v: %d, want %d", c.to, got, c.wholeCharge)
			}
			got := ProrateChange([]SubscriptionItem{c.from}, []SubscriptionItem{c.to}, start, end, at, amounts)
			if len(got) != 2 || !got[0].Credit || got[0].Amount != c.credit || got[1].Credit || got[1].Amount != c.charge {
				t.Fatalf("lines %+v, want credit %d and charge %d", got, c.credit, c.charge)
			}
		})
	}
}

// A proration charge on a price priced by tiers or packages is billed as the engine priced it;
// the same unit amount from a caller is refused.
func TestPriceLineProratedCharge(t *testing.T) {
	up := func(n int64) *int64 { return &n }
	graduated := TiersGraduated
	price := Price{PriceID: "grad", PriceType: PriceFixedRecurring, Currency: "USD",
		Tiers: []Tier{{UpTo: up(2), UnitAmount: 1000}, {UnitAmount: 700}}, TiersMode: &graduated}
	one, amount := int64(1), int64(2333)
	var p Problems
	got := PriceLine(ForInvoice, "lines[0]", "USD", price, InvoiceLineInput{PriceID: "grad", Quantity: &one, UnitAmount: &amount, Prorated: true}, &p)
	if p.Err() != nil || got.Amount != 2333 || got.Quantity != 1 || !got.UnitOverride || got.Breakdown != nil {
		t.Fatalf("prorated charge: %+v, %v", got, p.Err())
	}
	var p2 Problems
	PriceLine(ForInvoice, "lines[0]", "USD", price, InvoiceLineInput{PriceID: "grad", Quantity: &one, UnitAmount: &amount}, &p2)
	if p2.Err() == nil {
		t.Fatal("a caller's unitAmount on a tiered price was accepted")
	}
}
