package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The subscription lifecycle (docs/quotes-and-subscriptions.md "States"): list, cancel, pause,
// resume and change. Each action locks the subscription row, asks remit.CheckSubscriptionAction
// whether its state allows it, writes and emits in one transaction. The renewal job
// (subscriptions.go) reads the same row under the same lock, so an action and a renewal falling
// due at the same moment run one after the other, and the second sees the first's result.

// ListSubscriptions lists the merchant account's subscriptions, newest first, by customer and
// status.
//
// Errors: validation_failure (status, limit, cursor).
func (qs *Quotes) ListSubscriptions(ctx context.Context, m remit.MerchantAccount, in remit.SubscriptionQuery) (remit.List[remit.Subscription], error) {
	return listByStatus(ctx, qs.core, m, "subscriptions", in.ListQuery, in.Status, remit.SubscriptionStatuses, func(page store.ListPage) ([]remit.Subscription, error) {
		return qs.DB.Read(ctx).ListSubscriptions(ctx, m.ID, store.SubscriptionFilter{CustomerID: in.CustomerID, Status: in.Status, ListPage: page})
	})
}

// changeSubscription runs apply on the locked subscription after checking that its state allows
// action, stores it and emits typ.
func (qs *Quotes) changeSubscription(ctx context.Context, m remit.MerchantAccount, id, action string, typ remit.EventType,
	apply func(ctx context.Context, tx *store.Tx, sub *remit.Subscription, now time.Time) error) (remit.Subscription, error) {
	sub, err := change(ctx, qs.DB, lockedRow(m.ID, id, store.Q.GetSubscription), func(ctx context.Context, tx *store.Tx, sub *remit.Subscription) error {
		if err := remit.CheckSubscriptionAction(*sub, action); err != nil {
			return err
		}
		now := micro(qs.Now(m))
		if err := apply(ctx, tx, sub, now); err != nil {
			return err
		}
		sub.UpdatedAt = now
		if err := tx.UpdateSubscription(ctx, *sub); err != nil {
			return err
		}
		return qs.Emit(ctx, tx, scopeOf(m), now, typ, sub.SubscriptionID, *sub)
	})
	return sub, err
}

// CancelSubscription ends a subscription: at period_end it sets cancelAt (the renewal then ends it
// instead of renewing; subscription.updated); now it ends it at once (subscription.canceled) and,
// unless prorate is false, gives back the unused share of the current period's fixed items
// (cancelProrated).
//
// Errors: not_found, validation_failure (at), conflict (canceled already; period_end of a paused
// subscription, which has no period to end at; details.currentState).
func (qs *Quotes) CancelSubscription(ctx context.Context, m remit.MerchantAccount, id string, in remit.CancelInput) (remit.Subscription, error) {
	var p remit.Problems
	remit.CheckCancel(in, &p)
	if err := p.Err(); err != nil {
		return remit.Subscription{}, err
	}
	if in.At == remit.CancelAtPeriodEnd {
		return qs.changeSubscription(ctx, m, id, remit.ActionCancel, remit.EventSubscriptionUpdated, func(_ context.Context, _ *store.Tx, sub *remit.Subscription, _ time.Time) error {
			if sub.Status == remit.SubscriptionPaused {
				return remit.Errorf(remit.EConflict, "Subscription '%s' is paused: it has no period to end at. Cancel it now instead.", sub.SubscriptionID).
					With("currentState", sub.Status).With("reason", "invalid_state")
			}
			end := sub.CurrentPeriodEnd
			sub.CancelAt = &end
			return nil
		})
	}
	prorate := in.Prorate == nil || *in.Prorate
	return qs.changeSubscription(ctx, m, id, remit.ActionCancel, remit.EventSubscriptionCanceled, func(ctx context.Context, tx *store.Tx, sub *remit.Subscription, now time.Time) error {
		if err := qs.cancelProrated(ctx, tx, m, sub, prorate && sub.Status != remit.SubscriptionPaused, now); err != nil {
			return err
		}
		sub.Status, sub.CanceledAt, sub.CancelAt = remit.SubscriptionCanceled, &now, nil
		sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID = nil, nil, nil
		return nil
	})
}

