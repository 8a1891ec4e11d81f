package remit

import (
	"encoding/json"
	"testing"
	"time"
)

func TestComputeEntitlements(t *testing.T) {
	jan, feb, mar := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	s := func(v string) *string { return &v }
	boolean := ProductFeature{FeatureKey: "sso", Type: FeatureBoolean}
	static := func(v string) ProductFeature {
		return ProductFeature{FeatureKey: "tier", Type: FeatureStatic, Value: s(v)}
	}
	metered := func(limit *int64, soft bool) ProductFeature {
		return ProductFeature{FeatureKey: "calls", Type: FeatureMetered, Limit: limit, SoftLimit: soft, MeterID: "api"}
	}
	hold := func(st SubscriptionStatus, from, to time.Time, g ...ProductFeature) Holding {
		return Holding{Status: st, PeriodStart: from, PeriodEnd: to, Grants: g}
	}
	// each entitlement as featureKey:hasAccess[:limit/usage/remaining][:value]
	brief := func(ents []Entitlement) string {
		type b struct {
			K    string
			A    bool
			L, U *int64     `json:",omitempty"`
			R    *int64     `json:",omitempty"`
			V    *string    `json:",omitempty"`
			End  *time.Time `json:",omitempty"`
		}
		var out []b
		for _, e := range ents {
			out = append(out, b{e.FeatureKey, e.HasAccess, e.Limit, e.Usage, e.Remaining, e.Value, e.PeriodEnd})
		}
		j, _ := json.Marshal(out)
		return string(j)
	}
	for _, c := range []struct {
		name     string
		holdings []Holding
		usage    int64
		want     string
	}{
		{"no subscription", nil, 0, `null`},
		{"boolean, static", []Holding{hold(SubscriptionActive, jan, feb, boolean, static("gold"))}, 0,
			`[{"K":"sso","A":true},{"K":"tier","A":true,"V":"gold"}]`},
		{"trialing and past_due grant", []Holding{hold(SubscriptionTrialing, jan, feb, boolean), hold(SubscriptionPastDue, jan, feb, static("x"))}, 0,
			`[{"K":"sso","A":true},{"K":"tier","A":true,"V":"x"}]`},
		{"paused and canceled grant nothing", []Holding{hold(SubscriptionPaused, jan, feb, boolean), hold(SubscriptionCanceled, jan, feb, static("x"))}, 0, `null`},
		{"metered under its limit", []Holding{hold(SubscriptionActive, jan, feb, metered(n(100), false))}, 40,
			`[{"K":"calls","A":true,"L":100,"U":40,"R":60,"End":"2026-02-01T00:00:00Z"}]`},
		{"metered at its limit", []Holding{hold(SubscriptionActive, jan, feb, metered(n(100), false))}, 100,
			`[{"K":"calls","A":false,"L":100,"U":100,"R":0,"End":"2026-02-01T00:00:00Z"}]`},
		{"metered past a soft limit", []Holding{hold(SubscriptionActive, jan, feb, metered(n(100), true))}, 150,
			`[{"K":"calls","A":true,"L":100,"U":150,"R":0,"End":"2026-02-01T00:00:00Z"}]`},
		{"metered unlimited", []Holding{hold(SubscriptionActive, jan, feb, metered(nil, false))}, 1 << 40,
			`[{"K":"calls","A":true,"U":1099511627776,"End":"2026-02-01T00:00:00Z"}]`},
		{"two products: limits add up, the first period counts", []Holding{hold(SubscriptionActive, jan, feb, metered(n(100), false)),
			hold(SubscriptionActive, feb, mar, metered(n(50), false))}, 120,
			`[{"K":"calls","A":true,"L":150,"U":120,"R":30,"End":"2026-02-01T00:00:00Z"}]`},
		{"two products: one unlimited", []Holding{hold(SubscriptionActive, jan, feb, metered(n(100), false)), hold(SubscriptionActive, jan, feb, metered(nil, false))}, 500,
			`[{"K":"calls","A":true,"U":500,"End":"2026-02-01T00:00:00Z"}]`},
		{"two products: static takes the first", []Holding{hold(SubscriptionActive, jan, feb, static("gold")), hold(SubscriptionActive, jan, feb, static("silver"))}, 0,
			`[{"K":"tier","A":true,"V":"gold"}]`},
		{"a paused one's limit does not count", []Holding{hold(SubscriptionPaused, jan, feb, metered(n(1000), false)), hold(SubscriptionActive, feb, mar, metered(n(10), false))}, 10,
			`[{"K":"calls","A":false,"L":10,"U":10,"R":0,"End":"2026-03-01T00:00:00Z"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ComputeEntitlements("c", c.holdings, map[string]int64{"calls": c.usage})
			if len(got) == 0 {
				got = nil
			}
			if b := brief(got); b != c.want {
				t.Fatalf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}

func TestDiffEntitlements(t *testing.T) {
	st := func(held, exhausted []string) EntitlementState {
		return EntitlementState{Held: held, Exhausted: exhausted}
	}
	for _, c := range []struct {
		name          string
		before, after EntitlementState
		want          string // JSON of the change; "" none
	}{
		{"nothing", st([]string{"a"}, nil), st([]string{"a"}, nil), ""},
		{"added", st(nil, nil), st([]string{"a", "b"}, nil), `{"added":["a","b"],"removed":[],"exhausted":[],"restored":[]}`},
		{"removed", st([]string{"a", "b"}, []string{"b"}), st([]string{"a"}, nil), `{"added":[],"removed":["b"],"exhausted":[],"restored":[]}`},
		{"exhausted", st([]string{"a"}, nil), st([]string{"a"}, []string{"a"}), `{"added":[],"removed":[],"exhausted":["a"],"restored":[]}`},
		{"restored", st([]string{"a"}, []string{"a"}), st([]string{"a"}, nil), `{"added":[],"removed":[],"exhausted":[],"restored":["a"]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, changed := DiffEntitlements("c", c.before, c.after)
			got := ""
			if changed {
				j, _ := json.Marshal(struct {
					Added     []string `json:"added"`
					Removed   []string `json:"removed"`
					Exhausted []string `json:"exhausted"`
					Restored  []string `json:"restored"`
				}{ch.Added, ch.Removed, ch.Exhausted, ch.Restored})
				got = string(j)
			}
			if got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestSpendingOrder(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	exp := func(d int) *time.Time { v := day(d); return &v }
	lot := func(id string, priority int64, expires *time.Time, effective int, seq string) BalanceEntry {
		return BalanceEntry{EntryID: id, Priority: priority, ExpiresAt: expires, EffectiveAt: day(effective), Seq: seq}
	}
	for _, c := range []struct {
		name string
		lots []BalanceEntry
		want string
	}{
		{"priority first, whatever the expiry", []BalanceEntry{lot("a", 50, exp(2), 1, "1"), lot("b", 10, nil, 1, "2"), lot("c", 90, exp(1), 1, "3")}, "b a c"},
		{"then the earliest expiry, never last", []BalanceEntry{lot("a", 50, nil, 1, "1"), lot("b", 50, exp(9), 1, "2"), lot("c", 50, exp(3), 1, "3")}, "c b a"},
		{"then the oldest: effective, then append order", []BalanceEntry{lot("a", 50, exp(9), 3, "1"), lot("b", 50, exp(9), 2, "3"), lot("c", 50, exp(9), 2, "2")}, "c b a"},
		{"never expiring, by age", []BalanceEntry{lot("a", 50, nil, 2, "1"), lot("b", 50, nil, 1, "2")}, "b a"},
		{"0 and 100 are the bounds", []BalanceEntry{lot("a", 100, exp(1), 1, "1"), lot("b", 0, nil, 5, "2"), lot("c", 50, nil, 1, "3")}, "b c a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			SpendingOrder(c.lots)
			got := ""
			for i, l := range c.lots {
				if i > 0 {
					got += " "
				}
				got += l.EntryID
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestLotCategory(t *testing.T) {
	for _, c := range []struct{ kind, given, want string }{
		{EntryGrant, "", GrantPromotional}, {EntryGrant, GrantPaid, GrantPaid}, {EntryTopUp, "", GrantPaid}, {EntryCreditNote, "", GrantPaid},
	} {
		if got := LotCategory(c.kind, c.given); got != c.want {
			t.Errorf("LotCategory(%s, %q) = %s, want %s", c.kind, c.given, got, c.want)
		}
	}
}
