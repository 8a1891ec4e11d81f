package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// UsageInPeriod is the seam between invoicing and metering: the quantity a customer used of a
// meter in [from, to) on the merchant clock. Invoices price usage_metered lines with it on refresh
// and finalize.
//
// It sums the usage events of the customer and meter in the scope's merchant account whose
// timestamp t satisfies from <= t < to (timestamps are kept to the microsecond; a bound with a finer
// fraction is rounded up, which keeps the comparison exact). Reading through q, it sees the caller's
// transaction when q is one. Its cost grows with the hours in the period (hourly sums) and the events
// of at most two partial edge hours, never with the customer's whole history. An empty or inverted
// period is 0.
func (us *Usage) UsageInPeriod(ctx context.Context, q store.Q, scope remit.Scope, customerID, meterID string, from, to time.Time) (int64, error) {
	return q.SumUsage(ctx, scope.MerchantAccountID, customerID, meterID, ceilMicros(from), ceilMicros(to))
}

// ceilMicros is t in Unix microseconds, rounded up: for an integer u, u >= t exactly when
// u >= ceilMicros(t).
func ceilMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		us++
	}
	return us
}