// KeepSubscription undoes a cancel at the period's end: the subscription renews again
// (subscription.updated).
//
// Errors: not_found, conflict (not set to cancel, or its state allows no cancel; details.currentState).
func (qs *Quotes) KeepSubscription(ctx context.Context, m remit.MerchantAccount, id string) (remit.Subscription, error) {
	return qs.changeSubscription(ctx, m, id, remit.ActionCancel, remit.EventSubscriptionUpdated, func(_ context.Context, _ *store.Tx, sub *remit.Subscription, _ time.Time) error {
		if sub.CancelAt == nil {
			return remit.Errorf(remit.EConflict, "Subscription '%s' is not set to cancel: there is nothing to undo.", sub.SubscriptionID).
				With("currentState", sub.Status).With("reason", "not_canceling")
		}
		sub.CancelAt = nil
		return nil
	})
}

// PauseSubscription pauses an active subscription: no renewals and no invoices until it is
// resumed (subscription.paused).
//
// Errors: not_found, conflict (not active; details.currentState).
func (qs *Quotes) PauseSubscription(ctx context.Context, m remit.MerchantAccount, id string) (remit.Subscription, error) {
	return qs.changeSubscription(ctx, m, id, remit.ActionPause, remit.EventSubscriptionPaused, func(_ context.Context, _ *store.Tx, sub *remit.Subscription, now time.Time) error {
		sub.Status, sub.PausedAt, sub.CancelAt = remit.SubscriptionPaused, &now, nil
		return nil
	})
}

// ResumeSubscription resumes a paused subscription with a new period starting now (a new billing
// cycle anchored now): its fixed items are invoiced in advance for it, and its renewal is
// scheduled at its end (subscription.resumed).
//
// Errors: not_found, conflict (not paused; details.currentState).
func (qs *Quotes) ResumeSubscription(ctx context.Context, m remit.MerchantAccount, id string) (remit.Subscription, error) {
	return qs.changeSubscription(ctx, m, id, remit.ActionResume, remit.EventSubscriptionResumed, func(ctx context.Context, tx *store.Tx, sub *remit.Subscription, now time.Time) error {
		sub.Status, sub.PausedAt = remit.SubscriptionActive, nil
		sub.BillingCycleAnchor, sub.CyclePeriods = now, 1
		sub.CurrentPeriodStart, sub.CurrentPeriodEnd = now, micro(remit.AddInterval(now, sub.BillingInterval, sub.BillingIntervalCount))
		if err := qs.invoicePeriod(ctx, tx, m, sub, fixedLines(sub.Items), now); err != nil {
			return err
		}
		return qs.scheduleRenewal(ctx, tx, m, *sub)
	})
}

// fixedLines are the invoice lines of a subscription's fixed items for a period.
func fixedLines(items []remit.SubscriptionItem) []remit.InvoiceLineInput {
	var lines []remit.InvoiceLineInput
	for _, it := range items {
		if it.PriceType == remit.PriceFixedRecurring {
			lines = append(lines, itemLine(it))
		}
	}
	return lines
}

// invoicePeriod makes the draft invoice of lines for the subscription's current period, which
// finalizes itself an hour later, and names it the subscription's latest invoice.
func (qs *Quotes) invoicePeriod(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, lines []remit.InvoiceLineInput, now time.Time) error {
	if len(lines) == 0 {
		return nil
	}
	period := [2]time.Time{sub.CurrentPeriodStart, sub.CurrentPeriodEnd}
	periods := make([]*[2]time.Time, len(lines))
	for i := range periods {
		periods[i] = &period
	}
	return qs.periodDraft(ctx, tx, m, sub, lines, periods, period, now)
}

