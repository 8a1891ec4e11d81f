package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// Metering in depth (docs/usage.md): meters and their aggregations, tiered and package prices,
// usage corrections.

// meteringKit is a customer with a billing account and helpers to record usage and bill it.
type meteringKit struct {
	t *testing.T
	e *testkit.Env
}

func newMeteringKit(t *testing.T, e *testkit.Env, customers ...string) meteringKit {
	k := newCatalogKit(t, e)
	for _, c := range customers {
		k.customer(c)
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + c, "customerId": c, "currency": "USD",
			"collectionMethod": "send_invoice"})
	}
	return meteringKit{t: t, e: e}
}

func (k meteringKit) usage(id, customer, meter string, qty int64, ts time.Time, props map[string]string) map[string]any {
	k.t.Helper()
	body := map[string]any{"eventId": id, "customerId": customer, "meterId": meter, "quantity": qty, "timestamp": rfc(ts)}
	if props != nil {
		body["properties"] = props
	}
	return k.e.Must(201, "POST", "/v1/usage-events", body).Data()
}

func (k meteringKit) price(body map[string]any) map[string]any {
	k.t.Helper()
	b := map[string]any{"productId": "metered", "currency": "USD", "billingInterval": "month"}
	for key, v := range body {
		b[key] = v
	}
	if b["name"] == nil {
		b["name"] = b["priceId"]
	}
	return k.e.Must(200, "POST", "/v1/prices", b).Data()
}

// draft creates a draft invoice of the customer billing the prices over [from, to).
func (k meteringKit) draft(customer string, from, to time.Time, lines ...map[string]any) map[string]any {
	k.t.Helper()
	var ls []any
	for _, l := range lines {
		ls = append(ls, l)
	}
	return k.e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": customer, "billingAccountId": "ba-" + customer,
		"currency": "USD", "periodStart": rfc(from), "periodEnd": rfc(to), "lines": ls}).Data()
}

func invLine(d map[string]any, i int) map[string]any { return d["lines"].([]any)[i].(map[string]any) }

