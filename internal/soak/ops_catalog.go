package soak

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/remit-billing/remit"
)

// lockCustomer picks a random customer and locks it; the caller unlocks it.
func (c *client) lockCustomer() *Customer {
	cu := c.d.m.randomCustomer(c.rng)
	if cu != nil {
		cu.mu.Lock()
	}
	return cu
}

// perCustomer is an operation on one random customer, held locked while it runs (none yet: nothing
// to act on).
func perCustomer(run func(ctx context.Context, c *client, cu *Customer) bool) func(ctx context.Context, c *client) bool {
	return func(ctx context.Context, c *client) bool {
		cu := c.lockCustomer()
		if cu == nil {
			return false
		}
		defer cu.mu.Unlock()
		return run(ctx, c, cu)
	}
}

// anyUsage picks one of the customer's usage events (nil: none yet).
func (c *client) anyUsage(cu *Customer) *Usage {
	if len(cu.usage) == 0 {
		return nil
	}
	return cu.usage[c.rng.IntN(len(cu.usage))]
}

// opPrice creates a random price: one-time, fixed recurring (plain, tiered or by the package) or
// metered, monthly or yearly.
func opPrice(ctx context.Context, c *client) bool {
	id := c.name("rp")
	interval := "month"
	if c.chance(0.2) {
		interval = "year"
	}
	amount := map[string]any{"unitAmount": c.between(100, 20000)}
	tiers := []any{map[string]any{"upTo": c.between(2, 10), "unitAmount": c.between(100, 3000)},
		map[string]any{"upTo": nil, "unitAmount": c.between(50, 2000), "flatAmount": c.between(0, 1000)}}
	var body map[string]any
	switch c.rng.IntN(6) {
	case 0:
		body = priceBody(id, "fixed_one_time", "", amount)
	case 1, 2:
		body = priceBody(id, "fixed_recurring", interval, amount)
	case 3:
		mode := []string{"graduated", "volume"}[c.rng.IntN(2)]
		body = priceBody(id, "fixed_recurring", interval, map[string]any{"tiersMode": mode, "tiers": tiers})
	case 4:
		amount["transformQuantity"] = map[string]any{"divideBy": c.between(2, 10), "round": []string{"up", "down"}[c.rng.IntN(2)]}
		body = priceBody(id, "fixed_recurring", interval, amount)
	default:
		amount["meterId"] = "soak_calls"
		body = priceBody(id, "usage_metered", interval, amount)
	}
	c.createPrice(ctx, body)
	return true
}

var addresses = []map[string]any{
	nil,
	{"line1": "1 Main St", "city": "New York", "postalCode": "10001", "country": "US", "region": "NY"},
	{"line1": "2 Robson St", "city": "Vancouver", "postalCode": "V5K 0A1", "country": "CA", "region": "BC"},
	{"line1": "3 Unter den Linden", "city": "Berlin", "postalCode": "10117", "country": "DE"},
}

// cards are the sandbox test cards a charge_automatically account gets, weighted: mostly working,
// some declining (docs/payments.md).
var cards = []string{"pm_card_visa", "pm_card_visa", "pm_card_visa", "pm_card_mastercard", "pm_card_chargeDeclined",
	"pm_card_insufficientFunds", "pm_card_expired", ""}

