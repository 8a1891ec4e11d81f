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