// periodDraft makes a subscription's draft invoice of lines (each with its period) for period,
// with the subscription's coupons, finalizing itself an hour later, and names it the
// subscription's latest invoice.
func (qs *Quotes) periodDraft(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, lines []remit.InvoiceLineInput,
	periods []*[2]time.Time, period [2]time.Time, now time.Time) error {
	fin := now.Add(autoFinalizeDelay)
	inv, err := qs.invoicing.CreateDraftInvoice(ctx, tx, m, remit.InvoiceDraftInput{CustomerID: sub.CustomerID, BillingAccountID: sub.BillingAccountID,
		Currency: sub.Currency, Lines: lines, LinePeriods: periods, PeriodStart: &period[0], PeriodEnd: &period[1],
		CouponIDs: sub.CouponIDs, SubscriptionID: &sub.SubscriptionID, AutoFinalizeAt: &fin}, now)
	if err != nil {
		return err
	}
	sub.LatestInvoiceID = &inv.InvoiceID
	return nil
}

// scheduleRenewal schedules the renewal at the end of the subscription's current period.
func (qs *Quotes) scheduleRenewal(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub remit.Subscription) error {
	if err := qs.Schedule(ctx, tx, scopeOf(m), jobRenewSubscription, sub.CurrentPeriodEnd, renewJob{SubscriptionID: sub.SubscriptionID, PeriodEnd: sub.CurrentPeriodEnd}); err != nil {
		return err
	}
	return qs.emails.scheduleRenewalNotice(ctx, tx, m, sub)
}

// cancelProrated settles a subscription canceled now: with prorate, the unused share of the
// current period's fixed items is given back (applyProration, credit note reason
// subscription_canceled) and pending proration charges are cut at now; the pending charges left
// (time used) are billed at once, since no renewal will bill them.
func (qs *Quotes) cancelProrated(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, prorate bool, now time.Time) error {
	if prorate {
		amounts, err := itemAmounts(ctx, tx.Q, m, sub.Items)
		if err != nil {
			return err
		}
		lines := remit.ProrateChange(sub.Items, nil, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, now, amounts)
		if err := qs.applyProration(ctx, tx, m, sub, lines, remit.ProrationCreate, remit.ReasonSubscriptionCanceled, now); err != nil {
			return err
		}
	}
	if len(sub.PendingProrations) == 0 {
		return nil
	}
	var charges []remit.ProrationLine
	for _, p := range sub.PendingProrations {
		charges = append(charges, remit.ProrationLine{Item: remit.SubscriptionItem{PriceID: p.PriceID}, Amount: p.Amount, From: p.PeriodStart,
			To: p.PeriodEnd, Description: p.Description})
	}
	sub.PendingProrations = []remit.PendingProration{}
	return qs.invoiceCharges(ctx, tx, m, sub, charges, now)
}

// ChangeSubscription replaces a subscription's items now. The items are checked against their
// catalog prices (recurring, in the subscription's currency and interval) and take the catalog's
// unit amounts. With create_prorations (the default) or always_invoice the change is prorated
// (applyProration); with none the new items simply bill from the next renewal. Emits
// subscription.updated.
//
// Errors: not_found (a price, details.field), validation_failure (every problem), conflict (paused
// or canceled; a new item's price archived; details.currentState).
func (qs *Quotes) ChangeSubscription(ctx context.Context, m remit.MerchantAccount, id string, in remit.ChangeInput) (remit.Subscription, error) {
	var p remit.Problems
	remit.CheckChange(in, &p)
	if err := p.Err(); err != nil {
		return remit.Subscription{}, err
	}
	behavior := in.ProrationBehavior
	if behavior == "" {
		behavior = remit.ProrationCreate
	}
	return qs.changeSubscription(ctx, m, id, remit.ActionChange, remit.EventSubscriptionUpdated, func(ctx context.Context, tx *store.Tx, sub *remit.Subscription, now time.Time) error {
		ids := make([]string, len(in.Items))
		for i, it := range in.Items {
			ids[i] = it.PriceID
		}
		prices, err := tx.GetPrices(ctx, m.ID, ids)
		if err != nil {
			return err
		}
		refs := make([]remit.PriceRef, len(in.Items))
		for i, it := range in.Items {
			if _, ok := prices[it.PriceID]; !ok {
				return remit.NotFound("price", it.PriceID, fmt.Sprintf("items[%d].priceId", i))
			}
			refs[i] = remit.PriceRef{PriceID: it.PriceID, Field: fmt.Sprintf("items[%d].priceId", i)}
		}
		if err := remit.CheckPricesNamed(prices, refs, itemPrices(sub)); err != nil {
			return err
		}
		var ip remit.Problems
		items := remit.ChangeItems(*sub, in.Items, prices, &ip)
		if err := ip.Err(); err != nil {
			return err
		}
		return qs.applyChange(ctx, tx, m, sub, items, in.Effective, behavior, now)
	})
}

