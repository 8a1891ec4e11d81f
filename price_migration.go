package remit

import (
	"fmt"
	"slices"
	"time"
)

// Price migrations (docs/price-changes.md "Price migrations"): every live subscription item on
// one price moved to another, in the background, in batches, each subscription once. The rules
// here are pure: which request is valid (CheckPriceMigrationRequest, CheckMigrationPrices), what
// a migration does to one subscription (PlanSubscriptionMigration) and how its counts add up
// (PriceMigration.Record).

// Price migration states.
type PriceMigrationStatus string

const (
	PriceMigrationRunning   PriceMigrationStatus = "running"
	PriceMigrationCompleted PriceMigrationStatus = "completed"
	PriceMigrationFailed    PriceMigrationStatus = "failed"
)

// The outcome of one subscription of a migration.
const (
	MigrationPending  = "pending"  // not processed yet
	MigrationMigrated = "migrated" // its items (or pending items) moved to the new price
	MigrationSkipped  = "skipped"  // nothing to move any more (canceled since, no longer on the price)
	MigrationFailed   = "failed"   // refused: its error is in errors
)

// MigrationStatuses are the subscription states a migration moves.
var MigrationStatuses = []SubscriptionStatus{SubscriptionTrialing, SubscriptionActive, SubscriptionPastDue, SubscriptionPaused}

// MaxMigrationErrors is how many failures a migration object lists in errors (the first ones);
// failed counts them all.
const MaxMigrationErrors = 100

// MaxMigrationCustomers bounds customerIds.
const MaxMigrationCustomers = 1000

// PriceMigration moves every live subscription item on FromPriceID to ToPriceID.
type PriceMigration struct {
	Object            string                `json:"object"` // always "price_migration"
	MigrationID       string                `json:"migrationId"`
	Status            PriceMigrationStatus  `json:"status"`
	FromPriceID       string                `json:"fromPriceId"`
	ToPriceID         string                `json:"toPriceId"`
	Effective         string                `json:"effective"`
	ProrationBehavior string                `json:"prorationBehavior"`
	CustomerIDs       []string              `json:"customerIds"` // nil: every customer
	Total             int64                 `json:"total"`
	Migrated          int64                 `json:"migrated"`
	Skipped           int64                 `json:"skipped"`
	Failed            int64                 `json:"failed"`
	Errors            []PriceMigrationError `json:"errors"`
	Environment       Environment           `json:"environment"`
	MerchantAccountID string                `json:"merchantAccountId"`
	CreatedAt         time.Time             `json:"createdAt"`
	CompletedAt       *time.Time            `json:"completedAt"`
}

// PriceMigrationError is why one subscription was not migrated.
type PriceMigrationError struct {
	SubscriptionID string `json:"subscriptionId"`
	Code           string `json:"code"`
	Message        string `json:"message"`
}

// PriceMigrationInput is the body of POST /v1/price-migrations.
type PriceMigrationInput struct {
	FromPriceID, ToPriceID, Effective, ProrationBehavior string
	CustomerIDs                                          []string
}

// PriceMigrationQuery is the price migrations list's query.
type PriceMigrationQuery struct {
	Status string
	ListQuery
}

// PriceMigrationStatuses lists the states.
var PriceMigrationStatuses = []PriceMigrationStatus{PriceMigrationRunning, PriceMigrationCompleted, PriceMigrationFailed}

// CheckPriceMigrationRequest records the problems a migration's body shows on its own.
func CheckPriceMigrationRequest(in PriceMigrationInput, p *Problems) {
	if in.FromPriceID == "" {
		p.Body("fromPriceId", "required", "fromPriceId is required: the price the subscriptions are on.")
	}
	if in.ToPriceID == "" {
		p.Body("toPriceId", "required", "toPriceId is required: the price the subscriptions move to.")
	}
	if in.FromPriceID != "" && in.FromPriceID == in.ToPriceID {
		p.Body("toPriceId", "same_price", fmt.Sprintf("toPriceId is fromPriceId ('%s'); a migration moves subscriptions to another price.", in.ToPriceID))
	}
	if in.Effective != ChangeNow && in.Effective != ChangeNextRenewal {
		p.Body("effective", "invalid_enum", "effective must be now or next_renewal.")
	}
	switch in.ProrationBehavior {
	case "", ProrationCreate, ProrationAlways, ProrationNone:
	default:
		p.Body("prorationBehavior", "invalid_enum", "prorationBehavior must be create_prorations, always_invoice or none.")
	}
	if len(in.CustomerIDs) > MaxMigrationCustomers {
		p.Body("customerIds", "too_many", fmt.Sprintf("customerIds lists at most %d customers.", MaxMigrationCustomers))
	}
	for i, id := range in.CustomerIDs {
		if id == "" {
			p.Body(fmt.Sprintf("customerIds[%d]", i), "required", "A customer ID is not empty.")
		}
	}
}

// CheckMigrationPrices records the problems of a migration's two prices: each recurring, both in
// one currency and one billing interval. A mismatch names both fields.
func CheckMigrationPrices(from, to Price, p *Problems) {
	for _, pr := range []struct {
		field string
		price Price
	}{{"fromPriceId", from}, {"toPriceId", to}} {
		if !BillsEveryPeriod(pr.price.PriceType) {
			p.Body(pr.field, "not_recurring", fmt.Sprintf("Price '%s' is %s; a migration moves subscription items, which bill every period (fixed_recurring or usage_metered).",
				pr.price.PriceID, pr.price.PriceType))
		}
	}
	if from.Currency != to.Currency {
		msg := fmt.Sprintf("Price '%s' is in %s and price '%s' in %s; a migration keeps the subscriptions' currency.", from.PriceID, from.Currency, to.PriceID, to.Currency)
		p.Body("fromPriceId", "currency_mismatch", msg)
		p.Body("toPriceId", "currency_mismatch", msg)
	}
	fi, fc := priceInterval(from)
	ti, tc := priceInterval(to)
	if fi != ti || fc != tc {
		msg := fmt.Sprintf("Price '%s' bills every %d %s and price '%s' every %d %s; a migration keeps the subscriptions' billing interval.",
			from.PriceID, fc, fi, to.PriceID, tc, ti)
		p.Body("fromPriceId", "interval_mismatch", msg)
		p.Body("toPriceId", "interval_mismatch", msg)
	}
}

