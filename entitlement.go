package remit

import (
	"slices"
	"time"
)

// Entitlements (docs/entitlements.md): what a customer may use, computed from the products its
// live subscriptions bill and from its meters. The engine gathers the holdings and the usage; the
// rules below decide.

// Entitlement is one feature a customer holds (or, asked for by key, does not: HasAccess false).
// Limit, Usage, Remaining and PeriodEnd are a metered feature's; Value a static one's.
type Entitlement struct {
	Object     string     `json:"object"` // "entitlement"
	CustomerID string     `json:"customerId"`
	FeatureKey string     `json:"featureKey"`
	Type       *string    `json:"type"` // nil: a feature the customer does not hold
	HasAccess  bool       `json:"hasAccess"`
	Value      *string    `json:"value"`
	Limit      *int64     `json:"limit"`
	SoftLimit  bool       `json:"softLimit"`
	Usage      *int64     `json:"usage"`
	Remaining  *int64     `json:"remaining"`
	PeriodEnd  *time.Time `json:"periodEnd"`
	// Environment is the merchant account's, stamped on the answer.
	Environment Environment `json:"environment"`
	MeterID     string      `json:"-"`
}

// Holding is one live subscription's part in a customer's entitlements: its state, its current
// period and the features the products of its items grant.
type Holding struct {
	SubscriptionID string
	Status         SubscriptionStatus
	PeriodStart    time.Time
	PeriodEnd      time.Time
	Grants         []ProductFeature
}

// GrantsAccess reports whether a subscription in state s grants its products' features: trialing,
// active and past_due do; paused and canceled do not.
func (s SubscriptionStatus) GrantsAccess() bool {
	return s == SubscriptionTrialing || s == SubscriptionActive || s == SubscriptionPastDue
}

// UsageWindow is where a metered feature's usage is counted: its meter over a subscription's
// current period, [From, To).
type UsageWindow struct {
	MeterID  string
	From, To time.Time
}

// UsageWindows returns, by featureKey, the window of each metered feature of holdings (ordered
// oldest subscription first): the current period of the first holding that grants it. Holdings
// of a state that grants nothing are left out.
func UsageWindows(holdings []Holding) map[string]UsageWindow {
	out := map[string]UsageWindow{}
	for _, h := range holdings {
		if !h.Status.GrantsAccess() {
			continue
		}
		for _, g := range h.Grants {
			if _, seen := out[g.FeatureKey]; !seen && g.Type == FeatureMetered {
				out[g.FeatureKey] = UsageWindow{MeterID: g.MeterID, From: h.PeriodStart, To: h.PeriodEnd}
			}
		}
	}
	return out
}

// ComputeEntitlements returns the customer's entitlements, by featureKey, from its holdings
// (oldest subscription first) and the usage of each metered feature in its window (UsageWindows):
//   - every feature a holding of a granting state grants is held;
//   - boolean: access; static: the value of the first holding that grants it;
//   - metered: the limits of every grant add up, one unlimited grant makes it unlimited, one soft
//     grant makes it soft; access while usage < limit, or always when unlimited or soft; remaining
//     is limit − usage, never below 0; periodEnd is the window's end.
func ComputeEntitlements(customerID string, holdings []Holding, usage map[string]int64) []Entitlement {
	windows := UsageWindows(holdings)
	byKey := map[string]*Entitlement{}
	var keys []string
	unlimited := map[string]bool{}
	for _, h := range holdings {
		if !h.Status.GrantsAccess() {
			continue
		}
		for _, g := range h.Grants {
			e, ok := byKey[g.FeatureKey]
			if !ok {
				typ := g.Type
				e = &Entitlement{Object: "entitlement", CustomerID: customerID, FeatureKey: g.FeatureKey, Type: &typ, Value: g.Value, MeterID: g.MeterID}
				byKey[g.FeatureKey] = e
				keys = append(keys, g.FeatureKey)
			}
			if g.Type != FeatureMetered {
				continue
			}
			e.SoftLimit = e.SoftLimit || g.SoftLimit
			switch {
			case g.Limit == nil:
				unlimited[g.FeatureKey] = true
			case e.Limit == nil:
				l := *g.Limit
				e.Limit = &l
			default:
				*e.Limit = satAdd(*e.Limit, *g.Limit)
			}
		}
	}
	slices.Sort(keys)
	out := make([]Entitlement, 0, len(keys))
	for _, k := range keys {
		e := byKey[k]
		e.HasAccess = true
		if *e.Type == FeatureMetered {
			meter(e, unlimited[k], usage[k], windows[k].To)
		}
		out = append(out, *e)
	}
	return out
}

// meter completes a metered entitlement with its usage.
func meter(e *Entitlement, unlimited bool, used int64, periodEnd time.Time) {
	if unlimited {
		e.Limit = nil
	}
	e.Usage, e.PeriodEnd = &used, &periodEnd
	if e.Limit != nil {
		rem := max(*e.Limit-used, 0)
		e.Remaining = &rem
		e.HasAccess = used < *e.Limit || e.SoftLimit
	}
}

func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}

// NotHeld is the answer for a feature the customer does not hold.
func NotHeld(customerID, featureKey string) Entitlement {
	return Entitlement{Object: "entitlement", CustomerID: customerID, FeatureKey: featureKey}
}

// EntitlementState is what customer.entitlements_changed compares: the features held, the
// metered ones without access (exhausted), and the meters the held features count.
type EntitlementState struct {
	Held      []string `json:"held"`
	Exhausted []string `json:"exhausted"`
	Meters    []string `json:"meters"`
}

// StateOf is the state of a customer's entitlements.
func StateOf(ents []Entitlement) EntitlementState {
	s := EntitlementState{Held: []string{}, Exhausted: []string{}, Meters: []string{}}
	for _, e := range ents {
		s.Held = append(s.Held, e.FeatureKey)
		if !e.HasAccess {
			s.Exhausted = append(s.Exhausted, e.FeatureKey)
		}
		if e.MeterID != "" && !slices.Contains(s.Meters, e.MeterID) {
			s.Meters = append(s.Meters, e.MeterID)
		}
	}
	slices.Sort(s.Held)
	slices.Sort(s.Exhausted)
	slices.Sort(s.Meters)
	return s
}

// EntitlementsChange is the object of customer.entitlements_changed: the features added to and
// removed from what the customer holds, and the metered features that lost access (exhausted) or
// got it back (restored).
type EntitlementsChange struct {
	Object     string   `json:"object"` // "entitlements_change"
	CustomerID string   `json:"customerId"`
	Added      []string `json:"added"`
	Removed    []string `json:"removed"`
	Exhausted  []string `json:"exhausted"`
	Restored   []string `json:"restored"`
}

// DiffEntitlements is the change from before to after, and whether there is one (a change of
// meters alone is none).
func DiffEntitlements(customerID string, before, after EntitlementState) (EntitlementsChange, bool) {
	c := EntitlementsChange{Object: "entitlements_change", CustomerID: customerID,
		Added: minus(after.Held, before.Held), Removed: minus(before.Held, after.Held),
		Exhausted: minus(after.Exhausted, before.Exhausted),
		Restored:  minus(minus(before.Exhausted, after.Exhausted), minus(before.Held, after.Held)),
	}
	return c, len(c.Added)+len(c.Removed)+len(c.Exhausted)+len(c.Restored) > 0
}

// minus is a without the members of b, in a's order.
func minus(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
