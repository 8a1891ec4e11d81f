package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// UsageInPeriod is the seam between invoicing and metering: the quantity a customer used of a
// meter in [from, to) on the merchant clock, aggregated as the meter aggregates (sum, count, max,
// unique_count, latest; a meter nobody created is a sum meter). Invoices price usage_metered lines
// with it on refresh and finalize.
//
// It reads the live (not voided) usage events of the customer and meter whose timestamp t
// satisfies from <= t < to (timestamps are kept to the microsecond; a bound with a finer fraction
// is rounded up, which keeps the comparison exact). Reading through q, it sees the caller's
// transaction when q is one. Its cost grows with the hours in the period (hourly pre-aggregates)
// and the events of at most two partial edge hours, never with the customer's whole history. An
// empty or inverted period is 0.
func (us *Usage) UsageInPeriod(ctx context.Context, q store.Q, m remit.MerchantAccount, customerID, meterID string, from, to time.Time) (int64, error) {
	agg, err := us.aggregationOf(ctx, q, m, meterID)
	if err != nil {
		return 0, err
	}
	return q.AggregateUsage(ctx, agg, m.ID, customerID, meterID, ceilMicros(from), ceilMicros(to))
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
