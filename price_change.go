package remit

import (
	"encoding/json"
	"time"
)

// Changes effective at the next renewal (docs/price-changes.md): a change with effective
// next_renewal leaves the items until the period ends; the items it names wait in PendingItems
// (with the subscription's coupons, unchanged) and the renewal puts them in force, as it does an
// accepted amendment's. The subscription shows them as pendingChange.

// Change timings.
const (
	ChangeNow         = "now"
	ChangeNextRenewal = "next_renewal"
)

// PendingChange is a change waiting for the subscription's next renewal.
type PendingChange struct {
	Items       []SubscriptionItem `json:"items"`
	EffectiveAt time.Time          `json:"effectiveAt"`
}

// PendingChangeOf is the change a next_renewal change left pending on s, or nil: pending items
// that no amendment quote set.
func PendingChangeOf(s Subscription) *PendingChange {
	if s.PendingItems == nil || s.PendingQuoteID != nil {
		return nil
	}
	return &PendingChange{Items: s.PendingItems, EffectiveAt: s.CurrentPeriodEnd}
}

// SubscriptionWire is what a Subscription encodes as: its fields and its pendingChange
// (PendingChangeOf). The answer-types test compares it with the contract's Subscription.
type SubscriptionWire struct {
	subscriptionFields
	PendingChange *PendingChange `json:"pendingChange"`
}

type subscriptionFields Subscription // Subscription without its MarshalJSON

// MarshalJSON writes the subscription as a SubscriptionWire.
func (s Subscription) MarshalJSON() ([]byte, error) {
	return json.Marshal(SubscriptionWire{subscriptionFields(s), PendingChangeOf(s)})
}
