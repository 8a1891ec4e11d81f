package dashboard

import (
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
)

// A chart drawn on the server as SVG (no script, no inline style: the page's Content-Security-Policy
// allows neither). Its numbers come from chartOf, a pure function: the bars, and the axes with
// their labelled values (amounts on the left, at round steps from 0; days under the bars).

// chart is a bar chart: one bar per day, oldest first, scaled to the top of its value axis.
type chart struct {
	Width, Height int
	// The plot area, inside the axes' labels: bars stand on its bottom edge (the zero line).
	PlotX, PlotY, PlotW, PlotH int
	Base                       int // the zero line's y: PlotY + PlotH
	Bars                       []bar
	YTicks                     []tick // the value axis, from 0 up: a gridline and its value each
	XTicks                     []tick // the day axis: a day's label under its bar, a week apart
	Total                      int64
	TotalLabel                 string // Total in words (an amount of money, or a quantity)
	Title                      string // what the chart shows, for its accessible title
	ID                         string // unique on its page
	Currency                   string
	From, To                   time.Time
}

type bar struct {
	X, Y, W, H int
	Day        time.Time
	Amount     int64
	Label      string // the day and its amount, for the bar's title
}

// tick is a labelled value of an axis.
type tick struct {
	Pos   int    // the value axis: its gridline's y; the day axis: its bar's center x
	X, Y  int    // where its label's text is anchored (the value axis: right-aligned; days: centered)
	Label string // the value (money or a quantity), or the day (Jan 2)
	Value int64  // the value axis: the amount
}

const (
	chartWidth, chartHeight = 600, 200
	// The margins hold the labels: the values on the left, the days at the bottom.
	marginLeft, marginRight, marginTop, marginBottom = 76, 8, 10, 26
	barGap                                           = 4
	valueTicks                                       = 4 // about as many steps up the value axis
	dayTickEvery                                     = 7 // a day's label every week (and on the last day)
)

// chartOf lays out the revenue of currency over the remit.RevenueDays days ending on now's UTC day.
// Days without revenue get an empty bar; other currencies are left out. format writes an amount
// (money, or a quantity of usage), on the value axis and in the bars' titles.
func chartOf(revenue []remit.DayRevenue, currency string, now time.Time, format func(int64) string) chart {
	to := now.UTC().Truncate(24 * time.Hour)
	from := to.AddDate(0, 0, -(remit.RevenueDays - 1))
	first := from.Unix() / 86400
	amounts := make([]int64, remit.RevenueDays)
	c := chart{Width: chartWidth, Height: chartHeight, Currency: currency, From: from, To: to,
		PlotX: marginLeft, PlotY: marginTop, PlotW: chartWidth - marginLeft - marginRight, PlotH: chartHeight - marginTop - marginBottom}
	var top int64
	for _, d := range revenue {
		i := d.Day - first
		if d.Currency != currency || i < 0 || i >= remit.RevenueDays {
			continue
		}
		amounts[i] += d.Amount
		c.Total += d.Amount
	}
	for _, a := range amounts {
		top = max(top, a)
	}
	step, axisTop := valueAxis(top)
	base := c.PlotY + c.PlotH
	c.Base = base
	for v := int64(0); ; v += step {
		y := base - scale(v, axisTop, c.PlotH)
		c.YTicks = append(c.YTicks, tick{Pos: y, X: c.PlotX - 6, Y: y + 4, Label: format(v), Value: v})
		if step == 0 || v >= axisTop {
			break
		}
	}
	w := c.PlotW / remit.RevenueDays
	for i, a := range amounts {
		h := scale(max(a, 0), axisTop, c.PlotH)
		if a > 0 && h == 0 {
			h = 1 // a day with revenue is never invisible
		}
		day := from.AddDate(0, 0, i)
		x := c.PlotX + i*w
		c.Bars = append(c.Bars, bar{X: x, Y: base - h, W: w - barGap, H: h, Day: day, Amount: a,
			Label: day.Format("Jan 2") + ": " + format(a)})
		if i%dayTickEvery == 0 && i+dayTickEvery/2 < remit.RevenueDays || i == remit.RevenueDays-1 {
			center := x + (w-barGap)/2
			c.XTicks = append(c.XTicks, tick{Pos: center, X: center, Y: base + 17, Label: day.Format("Jan 2")})
		}
	}
	c.TotalLabel = format(c.Total)
	return c
}

// scale is v's height in a plot of height h whose top is axisTop.
func scale(v, axisTop int64, h int) int {
	if axisTop <= 0 {
		return 0
	}
	return int(v * int64(h) / axisTop)
}

// valueAxis is the value axis of a chart whose largest value is top: the smallest round step (1,
// 2, 2.5 or 5 times a power of ten, in whole units) that climbs past top in at most valueTicks
// steps, and the axis's top, the first multiple of it at or above top. Nothing to show (top ≤ 0):
// step 0, top 0, one tick at 0.
func valueAxis(top int64) (step, axisTop int64) {
	if top <= 0 {
		return 0, 0
	}
	raw := (top + valueTicks - 1) / valueTicks
	for mag := int64(1); ; mag *= 10 {
		steps := []int64{mag, 2 * mag, 5 * mag}
		if mag >= 10 { // 2.5 steps in whole units
			steps = []int64{mag, 2 * mag, 25 * mag / 10, 5 * mag}
		}
		for _, s := range steps {
			if s >= raw {
				return s, (top + s - 1) / s * s
			}
		}
	}
}

// moneyIn formats amounts of one currency.
func moneyIn(currency string) func(int64) string {
	return func(a int64) string { return money(a, currency) }
}

// quantity formats a quantity with digit grouping.
func quantity(n int64) string { return locale.For("en").Number(n) }
