package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Subscriptions (docs/quotes-and-subscriptions.md). A subscription comes from an accepted
// subscription_creation quote and renews on its interval on the merchant clock: a job at the end
// of each period rolls the period forward (applying the items of an accepted amendment), makes the
// period's draft invoice (fixed_recurring items in advance for the period that starts,
// usage_metered items in arrears for the period that ended), which finalizes itself an hour later,
// and schedules the next renewal. The lifecycle's actions (cancel, pause, resume, change) are in
// subscription_lifecycle.go, proration in proration.go.

// autoFinalizeDelay is how long after its creation a subscription's draft finalizes itself: the
// merchant's window to refresh or adjust it.
const autoFinalizeDelay = time.Hour

const (
	jobRenewSubscription = remit.JobSubscriptionRenew
	jobTrialEnding       = remit.JobTrialEnding
)

// renewJob names the period a renewal closes; a renewal whose period is no longer current (it
// already ran) does nothing.
type renewJob struct {
	SubscriptionID string    `json:"subscriptionId"`
	PeriodEnd      time.Time `json:"periodEnd"`
}

// subscriptionItems returns the recurring lines of a quote as subscription items.
func subscriptionItems(lines []remit.QuoteLine) []remit.SubscriptionItem {
	items := []remit.SubscriptionItem{}
	for _, l := range lines {
		if !remit.BillsEveryPeriod(l.PriceType) {
			continue
		}
		it := remit.SubscriptionItem{PriceID: l.PriceID, PriceType: l.PriceType, UnitAmount: l.UnitAmount, Description: l.Description}
		if l.Quantity != nil {
			q := *l.Quantity
			it.Quantity = &q
		}
		items = append(items, it)
	}
	return items
}

// itemsInterval is the billing interval of a set of recurring items (they share one; quote
// creation checked it).
func itemsInterval(ctx context.Context, q store.Q, m remit.MerchantAccount, items []remit.SubscriptionItem) (string, int64, error) {
	if len(items) == 0 {
		return "", 0, remit.Internal(fmt.Errorf("subscription without recurring items"))
	}
	price, err := q.GetPrice(ctx, m.ID, items[0].PriceID)
	if err != nil {
		return "", 0, err
	}
	if price.BillingInterval == nil {
		return "", 0, remit.Internal(fmt.Errorf("price %s of a subscription item has no interval", price.PriceID))
	}
	count := int64(1)
	if price.BillingIntervalCount != nil {
		count = *price.BillingIntervalCount
	}
	return *price.BillingInterval, count, nil
}

func itemLine(it remit.SubscriptionItem) remit.InvoiceLineInput {
	unit, desc := it.UnitAmount, it.Description
	in := remit.InvoiceLineInput{PriceID: it.PriceID, UnitAmount: &unit, Description: &desc, Agreed: true}
	if it.Quantity != nil {
		q := *it.Quantity
		in.Quantity = &q
	}
	return in
}