// TestMeterAggregations: every aggregation answers exactly over a period with partial edge hours,
// events outside it do not count, and a void takes an event out of each.
func TestMeterAggregations(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMeteringKit(t, e, "c1")
		now := clockNow(t, e)
		for _, m := range []map[string]any{
			{"meterId": "m_count", "aggregation": "count"},
			{"meterId": "m_max", "aggregation": "max"},
			{"meterId": "m_unique", "aggregation": "unique_count", "uniqueProperty": "user"},
			{"meterId": "m_latest", "aggregation": "latest"},
		} {
			e.Must(201, "POST", "/v1/meters", m)
		}
		meters := []string{"m_sum", "m_count", "m_max", "m_unique", "m_latest"} // m_sum is never created: a sum meter
		var lines []map[string]any
		for _, m := range meters {
			k.price(map[string]any{"priceId": "p_" + m, "priceType": "usage_metered", "meterId": m, "unitAmount": 1})
			lines = append(lines, map[string]any{"priceId": "p_" + m})
		}
		type ev struct {
			id   string
			qty  int64
			ts   time.Time
			user string
		}
		base := now.Add(-11 * time.Hour).Truncate(time.Hour).Add(7*time.Minute + 13*time.Second)
		var evs []ev
		for i := range 29 {
			x := ev{id: fmt.Sprintf("e%02d", i), qty: int64((i*7)%13 + 1), ts: base.Add(time.Duration(i) * 23 * time.Minute)}
			if i%7 != 3 {
				x.user = fmt.Sprintf("u%d", i%5)
			}
			evs = append(evs, x)
			for _, m := range meters {
				var props map[string]string
				if x.user != "" {
					props = map[string]string{"user": x.user, "plan": "pro"}
				}
				k.usage(m+"-"+x.id, "c1", m, x.qty, x.ts, props)
			}
		}
		from, to := base.Add(47*time.Minute+500*time.Millisecond), base.Add(9*time.Hour+31*time.Minute)
		voided := map[string]bool{}
		want := func() []int64 {
			var sum, count, mx, latest int64
			var latestTS time.Time
			users := map[string]bool{}
			for _, x := range evs {
				if voided[x.id] || x.ts.Before(from) || !x.ts.Before(to) {
					continue
				}
				sum, count, mx = sum+x.qty, count+1, max(mx, x.qty)
				if x.user != "" {
					users[x.user] = true
				}
				if !x.ts.Before(latestTS) {
					latest, latestTS = x.qty, x.ts
				}
			}
			return []int64{sum, count, mx, int64(len(users)), latest}
		}
		inv := k.draft("c1", from, to, lines...)
		if got := lineFigures(inv, "quantity"); !slices.Equal(got, want()) {
			t.Fatalf("quantities (sum, count, max, unique_count, latest) %v, want %v", got, want())
		}
		// Void the period's largest and its latest event on every meter: the draft's refresh follows.
		var biggest, last ev
		for _, x := range evs {
			if !x.ts.Before(from) && x.ts.Before(to) {
				if x.qty > biggest.qty {
					biggest = x
				}
				last = x
			}
		}
		for _, x := range []ev{biggest, last} {
			voided[x.id] = true
			for _, m := range meters {
				v := e.Must(200, "POST", "/v1/usage-events/"+m+"-"+x.id+"/void", map[string]any{}).Data()
				if v["status"] != "voided" || v["voidedAt"] == nil || len(v["corrections"].([]any)) != 0 {
					t.Fatalf("void of %s on %s: %v", x.id, m, v)
				}
			}
		}
		inv = e.Must(200, "POST", "/v1/invoices/"+inv["invoiceId"].(string)+"/refresh", map[string]any{}).Data()
		if got := lineFigures(inv, "quantity"); !slices.Equal(got, want()) {
			t.Fatalf("after the voids: quantities %v, want %v", got, want())
		}
	})
}