// opCustomer creates the next customer (up to Config.Customers) with its billing account: some
// charge automatically with a test card (some declining), some send invoices; some have their
// own dunning policy.
func opCustomer(ctx context.Context, c *client) bool {
	n := c.d.custNext.Add(1)
	if n > int64(c.d.cfg.Customers) {
		return false
	}
	cu := &Customer{ID: fmt.Sprintf("c-%d-%d", c.d.cfg.Seed, n), Collection: "charge_automatically"}
	cu.BA = "ba-" + cu.ID
	body := map[string]any{"customerId": cu.ID, "name": "Soak customer " + cu.ID, "email": "billing+" + cu.ID + "@example.com"}
	if addr := addresses[c.rng.IntN(len(addresses))]; addr != nil {
		body["address"] = addr
	}
	if !c.want(c.call(ctx, "POST", "/v1/customers", body, c.key()), "create a customer", one(201)) {
		return false
	}
	if c.chance(0.35) {
		cu.Collection = "send_invoice"
	}
	ba := map[string]any{"billingAccountId": cu.BA, "customerId": cu.ID, "currency": "USD", "collectionMethod": cu.Collection}
	if c.chance(0.3) {
		ba["dunning"] = map[string]any{"schedule": []string{"1d", "3d"},
			"finalAction": []string{"mark_uncollectible", "leave_open", "cancel_subscription"}[c.rng.IntN(3)]}
	}
	if !c.want(c.call(ctx, "POST", "/v1/billing-accounts", ba, c.key()), "create a billing account", one(201)) {
		return false
	}
	if cu.Collection == "charge_automatically" {
		if card := cards[c.rng.IntN(len(cards))]; card != "" && c.attachCard(ctx, cu, card) {
			cu.Card = card
		}
	}
	c.d.m.addCustomer(cu)
	return true
}

// attachCard opens a setup session and completes it on its hosted URL with a test card, as the
// customer's browser would.
func (c *client) attachCard(ctx context.Context, cu *Customer, card string) bool {
	a := c.call(ctx, "POST", "/v1/customers/"+cu.ID+"/payment-method-setup", map[string]any{"billingAccountId": cu.BA, "setAsDefault": true}, "")
	var s struct {
		URL string `json:"url"`
	}
	if !c.want(a, "open a setup session", one(201)) || !decode(a, &s) {
		return false
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		c.find(ClassOther, "setup session url", fmt.Sprintf("the setup session's url %q does not parse: %v", s.URL, err))
		return false
	}
	a = c.call(ctx, "PUT", u.RequestURI()+"&paymentMethod="+card, nil, "")
	if (a.Status == 401 || a.Status == 409) && c.overlapped() {
		// An advance past the session's hour expired it (409), past a day its token too (401).
		c.d.t.check("setup session expired under a clock advance")
		return false
	}
	return c.want(a, "complete a setup session", one(200))
}

// opCard gives a charge_automatically customer another card (a new default charges its open
// invoices at once: docs/dunning.md).
func opCard(ctx context.Context, c *client, cu *Customer) bool {
	if cu.Collection != "charge_automatically" {
		return false
	}
	card := cards[c.rng.IntN(len(cards)-1)]
	if c.attachCard(ctx, cu, card) {
		cu.Card = card
	}
	return true
}

// opGrant grants prepaid balance: sometimes with targets, an expiry or a future start; sometimes
// sent twice with one Idempotency-Key (the replay must answer the first answer, applied once).
func opGrant(ctx context.Context, c *client, cu *Customer) bool {
	now := c.clockNow()
	id := c.name("g")
	amount := c.between(100, 4000)
	body := map[string]any{"entryId": id, "currency": "USD", "amount": amount}
	if c.chance(0.2) {
		body["targets"] = map[string]any{"lineTypes": []string{[]string{"recurring", "one_time", "usage"}[c.rng.IntN(3)]}}
	}
	if c.chance(0.1) {
		body["effectiveAt"] = now.Add(time.Duration(c.between(1, 10)) * 24 * time.Hour).Format(time.RFC3339)
	}
	if c.chance(0.3) {
		body["expiresAt"] = now.Add(time.Duration(c.between(45, 120)) * 24 * time.Hour).Format(time.RFC3339)
	}
	key := c.key()
	path := "/v1/customers/" + cu.ID + "/balance/grant"
	a := c.call(ctx, "POST", path, body, key)
	if !c.want(a, "grant balance", one(201)) {
		return true
	}
	cu.granted += amount
	cu.grants = append(cu.grants, id)
	if c.chance(0.1) {
		again := c.call(ctx, "POST", path, body, key)
		if again.Status != 201 || !again.Replayed || string(again.Body) != string(a.Body) {
			c.find(ClassOther, "idempotent replay of a grant", fmt.Sprintf("a grant sent again with its Idempotency-Key answered %d (replayed %t), not the first answer", again.Status, again.Replayed))
		}
		c.d.t.check("idempotent replay")
	}
	return true
}

