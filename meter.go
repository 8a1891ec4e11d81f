package remit

import (
	"fmt"
	"time"
)

// Meters (docs/usage.md "Meters"): what a meter counts of its usage events over a period.

// Aggregations: how a meter turns the usage events of a period into one quantity.
const (
	AggSum         = "sum"          // the sum of the events' quantities
	AggCount       = "count"        // the number of events
	AggMax         = "max"          // the largest quantity
	AggUniqueCount = "unique_count" // the number of distinct values of the meter's uniqueProperty
	AggLatest      = "latest"       // the quantity of the latest event (by timestamp, then the one recorded last)
)

// Meter is how a meter aggregates its usage. A meter used by a price or a usage event before it is
// created is a sum meter (Implicit); creating it later with another aggregation is refused once it
// has events, as is changing its aggregation.
type Meter struct {
	Object            string      `json:"object"` // "meter"
	MeterID           string      `json:"meterId"`
	Name              *string     `json:"name"`
	Aggregation       string      `json:"aggregation"`
	UniqueProperty    *string     `json:"uniqueProperty"`
	HasEvents         bool        `json:"hasEvents"`
	Environment       Environment `json:"environment"`
	MerchantAccountID string      `json:"merchantAccountId"`
	CreatedAt         time.Time   `json:"createdAt"`
	UpdatedAt         time.Time   `json:"updatedAt"`
	Implicit          bool        `json:"-"` // a row written by usage, not by POST /v1/meters
}

// ImplicitMeter is the meter a usage event or price names before it is created: a sum meter.
func ImplicitMeter(merchantAccountID, meterID string, at time.Time) Meter {
	return Meter{Object: "meter", MeterID: meterID, Aggregation: AggSum, Implicit: true, MerchantAccountID: merchantAccountID,
		CreatedAt: at, UpdatedAt: at}
}

// CheckMeter records every problem of a meter about to be created or changed: the aggregation is
// one of the five, uniqueProperty is given with unique_count and only with it.
func CheckMeter(m Meter, p *Problems) {
	switch m.Aggregation {
	case AggSum, AggCount, AggMax, AggLatest:
		if m.UniqueProperty != nil {
			p.Body("uniqueProperty", "not_allowed", fmt.Sprintf("uniqueProperty is given only with aggregation unique_count; a %s meter does not count distinct values.", m.Aggregation))
		}
	case AggUniqueCount:
		if m.UniqueProperty == nil {
			p.Body("uniqueProperty", "required", "uniqueProperty is required with aggregation unique_count: it names the usage event property whose distinct values are counted.")
		}
	default:
		p.Body("aggregation", "invalid_enum", fmt.Sprintf("aggregation must be sum, count, max, unique_count or latest; got %q.", m.Aggregation))
	}
}

// MeterChangeConflict is nil when meter `was` may become `now`: always while it has no events;
// once it has, only with the same aggregation and unique property (its figures were computed so).
func MeterChangeConflict(was, now Meter) error {
	if !was.HasEvents || (was.Aggregation == now.Aggregation && ptrEq(was.UniqueProperty, now.UniqueProperty)) {
		return nil
	}
	return Errorf(EConflict, "Meter '%s' already has usage events aggregated as %s; its aggregation cannot change. Create a new meter for the new aggregation.",
		was.MeterID, describeAggregation(was)).With("reason", "meter_has_events").With("field", "aggregation").
		With("currentAggregation", was.Aggregation)
}

func describeAggregation(m Meter) string {
	if m.Aggregation == AggUniqueCount && m.UniqueProperty != nil {
		return fmt.Sprintf("unique_count of %q", *m.UniqueProperty)
	}
	return m.Aggregation
}

func ptrEq(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// UniqueValue is the value a usage event's properties give the meter's unique property: nil for
// a meter of another aggregation or an event without that property (such an event is not counted).
func (m Meter) UniqueValue(properties map[string]string) *string {
	if m.Aggregation != AggUniqueCount || m.UniqueProperty == nil {
		return nil
	}
	v, ok := properties[*m.UniqueProperty]
	if !ok {
		return nil
	}
	return &v
}