// TestMeterRules: the meter's fields, a change of aggregation refused once it has events, meters
// used before they are created, and properties on usage events.
func TestMeterRules(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMeteringKit(t, e, "c1")
		now := clockNow(t, e)
		wantFields(t, e.Do("POST", "/v1/meters", map[string]any{"meterId": "m", "aggregation": "unique_count"}), "body:uniqueProperty:required")
		wantFields(t, e.Do("POST", "/v1/meters", map[string]any{"meterId": "m", "aggregation": "sum", "uniqueProperty": "u"}), "body:uniqueProperty:not_allowed")
		if r := e.Do("POST", "/v1/meters", map[string]any{"meterId": "m", "aggregation": "median"}); r.Status != 422 || !strings.Contains(strings.Join(r.FieldErrors(), " "), "body:aggregation:") {
			t.Fatalf("unknown aggregation: %d %s", r.Status, r.Body)
		}

		m := e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "m1", "name": "Calls", "aggregation": "count"}).Data()
		if m["object"] != "meter" || m["aggregation"] != "count" || m["hasEvents"] != false || m["uniqueProperty"] != nil || m["name"] != "Calls" {
			t.Fatalf("meter: %v", m)
		}
		// Without events the aggregation may change.
		m = e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "m1", "aggregation": "max"}).Data()
		if m["aggregation"] != "max" || e.Must(200, "GET", "/v1/meters/m1", nil).Data()["aggregation"] != "max" {
			t.Fatalf("changed meter: %v", m)
		}
		k.usage("a1", "c1", "m1", 4, now, nil)
		r := e.Must(409, "POST", "/v1/meters", map[string]any{"meterId": "m1", "aggregation": "sum"})
		if d := r.ErrorDetails(); d["reason"] != "meter_has_events" || d["currentAggregation"] != "max" {
			t.Fatalf("change with events: %s", r.Body)
		}
		m = e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "m1", "name": "Peak calls", "aggregation": "max"}).Data()
		if m["name"] != "Peak calls" || m["hasEvents"] != true {
			t.Fatalf("renamed meter: %v", m)
		}
		if ev := newCatalogKit(t, e).eventTypes(e.Tenant.Sandbox, "m1"); !slices.Equal(ev, []string{"meter.created", "meter.updated", "meter.updated"}) {
			t.Fatalf("meter events %v", ev)
		}

		// A meter used before it is created is a sum meter: not listed, 404, and it may only be
		// created as a sum meter.
		k.usage("a2", "c1", "implicit", 4, now, nil)
		e.Must(404, "GET", "/v1/meters/implicit", nil)
		e.Must(409, "POST", "/v1/meters", map[string]any{"meterId": "implicit", "aggregation": "count"})
		if m := e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "implicit", "aggregation": "sum"}).Data(); m["hasEvents"] != true {
			t.Fatalf("created implicit meter: %v", m)
		}
		list := e.Must(200, "GET", "/v1/meters?limit=1", nil).Data()
		items := list["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["meterId"] != "implicit" || list["hasMore"] != true {
			t.Fatalf("list: %v", list)
		}
		next := e.Must(200, "GET", "/v1/meters?limit=5&cursor="+list["nextCursor"].(string), nil).Data()
		if items := next["items"].([]any); len(items) != 1 || items[0].(map[string]any)["meterId"] != "m1" {
			t.Fatalf("second page: %v", next)
		}

		// Properties: kept as given, part of what a repeat compares, with the limits of metadata.
		d := k.usage("p1", "c1", "m1", 1, now, map[string]string{"region": "eu"})
		if fmt.Sprint(d["properties"]) != "map[region:eu]" {
			t.Fatalf("properties: %v", d)
		}
		r = e.Must(409, "POST", "/v1/usage-events", map[string]any{"eventId": "p1", "customerId": "c1", "meterId": "m1", "quantity": 1,
			"timestamp": rfc(now), "properties": map[string]string{"region": "us"}})
		if fmt.Sprint(r.ErrorDetails()["mismatchedFields"]) != "[properties]" {
			t.Fatalf("repeat with other properties: %s", r.Body)
		}
		if got := e.Must(200, "GET", "/v1/usage-events/p1", nil).Data(); fmt.Sprint(got["properties"]) != "map[region:eu]" || got["status"] != "recorded" {
			t.Fatalf("get: %v", got)
		}
		long := strings.Repeat("k", 41)
		r = e.Do("POST", "/v1/usage-events", map[string]any{"eventId": "p2", "customerId": "c1", "meterId": "m1", "quantity": -1,
			"properties": map[string]string{long: "v"}})
		if r.Status != 422 || len(r.FieldErrors()) != 2 {
			t.Fatalf("bad properties and quantity: %d %s", r.Status, r.Body)
		}
		e.Must(404, "GET", "/v1/usage-events/nope", nil)
		e.Must(404, "POST", "/v1/usage-events/nope/void", map[string]any{})

		// latest: among events of the same timestamp, the one recorded last, whatever its eventId;
		// voiding it brings back the one before.
		e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "gauge", "aggregation": "latest"})
		k.price(map[string]any{"priceId": "p_gauge", "priceType": "usage_metered", "meterId": "gauge", "unitAmount": 1})
		at := now.Add(-time.Hour)
		k.usage("z-first", "c1", "gauge", 5, at, nil)
		k.usage("a-second", "c1", "gauge", 9, at, nil)
		inv := k.draft("c1", at.Add(-time.Minute), now, map[string]any{"priceId": "p_gauge"})
		if q := num(invLine(inv, 0)["quantity"]); q != 9 {
			t.Fatalf("latest of two events at one timestamp: %d, want 9 (recorded last)", q)
		}
		e.Must(200, "POST", "/v1/usage-events/a-second/void", map[string]any{})
		inv = e.Must(200, "POST", "/v1/invoices/"+inv["invoiceId"].(string)+"/refresh", map[string]any{}).Data()
		if q := num(invLine(inv, 0)["quantity"]); q != 5 {
			t.Fatalf("latest after the void: %d, want 5", q)
		}
	})
}

