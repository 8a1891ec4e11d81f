package remit

import (
	"testing"
	"time"
)

func TestMonthlyRate(t *testing.T) {
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name string
		l    BilledRecurring
		want int64
	}{
		{"a 30-day month of 90.00", BilledRecurring{Start: d(2026, 11, 1), End: d(2026, 12, 1), Amount: 9000}, 9131},
		{"a 31-day month of 90.00", BilledRecurring{Start: d(2026, 12, 1), End: d(2027, 1, 1), Amount: 9000}, 8836},
		{"a year of 1,200.00 is 100.00 a month", BilledRecurring{Start: d(2026, 1, 1), End: d(2027, 1, 1), Amount: 120000}, 10006},
		{"a proration credit lowers the rate", BilledRecurring{Start: d(2026, 11, 16), End: d(2026, 12, 1), Amount: -4500}, -9131},
		{"no period", BilledRecurring{Start: d(2026, 11, 1), End: d(2026, 11, 1), Amount: 9000}, 0},
		{"an inverted period", BilledRecurring{Start: d(2026, 12, 1), End: d(2026, 11, 1), Amount: 9000}, 0},
		{"the largest amount over one second does not overflow", BilledRecurring{Start: d(2026, 1, 1), End: d(2026, 1, 1).Add(time.Second), Amount: MaxAmount}, MaxAmount * 2_629_746},
	}
	for _, c := range cases {
		if got := MonthlyRate(c.l); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMRRByDay(t *testing.T) {
	d := func(m time.Month, day int) time.Time { return time.Date(2026, m, day, 0, 0, 0, 0, time.UTC) }
	lines := []BilledRecurring{
		{Start: d(11, 1), End: d(12, 1), Currency: "USD", Amount: 9000},                                           // 9131 a month, all November
		{Start: d(11, 10), End: d(12, 10), Currency: "USD", Amount: 3000},                                         // from the 10th: 3043 a month
		{Start: d(11, 1), End: d(12, 1), Currency: "EUR", Amount: 5000},                                           // another currency
		{Start: d(11, 20).Add(12 * time.Hour), End: d(12, 20).Add(12 * time.Hour), Currency: "USD", Amount: 3000}, // from noon on the 20th
	}
	later := d(12, 31)
	cases := []struct {
		name string
		from time.Time
		days int
		now  time.Time
		want []int64 // the days' amounts, absent days left out
	}{
		{"before and into November, each day at its end", d(10, 30), 4, later, []int64{9131, 9131}},
		{"with the second line", d(11, 10), 1, later, []int64{9131 + 3043}},
		{"after the first period", d(12, 1), 1, later, []int64{3043 + 3043}},
		{"a line that starts at noon counts on its day's end", d(11, 20), 1, later, []int64{9131 + 3043 + 3043}},
		{"today counts at now: before noon, not yet", d(11, 20), 1, d(11, 20).Add(11 * time.Hour), []int64{9131 + 3043}},
		{"nothing", d(1, 1), 3, later, nil},
	}
	for _, c := range cases {
		var got []int64
		for _, day := range MRRByDay(lines, "USD", c.from, c.days, c.now) {
			got = append(got, day.Amount)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}
