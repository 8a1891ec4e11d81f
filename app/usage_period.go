package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// UsageInPeriod is the seam between invoicing and metering: the quantity a customer used of a
// meter in [from, to) on the merchant clock. Invoices price usage_metered lines with it on refresh
// and finalize. The usage capability (usage events and running totals) provides the figure; until
// then there is no usage and it is 0.
func (a *App) UsageInPeriod(ctx context.Context, q store.Q, scope remit.Scope, customerID, meterID string, from, to time.Time) (int64, error) {
	return 0, nil
}
