package remit

import (
	"fmt"
	"time"
)

// The subscription lifecycle's rules (docs/quotes-and-subscriptions.md "States"): which action each
// state allows, and the checks of the lifecycle routes' bodies. The engine (app/subscriptions.go)
// loads, asks these, writes and emits.

// SubscriptionStatuses lists the states, in lifecycle order.
var SubscriptionStatuses = []SubscriptionStatus{SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue, SubscriptionPaused, SubscriptionCanceled}

// Subscription actions.
const (
	ActionCancel = "canceled"
	ActionPause  = "paused"
	ActionResume = "resumed"
	ActionChange = "changed"
	ActionAmend  = "amended"
)

// Renews reports whether a subscription in state s bills its periods (trialing renews into its
// first paid period; paused and canceled do not renew).
func (s SubscriptionStatus) Renews() bool {
	return s == SubscriptionTrialing || s == SubscriptionActive || s == SubscriptionPastDue
}

// CheckSubscriptionAction answers 409 with currentState when sub's state forbids the action
// (SubscriptionStates).
func CheckSubscriptionAction(sub Subscription, action string) error {
	return SubscriptionStates.Check(sub.SubscriptionID, sub.Status, action)
}

// CancelInput is the body of POST /v1/subscriptions/{id}/cancel.
type CancelInput struct {
	At      string // period_end | now (required)
	Prorate *bool  // now only; default true
}

// Cancel timings.
const (
	CancelAtPeriodEnd = "period_end"
	CancelNow         = "now"
)

// CheckCancel records the problems of a cancel body.
func CheckCancel(in CancelInput, p *Problems) {
	switch in.At {
	case CancelAtPeriodEnd, CancelNow:
	case "":
		p.Body("at", "required", "at is required: period_end (the subscription ends when its current period does) or now.")
	default:
		p.Body("at", "invalid_enum", "at must be period_end or now.")
	}
}

// ChangeInput is the body of POST /v1/subscriptions/{id}/change.
type ChangeInput struct {
	Items             []ChangeItem
	ProrationBehavior string // create_prorations (default) | always_invoice | none
	Effective         string // now (default) | next_renewal (price_change.go)
}

// ChangeItem is one item of a subscription after a change.
type ChangeItem struct {
	PriceID  string
	Quantity *int64 // default 1; none for usage_metered prices
}

// Proration behaviors.
const (
	ProrationCreate = "create_prorations"
	ProrationAlways = "always_invoice"
	ProrationNone   = "none"
)

// CheckChange records the problems a change body shows on its own: its behavior, an empty or
// duplicate item list, quantities.
func CheckChange(in ChangeInput, p *Problems) {
	switch in.ProrationBehavior {
	case "", ProrationCreate, ProrationAlways, ProrationNone:
	default:
		p.Body("prorationBehavior", "invalid_enum", "prorationBehavior must be create_prorations, always_invoice or none.")
	}
	if in.Effective != "" && in.Effective != ChangeNow && in.Effective != ChangeNextRenewal {
		p.Body("effective", "invalid_enum", "effective must be now or next_renewal.")
	}
	if len(in.Items) == 0 {
		p.Body("items", "required", "A change needs at least one item: the subscription's items after it.")
	}
	seen := map[string]bool{}
	for i, it := range in.Items {
		field := fmt.Sprintf("items[%d]", i)
		if seen[it.PriceID] {
			p.Body(field+".priceId", "duplicate", fmt.Sprintf("Price '%s' is already an item of this change; give each price once, with its quantity.", it.PriceID))
		}
		seen[it.PriceID] = true
		if it.Quantity != nil && *it.Quantity < 1 {
			p.Body(field+".quantity", "out_of_range", "quantity must be at least 1.")
		}
	}
}

// ChangeItems checks a change's items against their catalog prices (each recurring, in the
// subscription's currency and billing interval; quantity not given for usage_metered) and answers
// them as subscription items at the catalog's unit amounts.
func ChangeItems(sub Subscription, in []ChangeItem, prices map[string]Price, p *Problems) []SubscriptionItem {
	var out []SubscriptionItem
	for i, it := range in {
		field := fmt.Sprintf("items[%d]", i)
		price, ok := prices[it.PriceID]
		if !ok {
			continue // not found: the engine answers 404 first
		}
		if !BillsEveryPeriod(price.PriceType) {
			p.Body(field+".priceId", "not_recurring", fmt.Sprintf("Price '%s' is %s; a subscription's items bill every period (fixed_recurring or usage_metered).", price.PriceID, price.PriceType))
			continue
		}
		if price.Currency != sub.Currency {
			p.Body(field+".priceId", "currency_mismatch", fmt.Sprintf("Price '%s' is in %s; the subscription bills in %s.", price.PriceID, price.Currency, sub.Currency))
		}
		interval, count := "", int64(1)
		if price.BillingInterval != nil {
			interval = *price.BillingInterval
		}
		if price.BillingIntervalCount != nil {
			count = *price.BillingIntervalCount
		}
		if interval != sub.BillingInterval || count != sub.BillingIntervalCount {
			p.Body(field+".priceId", "interval_mismatch", fmt.Sprintf("Price '%s' bills every %d %s; the subscription bills every %d %s.", price.PriceID, count, interval, sub.BillingIntervalCount, sub.BillingInterval))
		}
		item := SubscriptionItem{PriceID: price.PriceID, PriceType: price.PriceType, Description: price.Name}
		if price.UnitAmount != nil {
			item.UnitAmount = *price.UnitAmount
		}
		switch {
		case price.PriceType == PriceUsageMetered && it.Quantity != nil:
			p.Body(field+".quantity", "not_allowed", "quantity is measured for usage_metered prices; leave it out.")
		case price.PriceType != PriceUsageMetered:
			q := int64(1)
			if it.Quantity != nil {
				q = *it.Quantity
			}
			item.Quantity = &q
		}
		out = append(out, item)
	}
	return out
}

// TrialEndingNotice is how long before a trial ends subscription.trial_ending is emitted.
const TrialEndingNotice = 3 * 24 * time.Hour

// SubscriptionQuery is the subscriptions list's query, every value the raw query string.
type SubscriptionQuery struct {
	CustomerID, Status string
	ListQuery
}
