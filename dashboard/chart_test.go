package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

func TestChartOf(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 30, 0, 0, time.UTC)
	day := func(d time.Time) int64 { return d.Unix() / 86400 }
	today := day(now)
	plotH := chartHeight - marginTop - marginBottom
	cases := []struct {
		name    string
		revenue []remit.DayRevenue
		want    map[int]int // bar index -> height
		total   int64
		ticks   []string // the value axis's labels, from 0 up
	}{
		{"nothing: one tick at zero", nil, map[int]int{0: 0, 29: 0}, 0, []string{"$0.00"}},
		{"today is the last bar; the axis climbs in round steps past the largest", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: 500}, {Day: today - 29, Currency: "USD", Amount: 250}},
			map[int]int{29: 500 * plotH / 600, 0: 250 * plotH / 600, 15: 0}, 750, []string{"$0.00", "$2.00", "$4.00", "$6.00"}},
		{"a round largest value is the axis's top", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: 100000}},
			map[int]int{29: plotH}, 100000, []string{"$0.00", "$250.00", "$500.00", "$750.00", "$1,000.00"}},
		{"other currencies and days outside are left out", []remit.DayRevenue{{Day: today, Currency: "EUR", Amount: 900}, {Day: today - 30, Currency: "USD", Amount: 900},
			{Day: today + 1, Currency: "USD", Amount: 900}, {Day: today - 1, Currency: "USD", Amount: 10}}, map[int]int{28: plotH, 29: 0}, 10,
			[]string{"$0.00", "$0.05", "$0.10"}},
		{"a small day stays visible", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: 1_000_000}, {Day: today - 2, Currency: "USD", Amount: 1}},
			map[int]int{27: 1, 29: plotH}, 1_000_001, []string{"$0.00", "$2,500.00", "$5,000.00", "$7,500.00", "$10,000.00"}},
		{"a negative day (a credit) draws no bar", []remit.DayRevenue{{Day: today, Currency: "USD", Amount: -300}, {Day: today - 1, Currency: "USD", Amount: 400}},
			map[int]int{28: plotH, 29: 0}, 100, []string{"$0.00", "$1.00", "$2.00", "$3.00", "$4.00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := chartOf(c.revenue, "USD", now, moneyIn("USD"))
			if len(ch.Bars) != remit.RevenueDays || ch.Total != c.total {
				t.Fatalf("%d bars, total %d; want %d, %d", len(ch.Bars), ch.Total, remit.RevenueDays, c.total)
			}
			base := marginTop + plotH
			for i, h := range c.want {
				if b := ch.Bars[i]; b.H != h || b.Y != base-h {
					t.Errorf("bar %d (%s): height %d at y %d, want %d", i, b.Day.Format("2006-01-02"), b.H, b.Y, h)
				}
			}
			var labels []string
			for i, tk := range ch.YTicks {
				labels = append(labels, tk.Label)
				// Evenly spaced from the zero line up, the last at the plot's top (when there is one step).
				if want := base - scale(tk.Value, ch.YTicks[len(ch.YTicks)-1].Value, plotH); tk.Pos != want || tk.Y != tk.Pos+4 || tk.X != marginLeft-6 {
					t.Errorf("value tick %d (%s) at %d (label %d,%d), want %d", i, tk.Label, tk.Pos, tk.X, tk.Y, want)
				}
			}
			if fmt.Sprint(labels) != fmt.Sprint(c.ticks) {
				t.Errorf("value axis %v, want %v", labels, c.ticks)
			}
			if len(ch.YTicks) > 1 && ch.YTicks[len(ch.YTicks)-1].Pos != marginTop {
				t.Errorf("the value axis's top at %d, want the plot's top %d", ch.YTicks[len(ch.YTicks)-1].Pos, marginTop)
			}
			if ch.TotalLabel != money(c.total, "USD") || ch.Bars[29].Label != "Nov 26: "+money(ch.Bars[29].Amount, "USD") {
				t.Errorf("labels %q, %q", ch.TotalLabel, ch.Bars[29].Label)
			}
			if !ch.Bars[29].Day.Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) || !ch.Bars[0].Day.Equal(time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("days %s to %s", ch.Bars[0].Day, ch.Bars[29].Day)
			}
			// The day axis: a label a week apart under its bar's center, and the last day.
			var days []string
			for _, tk := range ch.XTicks {
				days = append(days, tk.Label)
				if tk.Y <= base || tk.Y > chartHeight {
					t.Errorf("day %s labelled at y %d, outside the bottom margin", tk.Label, tk.Y)
				}
			}
			if want := "[Oct 28 Nov 4 Nov 11 Nov 18 Nov 26]"; fmt.Sprint(days) != want {
				t.Errorf("day axis %v, want %s", days, want)
			}
			if b, tk := ch.Bars[7], ch.XTicks[1]; tk.X != b.X+b.W/2 {
				t.Errorf("Nov 4 labelled at x %d, its bar spans %d to %d", tk.X, b.X, b.X+b.W)
			}
			if last := ch.Bars[29]; last.X+last.W > chartWidth-marginRight || ch.Bars[0].X != marginLeft {
				t.Errorf("bars from %d to %d, outside the plot %d..%d", ch.Bars[0].X, last.X+last.W, marginLeft, chartWidth-marginRight)
			}
		})
	}
}

func TestValueAxis(t *testing.T) {
	for _, c := range []struct{ top, step, axisTop int64 }{
		{0, 0, 0}, {-5, 0, 0}, {1, 1, 1}, {3, 1, 3}, {4, 1, 4}, {5, 2, 6}, {10, 5, 10}, {12, 5, 15}, {21, 10, 30}, {40, 10, 40},
		{41, 20, 60}, {99, 25, 100}, {500, 200, 600}, {999, 250, 1000}, {1000, 250, 1000}, {100_000, 25_000, 100_000},
		{123_456, 50_000, 150_000}, {1_000_001, 500_000, 1_500_000},
	} {
		step, top := valueAxis(c.top)
		if step != c.step || top != c.axisTop {
			t.Errorf("valueAxis(%d) = %d, %d; want %d, %d", c.top, step, top, c.step, c.axisTop)
		}
		if c.top > 0 && (top < c.top || top/step > valueTicks) {
			t.Errorf("valueAxis(%d): %d steps of %d to %d", c.top, top/step, step, top)
		}
	}
}
