package remit

import (
	"testing"
	"time"
)

func TestRenewalNoticeAt(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	for _, c := range []struct {
		start, end, at string
		ok             bool
	}{
		{"2026-01-01", "2026-02-01", "2026-01-25", true},
		{"2026-01-01", "2027-01-01", "2026-12-25", true},
		{"2026-01-01", "2026-01-08", "", false}, // a week: its invoice is the notice
		{"2026-01-01", "2026-01-02", "", false},
	} {
		at, ok := RenewalNoticeAt(d(c.start), d(c.end))
		if ok != c.ok || ok && !at.Equal(d(c.at)) {
			t.Errorf("%s–%s: %v %v, want %s %v", c.start, c.end, at, ok, c.at, c.ok)
		}
	}
}

func TestRecurringAmountAndNextPeriod(t *testing.T) {
	q := func(n int64) *int64 { return &n }
	items := []SubscriptionItem{{UnitAmount: 1000, Quantity: q(3)}, {UnitAmount: 250, Quantity: q(1)}, {UnitAmount: 7}} // the last: metered
	if got := RecurringAmount(items); got != 3250 {
		t.Errorf("RecurringAmount = %d", got)
	}
	anchor := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	s := Subscription{BillingCycleAnchor: anchor, BillingInterval: "month", BillingIntervalCount: 1, CyclePeriods: 1}
	if got := NextPeriodEnd(s); !got.Equal(time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("NextPeriodEnd = %v", got)
	}
}