func priceInterval(pr Price) (string, int64) {
	interval, count := "", int64(1)
	if pr.BillingInterval != nil {
		interval = *pr.BillingInterval
	}
	if pr.BillingIntervalCount != nil {
		count = *pr.BillingIntervalCount
	}
	return interval, count
}

// MigrationStep is what a migration does to one subscription: its outcome and, when migrated, the
// items after it. Change: the items change as a change of the subscription with the migration's
// effective does (Items; app's applyChange); Direct: a paused subscription's items are replaced
// as they are (nothing bills while it is paused; its resume bills the new price). Pending: the
// pending items (an amendment's or a change's) after it, when they named the old price.
type MigrationStep struct {
	Outcome       string
	Change        bool
	Direct        bool
	Items         []SubscriptionItem
	Pending       []SubscriptionItem
	Code, Message string
}

// PlanSubscriptionMigration decides what a migration from one price to `to` does to sub:
//   - skipped when sub is no longer live (MigrationStatuses), or no item is on the old price;
//     with next_renewal also when a pending change or amendment takes the old price away at the
//     renewal anyway;
//   - failed (duplicate_item) when sub already has an item on the new price;
//   - otherwise migrated: every item on the old price moves to the new one at its catalog unit
//     amount and name, with its quantity; the other items stay as they are.
func PlanSubscriptionMigration(sub Subscription, from string, to Price, effective string) MigrationStep {
	if !slices.Contains(MigrationStatuses, sub.Status) {
		return MigrationStep{Outcome: MigrationSkipped}
	}
	onNow := hasPrice(sub.Items, from)
	onPending := sub.PendingItems != nil && hasPrice(sub.PendingItems, from)
	if !onNow {
		return MigrationStep{Outcome: MigrationSkipped}
	}
	if hasPrice(sub.Items, to.PriceID) || (onPending && hasPrice(sub.PendingItems, to.PriceID)) {
		return MigrationStep{Outcome: MigrationFailed, Code: "duplicate_item",
			Message: fmt.Sprintf("Subscription '%s' already has an item on price '%s'; change it by hand.", sub.SubscriptionID, to.PriceID)}
	}
	step := MigrationStep{Outcome: MigrationMigrated}
	if onPending {
		step.Pending = MigrateItems(sub.PendingItems, from, to)
	}
	switch {
	case sub.Status == SubscriptionPaused:
		step.Direct, step.Items = true, MigrateItems(sub.Items, from, to)
	case effective == ChangeNextRenewal && sub.PendingItems != nil && !onPending:
		return MigrationStep{Outcome: MigrationSkipped} // the pending items replace the old price at the renewal
	case effective == ChangeNextRenewal && onPending:
		// The pending items are migrated; the current ones end at the renewal.
	default:
		step.Change, step.Items = true, MigrateItems(sub.Items, from, to)
	}
	return step
}

// MigrateItems returns items with every item on price `from` moved to `to` (its catalog unit
// amount and name, the item's quantity); the others are copied as they are.
func MigrateItems(items []SubscriptionItem, from string, to Price) []SubscriptionItem {
	out := make([]SubscriptionItem, len(items))
	for i, it := range items {
		out[i] = it
		if it.PriceID != from {
			continue
		}
		n := SubscriptionItem{PriceID: to.PriceID, PriceType: to.PriceType, Description: to.Name, Quantity: it.Quantity}
		if to.UnitAmount != nil {
			n.UnitAmount = *to.UnitAmount
		}
		if to.PriceType == PriceUsageMetered {
			n.Quantity = nil
		} else if n.Quantity == nil && it.PriceType == PriceUsageMetered {
			one := int64(1)
			n.Quantity = &one
		}
		out[i] = n
	}
	return out
}

func hasPrice(items []SubscriptionItem, priceID string) bool {
	return slices.ContainsFunc(items, func(it SubscriptionItem) bool { return it.PriceID == priceID })
}

// Record counts one subscription's outcome (migrated, skipped or failed) on the migration; a
// failure's error is listed while fewer than MaxMigrationErrors are.
func (pm *PriceMigration) Record(subscriptionID, outcome, code, message string) {
	switch outcome {
	case MigrationMigrated:
		pm.Migrated++
	case MigrationSkipped:
		pm.Skipped++
	case MigrationFailed:
		pm.Failed++
		if len(pm.Errors) < MaxMigrationErrors {
			pm.Errors = append(pm.Errors, PriceMigrationError{SubscriptionID: subscriptionID, Code: code, Message: message})
		}
	}
}

// Done reports whether every subscription of the migration has its outcome.
func (pm PriceMigration) Done() bool { return pm.Migrated+pm.Skipped+pm.Failed >= pm.Total }

// Complete marks the migration completed at now once every subscription has its outcome.
func (pm *PriceMigration) Complete(now time.Time) bool {
	if pm.Status != PriceMigrationRunning || !pm.Done() {
		return false
	}
	pm.Status, pm.CompletedAt = PriceMigrationCompleted, &now
	return true
}
