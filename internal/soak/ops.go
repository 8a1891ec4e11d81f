package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
)

// opSpec is one kind of operation: its weight in the random choice and what it does. run answers
// false when it found nothing to act on (it is then not counted).
type opSpec struct {
	name   string
	weight int
	run    func(ctx context.Context, c *client) bool
}

// operations is the weighted table of what the clients do.
func operations() []opSpec {
	return []opSpec{
		{"price", 2, opPrice},
		{"customer", 3, opCustomer},
		{"card", 1, perCustomer(opCard)},
		{"grant", 5, perCustomer(opGrant)},
		{"expire", 1, perCustomer(opExpire)},
		{"usage", 8, perCustomer(opUsage)},
		{"usage_repeat", 2, perCustomer(opUsageRepeat)},
		{"usage_void", 1, perCustomer(opUsageVoid)},
		{"subscribe", 4, perCustomer(opSubscribe)},
		{"amend", 1, opAmend},
		{"change", 4, opChange},
		{"cancel", 1, opCancel},
		{"pause", 1, opPause},
		{"resume", 1, opResume},
		{"read_sub", 2, opReadSub},
		{"invoice", 4, perCustomer(opInvoice)},
		{"one_off_quote", 1, perCustomer(opOneOffQuote)},
		{"refresh", 2, opRefresh},
		{"finalize", 4, opFinalize},
		{"pay", 2, opPay},
		{"void", 1, opVoid},
		{"credit_note", 3, opCreditNote},
		{"advance", 3, opAdvance},
	}
}

// setup makes what every operation needs: a meter, a catalog, coupons and the first customers. A
// failure here ends the run (it is a finding).
func (d *driver) setup(ctx context.Context, c *client) bool {
	c.op = "setup"
	var clock remit.TestClock
	if a := c.call(ctx, "GET", "/v1/test-helpers/clock", nil, ""); !c.want(a, "read the clock", one(200)) || !decode(a, &clock) {
		return false
	}
	d.m.setClock(clock.Now)
	a := c.call(ctx, "POST", "/v1/meters", map[string]any{"meterId": "soak_calls", "name": "Soak calls", "aggregation": "sum"}, "")
	if !c.want(a, "create the meter", one(201)) {
		return false
	}
	for _, p := range baseCatalog(d.ref) {
		if !c.createPrice(ctx, p) {
			return false
		}
	}
	for _, cp := range []map[string]any{
		{"couponId": d.ref("soak_pct10"), "name": "10% off", "percentOff": 10},
		{"couponId": d.ref("soak_off500"), "name": "5 off", "amountOff": 500, "currency": "USD"},
	} {
		if !c.want(c.call(ctx, "POST", "/v1/coupons", cp, ""), "create a coupon", one(201)) {
			return false
		}
	}
	for range min(6, d.cfg.Customers) {
		if !opCustomer(ctx, c) {
			return false
		}
	}
	return true
}

// baseCatalog is the catalog every run starts with: one-time, fixed, tiered (graduated and
// volume), package and metered prices on a monthly and a yearly interval; ref names each price
// for the run.
func baseCatalog(ref func(string) string) []map[string]any {
	graduated := []any{map[string]any{"upTo": 5, "unitAmount": 1000}, map[string]any{"upTo": nil, "unitAmount": 700, "flatAmount": 500}}
	volume := []any{map[string]any{"upTo": 10, "unitAmount": 900}, map[string]any{"upTo": nil, "unitAmount": 600, "flatAmount": 1000}}
	return []map[string]any{
		priceBody(ref("one_setup"), "fixed_one_time", "", map[string]any{"unitAmount": 2500}),
		priceBody(ref("one_pack"), "fixed_one_time", "", map[string]any{"unitAmount": 990}),
		priceBody(ref("m_basic"), "fixed_recurring", "month", map[string]any{"unitAmount": 4900}),
		priceBody(ref("m_pro"), "fixed_recurring", "month", map[string]any{"unitAmount": 12900}),
		priceBody(ref("m_grad"), "fixed_recurring", "month", map[string]any{"tiersMode": "graduated", "tiers": graduated}),
		priceBody(ref("m_vol"), "fixed_recurring", "month", map[string]any{"tiersMode": "volume", "tiers": volume}),
		priceBody(ref("m_pkg"), "fixed_recurring", "month", map[string]any{"unitAmount": 2000, "transformQuantity": map[string]any{"divideBy": 5, "round": "up"}}),
		priceBody(ref("m_calls"), "usage_metered", "month", map[string]any{"unitAmount": 2, "meterId": "soak_calls"}),
		priceBody(ref("m_calls_grad"), "usage_metered", "month", map[string]any{"meterId": "soak_calls", "tiersMode": "graduated", "tiers": graduated}),
		priceBody(ref("y_basic"), "fixed_recurring", "year", map[string]any{"unitAmount": 49000}),
		priceBody(ref("y_grad"), "fixed_recurring", "year", map[string]any{"tiersMode": "graduated", "tiers": graduated}),
		priceBody(ref("y_calls"), "usage_metered", "year", map[string]any{"unitAmount": 1, "meterId": "soak_calls"}),
	}
}

func priceBody(id, typ, interval string, extra map[string]any) map[string]any {
	b := map[string]any{"priceId": id, "productId": "prod_" + id, "name": "Soak " + id, "priceType": typ, "currency": "USD"}
	if interval != "" {
		b["billingInterval"] = interval
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// createPrice creates a price and records it in the model.
func (c *client) createPrice(ctx context.Context, body map[string]any) bool {
	if !c.want(c.call(ctx, "POST", "/v1/prices", body, c.key()), "create a price", one(200)) {
		return false
	}
	interval, _ := body["billingInterval"].(string)
	_, tiered := body["tiers"]
	_, pkg := body["transformQuantity"]
	raw, _ := json.Marshal(body)
	c.d.m.addPrice(&Price{ID: body["priceId"].(string), Type: body["priceType"].(string), Interval: interval, Priced: tiered || pkg, Body: string(raw)})
	return true
}

// ref names a resource of the run's fixed catalog: the seed keeps runs against one merchant
// account (cmd/remit-soak) apart.
func (d *driver) ref(name string) string { return fmt.Sprintf("%s.%d", name, d.cfg.Seed) }

// clockNow is the merchant clock as the model knows it.
func (c *client) clockNow() time.Time { return c.d.m.Now() }

// chance is true with probability p.
func (c *client) chance(p float64) bool { return c.rng.Float64() < p }

// between answers a random integer in [lo, hi].
func (c *client) between(lo, hi int64) int64 { return lo + c.rng.Int64N(hi-lo+1) }
