package dashboard

import (
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/locale"
)

// A chart drawn on the server as SVG (no script, no inline style: the page's Content-Security-Policy
// allows neither). Its numbers come from chartOf, a pure function.

// chart is a bar chart: one bar per day, oldest first, scaled to the largest.
type chart struct {
	Width, Height int
	Bars          []bar
	Total         int64
	TotalLabel    string // Total in words (an amount of money, or a quantity)
	Title         string // what the chart shows, for its accessible title
	ID            string // unique on its page
	Currency      string
	From, To      time.Time
}

type bar struct {
	X, Y, W, H int
	Day        time.Time
	Amount     int64
	Label      string // the day and its amount, for the bar's title
}

const (
	chartWidth, chartHeight = 600, 160
	barGap                  = 4
)

// chartOf lays out the revenue of currency over the remit.RevenueDays days ending on now's UTC day.
// Days without revenue get an empty bar; other currencies are left out. format writes an amount
// (money, or a quantity of usage).
func chartOf(revenue []remit.DayRevenue, currency string, now time.Time, format func(int64) string) chart {
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
		day := from.AddDate(0, 0, i)
		c.Bars = append(c.Bars, bar{X: i * w, Y: chartHeight - h, W: w - barGap, H: h, Day: day, Amount: a,
			Label: day.Format("Jan 2") + ": " + format(a)})
	}
	c.TotalLabel = format(c.Total)
	return c
}

// moneyIn formats amounts of one currency.
func moneyIn(currency string) func(int64) string {
	return func(a int64) string { return money(a, currency) }
}

// quantity formats a quantity with digit grouping.
func quantity(n int64) string { return locale.For("en").Number(n) }