// opExpire expires what is left of a grant, or part of it, as the balance says it is.
func opExpire(ctx context.Context, c *client, cu *Customer) bool {
	if len(cu.grants) == 0 {
		return false
	}
	id := cu.grants[c.rng.IntN(len(cu.grants))]
	var bal remit.CustomerBalance
	if a := c.call(ctx, "GET", "/v1/customers/"+cu.ID+"/balance", nil, ""); !c.want(a, "read a balance", one(200)) || !decode(a, &bal) {
		return true
	}
	var left int64 = -1
	for _, e := range bal.Entries {
		if e.EntryID == id && e.Type == "grant" && e.Remaining != nil {
			left = *e.Remaining
		}
	}
	if left < 0 {
		c.find(ClassOther, "grant missing from the balance", fmt.Sprintf("grant %s of %s is not among its balance entries", id, cu.ID))
		return true
	}
	want := one(201)
	if left == 0 {
		want = one(409)
	}
	a := c.call(ctx, "POST", "/v1/customers/"+cu.ID+"/balance/expire", map[string]any{"sourceEntryId": id}, c.key())
	c.wantState(a, "expire a grant", want)
	return true
}

// opUsage records a usage event now or in the last three days.
func opUsage(ctx context.Context, c *client, cu *Customer) bool {
	u := &Usage{ID: c.name("u"), Body: map[string]any{"customerId": cu.ID, "meterId": "soak_calls", "quantity": c.between(0, 60)}}
	u.Body["eventId"] = u.ID
	if c.chance(0.3) {
		u.Body["timestamp"] = c.clockNow().Add(-time.Duration(c.between(60, 3*86400)) * time.Second).Format(time.RFC3339Nano)
	}
	a := c.call(ctx, "POST", "/v1/usage-events", u.Body, "")
	var ev remit.UsageEvent
	if c.want(a, "record usage", one(201)) && decode(a, &ev) {
		u.At, u.Recorded, u.Unsure = ev.Timestamp, ev.CreatedAt, c.overlapped()
		cu.usage = append(cu.usage, u)
	} else if a.Status == 0 || a.Status >= 500 {
		cu.usageLost = true
	}
	return true
}

// opUsageRepeat sends a usage event again: the same values answer the first event (201), other
// values 409 duplicate_id; nothing is counted twice.
func opUsageRepeat(ctx context.Context, c *client, cu *Customer) bool {
	u := c.anyUsage(cu)
	if u == nil {
		return false
	}
	body := map[string]any{}
	for k, v := range u.Body {
		body[k] = v
	}
	want := one(201)
	if c.chance(0.3) {
		body["quantity"] = u.Body["quantity"].(int64) + 1
		want = one(409)
	}
	a := c.call(ctx, "POST", "/v1/usage-events", body, "")
	var ev remit.UsageEvent
	if c.want(a, "repeat a usage event", want) && a.Status == 201 && decode(a, &ev) {
		if ev.Quantity != u.Body["quantity"].(int64) || (ev.Status == remit.UsageVoided) != u.Voided {
			c.find(ClassOther, "usage repeat answers another event", fmt.Sprintf("repeating %s answered quantity %d status %s", u.ID, ev.Quantity, ev.Status))
		}
	}
	return true
}

// opUsageVoid voids a usage event (a second void is 409).
func opUsageVoid(ctx context.Context, c *client, cu *Customer) bool {
	u := c.anyUsage(cu)
	if u == nil {
		return false
	}
	want := one(200)
	if u.Voided {
		want = one(409)
	}
	a := c.call(ctx, "POST", "/v1/usage-events/"+u.ID+"/void", map[string]any{}, c.key())
	// A void credits finalized invoices; a charge in flight (a dunning retry of an overlapping
	// advance) refuses it with 409 payment_in_progress.
	var ev remit.UsageEvent
	if c.wantState(a, "void a usage event", want) && a.Status == 200 && decode(a, &ev) && ev.VoidedAt != nil {
		u.Voided, u.VoidedAt = true, *ev.VoidedAt
		u.Unsure = u.Unsure || c.overlapped()
	} else if a.Status == 0 || a.Status >= 500 {
		cu.usageLost = true
	}
	return true
}
