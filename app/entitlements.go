package app

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Entitlements (docs/entitlements.md): what a customer may use, from the products its live
// subscriptions bill and from its meters (remit.ComputeEntitlements decides).
//
// From memory: a customer's entitlements are kept with the two versions they were computed at
// (store.EntitlementVersions: the merchant account's catalog, the customer's subscriptions and
// usage). Triggers move a version in the same transaction as every write that can change the
// answer, whoever makes it (catalog_migration.go), so a check reads the two versions (one indexed
// query) and answers from memory when they are the ones kept, else computes again. A change is
// seen by the next check after its commit, in this process and in any other on the same store.
//
// customer.entitlements_changed: every write that can change a customer's entitlements marks the
// customer in its transaction (an event reaction, or the usage paths); before the transaction's
// events are written, each marked customer's entitlements are computed in the transaction and
// compared with the state it was last told of (entitlement_states, locked); a difference is
// recorded and emitted.

// entitlementCacheMax bounds the customers kept; past it the cache starts again empty.
const entitlementCacheMax = 200_000

type entitlementKey struct{ merchantAccountID, customerID string }

type entitlementEntry struct {
	catalog, customer int64
	list              []remit.Entitlement
	byKey             map[string]int
}

type entitlementCache struct {
	mu      sync.RWMutex
	entries map[entitlementKey]*entitlementEntry
}

func newEntitlementCache() *entitlementCache {
	return &entitlementCache{entries: map[entitlementKey]*entitlementEntry{}}
}

func (c *entitlementCache) get(k entitlementKey, catalog, customer int64) *entitlementEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.entries[k]; e != nil && e.catalog == catalog && e.customer == customer {
		return e
	}
	return nil
}

func (c *entitlementCache) put(k entitlementKey, e *entitlementEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= entitlementCacheMax {
		c.entries = map[entitlementKey]*entitlementEntry{}
	}
	if old := c.entries[k]; old == nil || old.catalog <= e.catalog && old.customer <= e.customer {
		c.entries[k] = e
	}
}

// ListCustomerEntitlements returns every feature the customer holds, by featureKey.
//
// Errors: not_found (the customer).
func (ca *Catalog) ListCustomerEntitlements(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.List[remit.Entitlement], error) {
	e, err := ca.entitlements(ctx, m, customerID)
	if err != nil {
		return remit.List[remit.Entitlement]{}, err
	}
	return remit.List[remit.Entitlement]{Object: "list", Items: slices.Clone(e.list)}, nil // the answer is stamped, the entry shared
}

// GetCustomerEntitlement returns one feature of the customer: a feature it does not hold (or
// that does not exist) answers hasAccess false.
//
// Errors: not_found (the customer).
func (ca *Catalog) GetCustomerEntitlement(ctx context.Context, m remit.MerchantAccount, customerID, featureKey string) (remit.Entitlement, error) {
	e, err := ca.entitlements(ctx, m, customerID)
	if err != nil {
		return remit.Entitlement{}, err
	}
	if i, ok := e.byKey[featureKey]; ok {
		return e.list[i], nil
	}
	return remit.NotHeld(customerID, featureKey), nil
}

// entitlements is the customer's entitlements at the current versions, from memory when kept.
func (ca *Catalog) entitlements(ctx context.Context, m remit.MerchantAccount, customerID string) (*entitlementEntry, error) {
	q := ca.DB.Read(ctx)
	k := entitlementKey{m.ID, customerID}
	catalog, customer, err := q.EntitlementVersions(ctx, m.ID, customerID)
	if err != nil {
		return nil, err
	}
	if e := ca.ents.get(k, catalog, customer); e != nil {
		return e, nil
	}
	if _, err := q.GetCustomer(ctx, m.ID, customerID); err != nil {
		return nil, err
	}
	list, err := ca.computeEntitlements(ctx, q, m, customerID)
	if err != nil {
		return nil, err
	}
	e := &entitlementEntry{catalog: catalog, customer: customer, list: list, byKey: make(map[string]int, len(list))}
	for i, x := range list {
		e.byKey[x.FeatureKey] = i
	}
	ca.ents.put(k, e)
	return e, nil
}

// computeEntitlements reads the customer's subscriptions, the products of their prices and the
// usage of its metered features through q, and decides (remit.ComputeEntitlements).
func (ca *Catalog) computeEntitlements(ctx context.Context, q store.Q, m remit.MerchantAccount, customerID string) ([]remit.Entitlement, error) {
	holdings, err := ca.holdings(ctx, q, m, customerID)
	if err != nil {
		return nil, err
	}
	usage := map[string]int64{}
	for key, w := range remit.UsageWindows(holdings) {
		if usage[key], err = ca.usage.UsageInPeriod(ctx, q, m, customerID, w.MeterID, w.From, w.To); err != nil {
			return nil, err
		}
	}
	return remit.ComputeEntitlements(customerID, holdings, usage), nil
}