// TestTieredAndPackagePrices: tiers and packages validated when the price is created (every
// problem at once), priced on invoice lines with their breakdown.
func TestTieredAndPackagePrices(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMeteringKit(t, e, "c1")
		now := clockNow(t, e)
		r := e.Do("POST", "/v1/prices", map[string]any{"priceId": "bad", "productId": "p", "name": "Bad", "priceType": "usage_metered",
			"currency": "USD", "billingInterval": "month", "meterId": "api", "tiersMode": "graduated",
			"tiers": []any{map[string]any{"upTo": 10, "unitAmount": 5}, map[string]any{"upTo": 5, "unitAmount": 4},
				map[string]any{"upTo": nil, "unitAmount": 3}, map[string]any{"upTo": nil, "unitAmount": 1}},
			"transformQuantity": map[string]any{"divideBy": 0, "round": "up"}})
		got := strings.Join(r.FieldErrors(), " ")
		for _, f := range []string{"body:tiers[1].upTo:not_increasing", "body:tiers[2].upTo:not_allowed", "body:transformQuantity.divideBy:"} {
			if r.Status != 422 || !strings.Contains(got, f) {
				t.Fatalf("want %s among the problems: %d %s", f, r.Status, r.Body)
			}
		}
		wantFields(t, e.Do("POST", "/v1/prices", map[string]any{"priceId": "bad2", "productId": "p", "name": "Bad", "priceType": "fixed_one_time",
			"currency": "USD", "unitAmount": 5, "tiersMode": "volume"}), "body:tiersMode:not_allowed")

		grad := k.price(map[string]any{"priceId": "grad", "priceType": "usage_metered", "meterId": "api", "tiersMode": "graduated",
			"tiers": []any{map[string]any{"upTo": 100, "unitAmount": 10}, map[string]any{"upTo": 1000, "unitAmount": 5, "flatAmount": 200},
				map[string]any{"upTo": nil, "unitAmount": 1}}})
		if grad["unitAmount"] != nil || grad["tiersMode"] != "graduated" || len(grad["tiers"].([]any)) != 3 {
			t.Fatalf("tiered price: %v", grad)
		}
		k.price(map[string]any{"priceId": "seats", "priceType": "fixed_recurring", "tiersMode": "volume",
			"tiers": []any{map[string]any{"upTo": 10, "unitAmount": 1000}, map[string]any{"upTo": nil, "unitAmount": 800, "flatAmount": 500}}})
		k.price(map[string]any{"priceId": "pack", "priceType": "usage_metered", "meterId": "storage", "unitAmount": 300,
			"transformQuantity": map[string]any{"divideBy": 1000, "round": "up"}})

		k.usage("g1", "c1", "api", 1500, now.Add(-time.Hour), nil)
		k.usage("s1", "c1", "storage", 2500, now.Add(-time.Hour), nil)
		inv := k.draft("c1", now.Add(-2*time.Hour), now, map[string]any{"priceId": "grad"}, map[string]any{"priceId": "seats", "quantity": 12},
			map[string]any{"priceId": "pack"})
		// graduated: 100 × 10 + (900 × 5 + 200) + 500 × 1; volume: 12 × 800 + 500; packages: ⌈2500 / 1000⌉ × 300.
		if got := lineFigures(inv, "amount"); !slices.Equal(got, []int64{6200, 10100, 900}) {
			t.Fatalf("amounts %v", got)
		}
		if got := lineFigures(inv, "quantity"); !slices.Equal(got, []int64{1500, 12, 3}) {
			t.Fatalf("quantities %v", got)
		}
		if bd := fmt.Sprint(invLine(inv, 0)["tierBreakdown"]); bd != "[map[amount:1000 flatAmount:0 quantity:100 unitAmount:10 upTo:100] "+
			"map[amount:4700 flatAmount:200 quantity:900 unitAmount:5 upTo:1000] map[amount:500 flatAmount:0 quantity:500 unitAmount:1 upTo:<nil>]]" {
			t.Fatalf("graduated breakdown %s", bd)
		}
		if bd := fmt.Sprint(invLine(inv, 1)["tierBreakdown"]); bd != "[map[amount:10100 flatAmount:500 quantity:12 unitAmount:800 upTo:<nil>]]" {
			t.Fatalf("volume breakdown %s", bd)
		}
		if invLine(inv, 2)["tierBreakdown"] != nil || num(invLine(inv, 2)["unitAmount"]) != 300 {
			t.Fatalf("package line %v", invLine(inv, 2))
		}
		// A tiered price's amounts are its tiers': a line cannot give its own.
		r = e.Do("POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "seats", "unitAmount": 5}}})
		wantFields(t, r, "body:lines[0].unitAmount:not_allowed")
	})
}

