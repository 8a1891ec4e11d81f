package remit

import "time"

// Monthly recurring revenue, as the dashboard draws it (docs/dashboard.md "MRR").

// BilledRecurring is a recurring line of a draft, open or paid invoice: what it bills (after
// discounts) for the period [Start, End).
type BilledRecurring struct {
	Start, End time.Time
	Currency   string
	Amount     int64
}

// averageMonth is the average Gregorian month: 365.2425 days / 12.
const averageMonth = 2_629_746 * time.Second

// MonthlyRate is what a billed line is worth per average month: its amount scaled from its period
// to a month (a yearly line counts a twelfth, a two-day proration its monthly rate). A line
// without a period of positive length is worth nothing.
func MonthlyRate(l BilledRecurring) int64 {
	d := l.End.Sub(l.Start)
	if d <= 0 {
		return 0
	}
	// amount × month / period, in seconds: both fit int64 for amounts up to MaxAmount and periods
	// of a second or more (MaxAmount × 2.6e6 < 9.2e18 needs MaxAmount < 3.5e12).
	secs := int64(d / time.Second)
	if secs == 0 {
		return 0
	}
	return l.Amount * int64(averageMonth/time.Second) / secs
}

// MRRByDay is the monthly recurring revenue of currency at the end of each of days UTC days from
// `from` (a UTC midnight), or at now for the day that holds it: the monthly rates of the lines
// whose period holds that moment. Days without any are absent.
func MRRByDay(lines []BilledRecurring, currency string, from time.Time, days int, now time.Time) []DayRevenue {
	var out []DayRevenue
	for i := range days {
		day := from.AddDate(0, 0, i)
		at := day.AddDate(0, 0, 1).Add(-time.Microsecond)
		if now.Before(at) {
			at = now
		}
		var sum int64
		for _, l := range lines {
			if l.Currency == currency && !at.Before(l.Start) && at.Before(l.End) {
				sum += MonthlyRate(l)
			}
		}
		if sum != 0 {
			out = append(out, DayRevenue{Day: day.Unix() / 86400, Currency: currency, Amount: sum})
		}
	}
	return out
}