// applyChange puts checked items on sub (locked in tx) as a change does, the one path of a change
// through the API and of a price migration (price_migrations.go): with next_renewal nothing
// changes before the renewal (the items wait as the pending change, price_change.go); now, a
// pending change is dropped, the change is prorated by behavior (nothing of a trial was billed)
// and the items are in force at once. The caller stores sub and emits.
func (qs *Quotes) applyChange(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, items []remit.SubscriptionItem,
	effective, behavior string, now time.Time) error {
	if effective == remit.ChangeNextRenewal {
		sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID = items, append([]string{}, sub.CouponIDs...), nil
		return nil
	}
	if remit.PendingChangeOf(*sub) != nil { // a change now replaces one that was waiting
		sub.PendingItems, sub.PendingCouponIDs = nil, nil
	}
	amounts, err := itemAmounts(ctx, tx.Q, m, append(slices.Clone(sub.Items), items...))
	if err != nil {
		return err
	}
	lines := remit.ProrateChange(sub.Items, items, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, now, amounts)
	if sub.Status == remit.SubscriptionTrialing {
		lines = nil // nothing of a trial was billed
	}
	notePreviewProrations(ctx, lines)
	if err := qs.applyProration(ctx, tx, m, sub, lines, behavior, remit.ReasonOrderChange, now); err != nil {
		return err
	}
	sub.Items = items
	return nil
}

// DeleteSubscriptionPendingChange drops the change a next_renewal change left pending: the
// subscription renews on its current items. Emits subscription.updated.
//
// Errors: not_found (the subscription; no pending change), conflict (paused or canceled).
func (qs *Quotes) DeleteSubscriptionPendingChange(ctx context.Context, m remit.MerchantAccount, id string) (remit.Subscription, error) {
	return qs.changeSubscription(ctx, m, id, remit.ActionChange, remit.EventSubscriptionUpdated, func(_ context.Context, _ *store.Tx, sub *remit.Subscription, _ time.Time) error {
		if remit.PendingChangeOf(*sub) == nil {
			return remit.Errorf(remit.ENotFound, "Subscription '%s' has no pending change.", id).With("resource", "pending_change")
		}
		sub.PendingItems, sub.PendingCouponIDs = nil, nil
		return nil
	})
}

// subscriptionPaymentOutcome moves an invoice's subscription with its payment: a failed charge
// makes an active (or trialing) subscription past_due (subscription.past_due); the invoice paid
// makes a past_due one active again (subscription.updated).
func (co *core) subscriptionPaymentOutcome(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, paid bool, now time.Time) error {
	if inv.SubscriptionID == nil {
		return nil
	}
	sub, err := tx.GetSubscription(ctx, m.ID, *inv.SubscriptionID, store.Locked)
	if err != nil {
		return err
	}
	var event remit.EventType
	switch {
	case !paid && (sub.Status == remit.SubscriptionActive || sub.Status == remit.SubscriptionTrialing):
		sub.Status, event = remit.SubscriptionPastDue, remit.EventSubscriptionPastDue
	case paid && sub.Status == remit.SubscriptionPastDue:
		sub.Status, event = remit.SubscriptionActive, remit.EventSubscriptionUpdated
	default:
		return nil
	}
	sub.UpdatedAt = now
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	return co.Emit(ctx, tx, scopeOf(m), now, event, sub.SubscriptionID, sub)
}

// itemAmounts prices one period of subscription items by their prices (remit.ItemAmounts).
func itemAmounts(ctx context.Context, q store.Q, m remit.MerchantAccount, items []remit.SubscriptionItem) (func(remit.SubscriptionItem) int64, error) {
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.PriceID)
	}
	prices, err := q.GetPrices(ctx, m.ID, ids)
	if err != nil {
		return nil, err
	}
	return remit.ItemAmounts(prices), nil
}