// TestUsageCorrections: a void of usage a finalized invoice billed issues a usage_correction credit
// note for exactly the difference in the line's price, tiers included; the void, the line and the
// credit note name each other; thresholds stay crossed; a draft just reprices; usage recorded after
// finalization is not corrected.
func TestUsageCorrections(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMeteringKit(t, e, "c1")
		ck := newCatalogKit(t, e)
		now := clockNow(t, e)
		k.price(map[string]any{"priceId": "grad", "priceType": "usage_metered", "meterId": "api", "tiersMode": "graduated",
			"tiers": []any{map[string]any{"upTo": 100, "unitAmount": 10}, map[string]any{"upTo": 1000, "unitAmount": 5, "flatAmount": 200},
				map[string]any{"upTo": nil, "unitAmount": 1}}})
		thr := e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"customerId": "c1", "meterId": "api", "threshold": 1100}).Data()
		from, to := now.Add(-3*time.Hour), now.Add(-time.Hour)
		k.usage("e1", "c1", "api", 1000, from.Add(10*time.Minute), nil)
		k.usage("e2", "c1", "api", 200, from.Add(70*time.Minute), nil)
		k.usage("outside", "c1", "api", 50, to.Add(time.Minute), nil)
		inv := k.draft("c1", from, to, map[string]any{"priceId": "grad"})
		id := inv["invoiceId"].(string)
		inv = e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}).Data()
		lineID := invLine(inv, 0)["invoiceLineId"].(string)
		if num(inv["total"]) != 5900 || num(invLine(inv, 0)["quantity"]) != 1200 { // 1000 + 4700 + 200 × 1
			t.Fatalf("finalized: total %v quantity %v", inv["total"], invLine(inv, 0)["quantity"])
		}

		v := e.Must(200, "POST", "/v1/usage-events/e2/void", map[string]any{}).Data()
		cs := v["corrections"].([]any)
		if len(cs) != 1 {
			t.Fatalf("corrections %v", v)
		}
		c := cs[0].(map[string]any)
		if c["invoiceId"] != id || c["invoiceLineId"] != lineID || num(c["usageBefore"]) != 1200 || num(c["usageAfter"]) != 1000 || num(c["amount"]) != 200 {
			t.Fatalf("correction %v", c)
		}
		cnID := c["creditNoteId"].(string)
		cn := e.Must(200, "GET", "/v1/credit-notes/"+cnID, nil).Data()
		if cn["reason"] != "usage_correction" || cn["usageEventId"] != "e2" || cn["invoiceId"] != id || num(cn["total"]) != 200 ||
			num(cn["creditAmount"]) != 200 || num(cn["offsetAmount"]) != 0 {
			t.Fatalf("credit note %v", cn)
		}
		got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		uc := invLine(got, 0)["usageCorrections"].([]any)
		if len(uc) != 1 || uc[0].(map[string]any)["creditNoteId"] != cnID || num(got["creditedTotal"]) != 200 {
			t.Fatalf("invoice after the void: %v", got)
		}
		if evs := ck.eventTypes(e.Tenant.Sandbox, "e2"); !slices.Equal(evs, []string{"usage_event.voided"}) {
			t.Fatalf("events of the void %v", evs)
		}
		if evs := ck.eventTypes(e.Tenant.Sandbox, cnID); !slices.Contains(evs, "credit_note.created") {
			t.Fatalf("events of the credit note %v", evs)
		}
		if bal, _ := ck.balance("c1"); bal["USD"]["available"] != 200 {
			t.Fatalf("balance %v", bal)
		}
		r := e.Must(409, "POST", "/v1/usage-events/e2/void", map[string]any{})
		if r.ErrorDetails()["currentState"] != "voided" {
			t.Fatalf("second void: %s", r.Body)
		}

		// The rest of the usage: the line's whole amount comes back in all.
		c = e.Must(200, "POST", "/v1/usage-events/e1/void", map[string]any{}).Data()["corrections"].([]any)[0].(map[string]any)
		if num(c["usageBefore"]) != 1000 || num(c["usageAfter"]) != 0 || num(c["amount"]) != 5700 {
			t.Fatalf("second correction %v", c)
		}
		got = e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if num(got["creditedTotal"]) != 5900 || len(invLine(got, 0)["usageCorrections"].([]any)) != 2 {
			t.Fatalf("invoice after both voids: %v", got)
		}
		if th := e.Must(200, "GET", "/v1/usage-thresholds/"+thr["thresholdId"].(string), nil).Data(); th["crossedAt"] == nil {
			t.Fatalf("threshold no longer crossed: %v", th)
		}

		// Usage recorded after the invoice was finalized was not billed by it: no correction.
		k.usage("late", "c1", "api", 30, from.Add(90*time.Minute), nil)
		if v := e.Must(200, "POST", "/v1/usage-events/late/void", map[string]any{}).Data(); len(v["corrections"].([]any)) != 0 {
			t.Fatalf("late usage corrected: %v", v)
		}
		// A draft reprices on refresh; nothing is credited.
		d := k.draft("c1", to, now, map[string]any{"priceId": "grad"})
		if num(invLine(d, 0)["quantity"]) != 50 {
			t.Fatalf("draft quantity %v", invLine(d, 0)["quantity"])
		}
		if v := e.Must(200, "POST", "/v1/usage-events/outside/void", map[string]any{}).Data(); len(v["corrections"].([]any)) != 0 {
			t.Fatalf("draft usage corrected: %v", v)
		}
		d = e.Must(200, "POST", "/v1/invoices/"+d["invoiceId"].(string)+"/refresh", map[string]any{}).Data()
		if num(invLine(d, 0)["quantity"]) != 0 || num(d["total"]) != 0 {
			t.Fatalf("refreshed draft %v", d)
		}
	})
}

