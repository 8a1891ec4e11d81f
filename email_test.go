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

func TestEmailDelivery(t *testing.T) {
	addr := "ap@example.com"
	for _, c := range []struct {
		to     *string
		smtp   bool
		status EmailStatus
		reason string
	}{
		{&addr, true, EmailQueued, ""},
		{&addr, false, EmailSkipped, SkipNoSMTP},
		{nil, true, EmailSkipped, SkipNoAddress},
		{nil, false, EmailSkipped, SkipNoAddress},
	} {
		st, why := EmailDelivery(c.to, c.smtp)
		if st != c.status || (why == nil) != (c.reason == "") || why != nil && *why != c.reason {
			t.Errorf("to %v smtp %v: %s %v, want %s %q", c.to != nil, c.smtp, st, why, c.status, c.reason)
		}
	}
}

func TestWhoIsMailed(t *testing.T) {
	if !MailsInvoice(SendInvoice) || MailsInvoice(ChargeAutomatically) {
		t.Error("MailsInvoice: send_invoice only")
	}
	if !MailsReceipt(MethodCard) || MailsReceipt("out_of_band") {
		t.Error("MailsReceipt: card payments only")
	}
	end := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	cancelAt := end
	for _, c := range []struct {
		name string
		s    Subscription
		at   time.Time
		want bool
	}{
		{"active, same period", Subscription{Status: SubscriptionActive, CurrentPeriodEnd: end}, end, true},
		{"trialing", Subscription{Status: SubscriptionTrialing, CurrentPeriodEnd: end}, end, true},
		{"another period", Subscription{Status: SubscriptionActive, CurrentPeriodEnd: end.AddDate(0, 1, 0)}, end, false},
		{"set to cancel", Subscription{Status: SubscriptionActive, CurrentPeriodEnd: end, CancelAt: &cancelAt}, end, false},
		{"paused", Subscription{Status: SubscriptionPaused, CurrentPeriodEnd: end}, end, false},
		{"past_due", Subscription{Status: SubscriptionPastDue, CurrentPeriodEnd: end}, end, false},
		{"canceled", Subscription{Status: SubscriptionCanceled, CurrentPeriodEnd: end}, end, false},
	} {
		if got := RenewalNoticeHolds(c.s, c.at); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