// startSubscription creates the active subscription of an accepted subscription_creation quote,
// its first draft invoice (when anything bills in advance), and schedules its first renewal.
func (qs *Quotes) startSubscription(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, qt remit.Quote, now time.Time) (remit.Subscription, error) {
	v := qt.Current()
	items := subscriptionItems(v.Lines)
	interval, count, err := itemsInterval(ctx, tx.Q, m, items)
	if err != nil {
		return remit.Subscription{}, err
	}
	quoteID := qt.QuoteID
	sub := remit.Subscription{Object: "subscription", SubscriptionID: remit.NewID("sub"), Status: remit.SubscriptionActive,
		CustomerID: qt.CustomerID, BillingAccountID: qt.BillingAccountID, Currency: qt.Currency, Items: items,
		BillingInterval: interval, BillingIntervalCount: count, BillingCycleAnchor: now, CyclePeriods: 1,
		CurrentPeriodStart: now, CurrentPeriodEnd: micro(remit.AddInterval(now, interval, count)), QuoteID: &quoteID,
		CouponIDs: append([]string{}, qt.CouponIDs...), Metadata: remit.CopyMetadata(qt.Metadata),
		Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	if days := v.TrialDays(); days > 0 {
		// A trial: the first period runs to the trial's end, its fixed lines billed at 0; the
		// first paid period starts a new cycle there.
		end := micro(now.Add(time.Duration(days) * 24 * time.Hour))
		sub.Status, sub.TrialEnd, sub.CurrentPeriodEnd = remit.SubscriptionTrialing, &end, end
	}
	// The first invoice: every line of the quote but usage, which has nothing to bill before the
	// first period ends.
	var billable []remit.QuoteLine
	for _, l := range v.Lines {
		if l.PriceType == remit.PriceFixedRecurring && sub.TrialEnd != nil {
			l.UnitAmount, l.Description = 0, l.Description+" (trial)"
		}
		if l.PriceType != remit.PriceUsageMetered {
			billable = append(billable, l)
		}
	}
	if len(billable) > 0 {
		period := [2]time.Time{sub.CurrentPeriodStart, sub.CurrentPeriodEnd}
		lines, periods := quoteInvoiceLines(billable, &period)
		for i, l := range billable {
			if l.PriceType == remit.PriceFixedRecurring && sub.TrialEnd != nil {
				lines[i].Agreed, lines[i].Trial = false, true // free during the trial, whatever the price's tiers
			}
		}
		fin := now.Add(autoFinalizeDelay)
		inv, err := qs.invoicing.CreateDraftInvoice(ctx, tx, m, remit.InvoiceDraftInput{CustomerID: sub.CustomerID, BillingAccountID: sub.BillingAccountID,
			Currency: sub.Currency, Lines: lines, LinePeriods: periods, PeriodStart: &period[0], PeriodEnd: &period[1],
			CouponIDs: sub.CouponIDs, SubscriptionID: &sub.SubscriptionID, QuoteID: &quoteID, AutoFinalizeAt: &fin}, now)
		if err != nil {
			return remit.Subscription{}, err
		}
		sub.LatestInvoiceID = &inv.InvoiceID
	}
	if err := duplicateAs(tx.InsertSubscription(ctx, sub), "subscription", "subscriptionId", sub.SubscriptionID); err != nil {
		return remit.Subscription{}, err
	}
	if err := qs.scheduleRenewal(ctx, tx, m, sub); err != nil {
		return remit.Subscription{}, err
	}
	if sub.TrialEnd != nil {
		notice := sub.TrialEnd.Add(-remit.TrialEndingNotice)
		if notice.Before(now) {
			notice = now
		}
		if err := qs.Schedule(ctx, tx, scopeOf(m), jobTrialEnding, notice, renewJob{SubscriptionID: sub.SubscriptionID, PeriodEnd: *sub.TrialEnd}); err != nil {
			return remit.Subscription{}, err
		}
	}
	return sub, qs.Emit(ctx, tx, scopeOf(m), now, remit.EventSubscriptionCreated, sub.SubscriptionID, sub)
}

// amendSubscription stores an accepted amendment's items and coupons as the subscription's
// pending terms, applied by the next renewal. A later amendment replaces an earlier pending one.
func (qs *Quotes) amendSubscription(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, qt remit.Quote, now time.Time) error {
	if qt.SubscriptionID == nil {
		return remit.Internal(fmt.Errorf("amendment quote %s names no subscription", qt.QuoteID))
	}
	sub, err := tx.GetSubscription(ctx, m.ID, *qt.SubscriptionID, store.Locked)
	err = remit.AtField(err, "subscriptionId")
	if err != nil {
		return err
	}
	if err := remit.CheckSubscriptionAction(sub, remit.ActionAmend); err != nil {
		return err
	}
	quoteID := qt.QuoteID
	sub.PendingItems = subscriptionItems(qt.Current().Lines)
	sub.PendingCouponIDs = append([]string{}, qt.CouponIDs...)
	sub.PendingQuoteID, sub.UpdatedAt = &quoteID, now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	return qs.Emit(ctx, tx, scopeOf(m), now, remit.EventSubscriptionUpdated, sub.SubscriptionID, sub)
}

// GetSubscription returns a subscription of the merchant account.
//
// Errors: not_found.
func (qs *Quotes) GetSubscription(ctx context.Context, m remit.MerchantAccount, subscriptionID string) (remit.Subscription, error) {
	return qs.DB.Read(ctx).GetSubscription(ctx, m.ID, subscriptionID, store.Unlocked)
}

// runRenewal closes the subscription's current period at its end (at): the next period starts,
// pending amendment terms take effect, the period's draft invoice is made (fixed items in advance,
// usage of the ended period in arrears, pending proration charges; auto-finalized an hour later)
// and the next renewal is scheduled (subscription.renewed). A trial's end starts the first paid
// period and a new cycle. A subscription set to cancel at this period's end ends instead: its last
// invoice bills the ended period's usage (subscription.canceled). Paused and canceled
// subscriptions do not renew.
func (qs *Quotes) runRenewal(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, p, sub, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p renewJob) (remit.Subscription, error) {
		return tx.GetSubscription(ctx, m.ID, p.SubscriptionID, store.Locked)
	})
	if !found || !sub.Status.Renews() || !sub.CurrentPeriodEnd.Equal(micro(p.PeriodEnd)) {
		return err // gone, renewed already, or no longer renewing
	}
	return qs.renew(ctx, tx, m, sub, micro(at))
}

