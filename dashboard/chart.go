package dashboard

import (
	"time"

	"github.com/remit-billing/remit"
)

// A chart drawn on the server as SVG (no script, no inline style: the page's Content-Security-Policy
// allows neither). Its numbers come from chartOf, a pure function.

// chart is a bar chart: one bar per day, oldest first, scaled to the largest.
type chart struct {
	Width, Height int
	Bars          []bar
	Total         int64
	Currency      string
	From, To      time.Time
}

type bar struct {
	X, Y, W, H int
	Day        time.Time
	Amount     int64
}

const (
	chartWidth, chartHeight = 600, 160
	barGap                  = 4
)

// chartOf lays out the revenue of currency over the remit.RevenueDays days ending on now's UTC day.
// Days without revenue get an empty bar; other currencies are left out.
func chartOf(revenue []remit.DayRevenue, currency string, now time.Time) chart {
	to := now.UTC().Truncate(24 * time.Hour)
	from := to.AddDate(0, 0, -(remit.RevenueDays - 1))
	first := from.Unix() / 86400
	amounts := make([]int64, remit.RevenueDays)
	c := chart{Width: chartWidth, Height: chartHeight, Currency: currency, From: from, To: to}
	var top int64
	for _, d := range revenue {
		i := d.Day - first
		if d.Currency != currency || i < 0 || i >= remit.RevenueDays {
			continue
		}
		amounts[i] += d.Amount
		c.Total += d.Amount
		top = max(top, amounts[i])
	}
	w := chartWidth / remit.RevenueDays
	for i, a := range amounts {
		h := 0
		if top > 0 {
			h = int(a * int64(chartHeight) / top)
		}
		if a > 0 && h == 0 {
			h = 1 // a day with revenue is never invisible
		}
		c.Bars = append(c.Bars, bar{X: i * w, Y: chartHeight - h, W: w - barGap, H: h, Day: from.AddDate(0, 0, i), Amount: a})
	}
	return c
}