// TestVoidRacesFinalization: a void and the finalization of the invoice billing the event, sent
// together: either the void lands first and the invoice excludes the event, or it lands after and
// a credit note gives the event back; never both, never neither.
func TestVoidRacesFinalization(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newMeteringKit(t, e)
		now := clockNow(t, e)
		k.price(map[string]any{"priceId": "calls", "priceType": "usage_metered", "meterId": "calls", "unitAmount": 7})
		outcomes := map[string]int{}
		for round := range 5 {
			c := fmt.Sprintf("race%d", round)
			newMeteringKit(t, e, c)
			k.usage(c+"-keep", c, "calls", 10, now.Add(-2*time.Hour), nil)
			k.usage(c+"-void", c, "calls", 5, now.Add(-90*time.Minute), nil)
			id := k.draft(c, now.Add(-3*time.Hour), now.Add(-time.Hour), map[string]any{"priceId": "calls"})["invoiceId"].(string)
			var wg sync.WaitGroup
			var fin, void *testkit.Response
			wg.Add(2)
			go func() { defer wg.Done(); fin = e.Do("POST", "/v1/invoices/"+id+"/finalize", map[string]any{}) }()
			go func() { defer wg.Done(); void = e.Do("POST", "/v1/usage-events/"+c+"-void/void", map[string]any{}) }()
			wg.Wait()
			if fin.Status != 200 || void.Status != 200 {
				t.Fatalf("round %d: finalize %d %s; void %d %s", round, fin.Status, fin.Body, void.Status, void.Body)
			}
			inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			corrections := void.Data()["corrections"].([]any)
			switch q := num(invLine(inv, 0)["quantity"]); {
			case q == 10 && len(corrections) == 0 && num(inv["creditedTotal"]) == 0:
				outcomes["void first"]++
			case q == 15 && len(corrections) == 1 && num(inv["creditedTotal"]) == 35:
				outcomes["finalize first"]++
			default:
				t.Fatalf("round %d: quantity %d, corrections %v, credited %v", round, q, corrections, inv["creditedTotal"])
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

// TestSubscriptionWithTiers: a subscription of a tiered seat price and a tiered usage price. Its
// trial bills the seats at 0; the renewal bills them by their volume tiers and the trial's usage by
// its graduated tiers; a change of seats credits the unused time of the tiered amount.
func TestSubscriptionWithTiers(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		mk := meteringKit{t: t, e: e}
		mk.price(map[string]any{"priceId": "tseats", "priceType": "fixed_recurring", "tiersMode": "volume",
			"tiers": []any{map[string]any{"upTo": 10, "unitAmount": 1000}, map[string]any{"upTo": nil, "unitAmount": 800, "flatAmount": 500}}})
		mk.price(map[string]any{"priceId": "tapi", "priceType": "usage_metered", "meterId": "tapi", "tiersMode": "graduated",
			"tiers": []any{map[string]any{"upTo": 100, "unitAmount": 10}, map[string]any{"upTo": nil, "unitAmount": 1}}})
		s, start := k.subscribe("c", line("tseats", "quantity", 12, "trialDays", 14), line("tapi"))
		id := s["subscriptionId"].(string)
		if first := k.invoice(s["latestInvoiceId"].(string)); num(first["subtotal"]) != 0 {
			t.Fatalf("trial invoice %v", first["lines"])
		}
		advanceTo(e, start.Add(2*time.Hour))
		mk.usage("t1", "c", "tapi", 150, start.Add(time.Hour), nil)
		trialEnd := start.Add(14 * 24 * time.Hour)
		advanceTo(e, trialEnd.Add(time.Second))
		after := k.sub(id)
		inv := k.invoice(after["latestInvoiceId"].(string))
		amounts := map[string]int64{}
		for _, l := range inv["lines"].([]any) {
			amounts[l.(map[string]any)["priceId"].(string)] += num(l.(map[string]any)["amount"])
		}
		// seats: 12 × 800 + 500 (volume); the trial's usage: 100 × 10 + 50 × 1 (graduated).
		if amounts["tseats"] != 10100 || amounts["tapi"] != 1050 {
			t.Fatalf("renewal amounts %v", amounts)
		}
		// Halfway through the period, 12 seats become 5: about half of 10100 comes back.
		end := ts(t, after["currentPeriodEnd"])
		advanceTo(e, trialEnd.Add(end.Sub(trialEnd)/2))
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{
			map[string]any{"priceId": "tseats", "quantity": 5}, map[string]any{"priceId": "tapi"}}})
		cn := k.creditNote(t, inv["invoiceId"].(string))
		if c := num(cn["total"]); c < 5000 || c > 5100 {
			t.Fatalf("credit for the unused seats: %d (want about 10100 / 2)", c)
		}
	})
}