// renew is the renewal of sub (locked in tx) at now: the body of runRenewal, which the upcoming
// invoice's preview (previews.go) runs too.
func (qs *Quotes) renew(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub remit.Subscription, now time.Time) error {
	ended := endedPeriod{start: sub.CurrentPeriodStart, end: sub.CurrentPeriodEnd, items: sub.Items}
	canceling := sub.CancelAt != nil && !sub.CancelAt.After(ended.end)
	event := remit.EventSubscriptionRenewed
	if canceling {
		sub.Status, sub.CanceledAt, sub.CancelAt, event = remit.SubscriptionCanceled, &ended.end, nil, remit.EventSubscriptionCanceled
	} else if err := qs.nextPeriod(ctx, tx, m, &sub); err != nil {
		return err
	}
	sub.UpdatedAt = now
	if err := qs.invoiceRenewal(ctx, tx, m, &sub, ended, canceling, now); err != nil {
		return err
	}
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	if !canceling {
		if err := qs.scheduleRenewal(ctx, tx, m, sub); err != nil {
			return err
		}
	}
	return qs.Emit(ctx, tx, scopeOf(m), now, event, sub.SubscriptionID, sub)
}

// endedPeriod is the period a renewal closes, with the items it had.
type endedPeriod struct {
	start, end time.Time
	items      []remit.SubscriptionItem
}

// nextPeriod rolls the subscription into its next period: pending amendment terms take effect (a
// new interval starts a new cycle), a trial's end starts the first paid period on a new cycle.
func (qs *Quotes) nextPeriod(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription) error {
	endedEnd := sub.CurrentPeriodEnd
	if sub.PendingItems != nil {
		interval, count, err := itemsInterval(ctx, tx.Q, m, sub.PendingItems)
		if err != nil {
			return err
		}
		if interval != sub.BillingInterval || count != sub.BillingIntervalCount {
			sub.BillingInterval, sub.BillingIntervalCount, sub.BillingCycleAnchor, sub.CyclePeriods = interval, count, endedEnd, 0
		}
		sub.Items, sub.CouponIDs = sub.PendingItems, sub.PendingCouponIDs
		sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID = nil, nil, nil
	}
	if sub.Status == remit.SubscriptionTrialing {
		sub.Status, sub.BillingCycleAnchor, sub.CyclePeriods = remit.SubscriptionActive, endedEnd, 0
	}
	sub.CyclePeriods++
	sub.CurrentPeriodStart = endedEnd
	sub.CurrentPeriodEnd = micro(remit.AddInterval(sub.BillingCycleAnchor, sub.BillingInterval, sub.BillingIntervalCount*sub.CyclePeriods))
	return nil
}

// invoiceRenewal makes a renewal's draft invoice: the new period's fixed items in advance (none
// when the subscription ends), the ended period's usage in arrears and the pending proration
// charges, which it clears.
func (qs *Quotes) invoiceRenewal(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, ended endedPeriod, ending bool, now time.Time) error {
	var lines []remit.InvoiceLineInput
	var periods []*[2]time.Time
	advance := [2]time.Time{sub.CurrentPeriodStart, sub.CurrentPeriodEnd}
	arrears := [2]time.Time{ended.start, ended.end}
	if !ending {
		for _, it := range sub.Items {
			if it.PriceType == remit.PriceFixedRecurring {
				lines, periods = append(lines, itemLine(it)), append(periods, &advance)
			}
		}
	}
	for _, it := range ended.items {
		if it.PriceType == remit.PriceUsageMetered {
			lines, periods = append(lines, itemLine(it)), append(periods, &arrears)
		}
	}
	pl, pp := pendingProrationLines(*sub)
	lines, periods, sub.PendingProrations = append(lines, pl...), append(periods, pp...), []remit.PendingProration{}
	if len(lines) == 0 {
		return nil
	}
	invPeriod := advance
	if ending {
		invPeriod = arrears
	}
	return qs.periodDraft(ctx, tx, m, sub, lines, periods, invPeriod, now)
}

// runTrialEnding emits subscription.trial_ending three days before a trial ends (at once for a
// shorter trial), if the subscription is still in that trial.
func (qs *Quotes) runTrialEnding(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, p, sub, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p renewJob) (remit.Subscription, error) {
		return tx.GetSubscription(ctx, m.ID, p.SubscriptionID, store.Unlocked)
	})
	if !found || sub.Status != remit.SubscriptionTrialing || sub.TrialEnd == nil || !sub.TrialEnd.Equal(micro(p.PeriodEnd)) {
		return err
	}
	return qs.Emit(ctx, tx, scopeOf(m), micro(at), remit.EventSubscriptionTrialEnding, sub.SubscriptionID, sub)
}

// registerJobs installs the subscriptions' job kinds: a renewal, a trial's end notice, a price
// migration's batch.
func (qs *Quotes) registerJobs() {
	qs.RegisterJob(jobRenewSubscription, qs.runRenewal)
	qs.RegisterJob(jobTrialEnding, qs.runTrialEnding)
	qs.registerMigrationJobs()
}