// holdings are the customer's subscriptions that grant access, oldest first, each with the
// features the products of its items grant.
func (ca *Catalog) holdings(ctx context.Context, q store.Q, m remit.MerchantAccount, customerID string) ([]remit.Holding, error) {
	subs, err := q.ListSubscriptions(ctx, m.ID, store.SubscriptionFilter{CustomerID: customerID})
	if err != nil {
		return nil, err
	}
	subs = slices.DeleteFunc(subs, func(s remit.Subscription) bool { return !s.Status.GrantsAccess() })
	if len(subs) == 0 {
		return nil, nil
	}
	slices.Reverse(subs) // oldest first
	var priceIDs []string
	for _, s := range subs {
		for _, it := range s.Items {
			priceIDs = append(priceIDs, it.PriceID)
		}
	}
	products, err := q.PriceProducts(ctx, m.ID, priceIDs)
	if err != nil {
		return nil, err
	}
	grants, err := q.ProductGrants(ctx, m.ID, mapValues(products))
	if err != nil {
		return nil, err
	}
	out := make([]remit.Holding, 0, len(subs))
	for _, s := range subs {
		h := remit.Holding{SubscriptionID: s.SubscriptionID, Status: s.Status, PeriodStart: s.CurrentPeriodStart, PeriodEnd: s.CurrentPeriodEnd}
		var seen []string
		for _, it := range s.Items {
			if p, ok := products[it.PriceID]; ok && !slices.Contains(seen, p) {
				seen = append(seen, p)
				h.Grants = append(h.Grants, grants[p]...)
			}
		}
		out = append(out, h)
	}
	return out, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// touchedKey is the transaction-local set of customers whose entitlements it may have changed.
type touchedKey struct{}

// touchEntitlements marks customers of the merchant account whose entitlements the transaction
// may have changed; before its events are written, each is compared with what it was last told
// of (notifyEntitlements).
func (ca *Catalog) touchEntitlements(tx *store.Tx, m remit.MerchantAccount, customerIDs ...string) {
	v, created := tx.Local(touchedKey{}, func() any { return &touched{m: m} })
	t := v.(*touched)
	for _, id := range customerIDs {
		if !slices.Contains(t.customers, id) {
			t.customers = append(t.customers, id)
		}
	}
	if created {
		tx.BeforeEvents(func(ctx context.Context) error { return ca.notifyEntitlements(ctx, tx, t) })
	}
}

type touched struct {
	m         remit.MerchantAccount
	customers []string
}

// notifyEntitlements emits customer.entitlements_changed for each touched customer whose
// entitlements differ from the state it was last told of, and records the new state.
func (ca *Catalog) notifyEntitlements(ctx context.Context, tx *store.Tx, t *touched) error {
	now := micro(ca.Now(t.m))
	for _, id := range t.customers {
		raw, err := tx.EntitlementState(ctx, t.m.ID, id, store.Locked)
		if err != nil {
			return err
		}
		var before remit.EntitlementState
		if raw != "" {
			_ = json.Unmarshal([]byte(raw), &before)
		}
		list, err := ca.computeEntitlements(ctx, tx.Q, t.m, id)
		if err != nil {
			return err
		}
		after := remit.StateOf(list)
		change, changed := remit.DiffEntitlements(id, before, after)
		if !changed {
			continue
		}
		b, _ := json.Marshal(after)
		if err := tx.PutEntitlementState(ctx, t.m.ID, id, string(b)); err != nil {
			return err
		}
		if err := ca.Emit(ctx, tx, scopeOf(t.m), now, remit.EventCustomerEntitlementsChanged, id, change); err != nil {
			return err
		}
	}
	return nil
}

// usageChangedEntitlements marks the customer when a usage event of meterID may change its
// entitlements: when a feature it was last told of counts that meter (one indexed read).
func (ca *Catalog) usageChangedEntitlements(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, customerID, meterID string) error {
	raw, err := tx.EntitlementState(ctx, m.ID, customerID, store.Unlocked)
	if err != nil || raw == "" {
		return err
	}
	var st remit.EntitlementState
	if json.Unmarshal([]byte(raw), &st) == nil && slices.Contains(st.Meters, meterID) {
		ca.touchEntitlements(tx, m, customerID)
	}
	return nil
}

// productChangedEntitlements marks every customer whose live subscriptions bill a price of the
// product (its features changed).
func (ca *Catalog) productChangedEntitlements(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, productID string) error {
	prices, err := tx.ProductPriceIDs(ctx, m.ID, productID)
	if err != nil || len(prices) == 0 {
		return err
	}
	subs, err := tx.ListSubscriptions(ctx, m.ID, store.SubscriptionFilter{})
	if err != nil {
		return err
	}
	for _, s := range subs {
		if s.Status.GrantsAccess() && slices.ContainsFunc(s.Items, func(it remit.SubscriptionItem) bool { return slices.Contains(prices, it.PriceID) }) {
			ca.touchEntitlements(tx, m, s.CustomerID)
		}
	}
	return nil
}

// registerEntitlementReactions marks the customer of every subscription change (created,
// updated, renewed, past_due, paused, resumed, canceled) and of every usage void.
func (ca *Catalog) registerEntitlementReactions() {
	for _, typ := range []remit.EventType{remit.EventSubscriptionCreated, remit.EventSubscriptionUpdated, remit.EventSubscriptionRenewed,
		remit.EventSubscriptionPastDue, remit.EventSubscriptionPaused, remit.EventSubscriptionResumed, remit.EventSubscriptionCanceled} {
		ca.react(typ, func(ctx context.Context, tx *store.Tx, scope remit.Scope, _ time.Time, obj any) error {
			sub, ok := obj.(remit.Subscription)
			if p, isPtr := obj.(*remit.Subscription); isPtr {
				sub, ok = *p, true
			}
			if !ok {
				return nil
			}
			m, err := tx.GetMerchantAccount(ctx, scope.MerchantAccountID, store.Unlocked)
			if err != nil {
				return err
			}
			ca.touchEntitlements(tx, m, sub.CustomerID)
			return nil
		})
	}
}
