package dashboard

import (
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

func TestChartOf(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 30, 0, 0, time.UTC)
	day := func(d time.Time) int64 { return d.Unix() / 86400 }
	today := day(now)
	cases := []struct {
		name    string
		revenue []remit.DayRevenue
		want    map[int]int // bar index -> height
		total   int64
	}{
		{"nothing", nil, map[int]int{0: 0, 29: 0}, 0},
		{"today is the last bar, the largest is full height", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: 500}, {Day: today - 29, Currency: "USD", Amount: 250}},
			map[int]int{29: chartHeight, 0: chartHeight / 2, 15: 0}, 750},
		{"other currencies and days outside are left out", []remit.DayRevenue{{Day: today, Currency: "EUR", Amount: 900}, {Day: today - 30, Currency: "USD", Amount: 900},
			{Day: today + 1, Currency: "USD", Amount: 900}, {Day: today - 1, Currency: "USD", Amount: 10}}, map[int]int{28: chartHeight, 29: 0}, 10},
		{"a small day stays visible", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: 1_000_000}, {Day: today - 2, Currency: "USD", Amount: 1}},
			map[int]int{27: 1, 29: chartHeight}, 1_000_001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := chartOf(c.revenue, "USD", now, moneyIn("USD"))
			if len(ch.Bars) != remit.RevenueDays || ch.Total != c.total {
				t.Fatalf("%d bars, total %d; want %d, %d", len(ch.Bars), ch.Total, remit.RevenueDays, c.total)
			}
			for i, h := range c.want {
				if b := ch.Bars[i]; b.H != h || b.Y != chartHeight-h {
					t.Errorf("bar %d (%s): height %d at y %d, want %d", i, b.Day.Format("2006-01-02"), b.H, b.Y, h)
				}
			}
			if ch.TotalLabel != money(c.total, "USD") || ch.Bars[29].Label != "Nov 26: "+money(ch.Bars[29].Amount, "USD") {
				t.Errorf("labels %q, %q", ch.TotalLabel, ch.Bars[29].Label)
			}
			if !ch.Bars[29].Day.Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) || !ch.Bars[0].Day.Equal(time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("days %s to %s", ch.Bars[0].Day, ch.Bars[29].Day)
			}
		})
	}
}
