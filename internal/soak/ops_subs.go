package soak

import (
	"context"
	"fmt"
	"slices"

	"github.com/remit-billing/remit"
)

// lifecycle is which subscription states allow each action (docs/quotes-and-subscriptions.md,
// "The lifecycle").
var lifecycle = map[string][]string{
	"change":           {"trialing", "active", "past_due"},
	"amend":            {"trialing", "active", "past_due"},
	"cancel_now":       {"trialing", "active", "past_due", "paused"},
	"cancel_periodend": {"trialing", "active", "past_due"},
	"pause":            {"active"},
	"resume":           {"paused"},
}

// allowed answers the status the model expects of action on a subscription in state status.
func allowed(action, status string) []int {
	if slices.Contains(lifecycle[action], status) {
		return one(200)
	}
	return one(409)
}

// recurringLines answers 1–2 fixed items (quantity 1–12) and sometimes a metered one, all on
// interval.
func (c *client) recurringLines(interval string) []map[string]any {
	var lines []map[string]any
	for _, p := range c.d.m.pickPrices(c.rng, priceGroup("fixed", interval), 1+c.rng.IntN(2)) {
		lines = append(lines, map[string]any{"priceId": p.ID, "quantity": c.between(1, 12)})
	}
	if c.chance(0.4) {
		for _, p := range c.d.m.pickPrices(c.rng, priceGroup("usage", interval), 1) {
			lines = append(lines, map[string]any{"priceId": p.ID})
		}
	}
	return lines
}

// pricedIn reports whether lines bill a fixed price priced by tiers or packages.
func (c *client) pricedIn(lines []map[string]any) bool {
	for _, l := range lines {
		if p := c.d.m.price(l["priceId"].(string)); p != nil && p.Priced && p.Type == "fixed_recurring" {
			return true
		}
	}
	return false
}

func (c *client) pricedItems(items []remit.SubscriptionItem) bool {
	for _, it := range items {
		if p := c.d.m.price(it.PriceID); p != nil && p.Priced && p.Type == "fixed_recurring" {
			return true
		}
	}
	return false
}

// opSubscribe makes a subscription through an accepted subscription_creation quote: monthly or
// yearly items, sometimes usage, a one-time line, a trial or a coupon.
func opSubscribe(ctx context.Context, c *client, cu *Customer) bool {
	interval := "month"
	if c.chance(0.15) {
		interval = "year"
	}
	lines := c.recurringLines(interval)
	if c.chance(0.3) {
		for _, p := range c.d.m.pickPrices(c.rng, "one_time", 1) {
			lines = append(lines, map[string]any{"priceId": p.ID, "quantity": c.between(1, 3)})
		}
	}
	if c.chance(0.1) {
		lines[0]["trialDays"] = c.between(1, 20)
	}
	body := map[string]any{"quoteId": c.name("q"), "orderType": "subscription_creation", "customerId": cu.ID,
		"billingAccountId": cu.BA, "currency": "USD", "lines": lines}
	if c.chance(0.2) {
		body["couponIds"] = []string{c.d.ref([]string{"soak_pct10", "soak_off500"}[c.rng.IntN(2)])}
	}
	s := &Sub{Customer: cu.ID, Interval: interval, Priced: c.pricedIn(lines)}
	qt, ok := c.quoteAccepted(ctx, body, "subscription_creation")
	if !ok || qt.SubscriptionID == nil {
		return true
	}
	s.ID = *qt.SubscriptionID
	c.d.m.addSub(cu, s)
	if qt.InvoiceID != nil {
		c.d.m.invoice(cu, *qt.InvoiceID, s.ID)
	}
	c.readSub(ctx, cu, s)
	return true
}

// quoteAccepted creates a quote and accepts it (201, then 200).
func (c *client) quoteAccepted(ctx context.Context, body map[string]any, what string) (remit.Quote, bool) {
	var qt remit.Quote
	id := body["quoteId"].(string)
	if !c.want(c.call(ctx, "POST", "/v1/quotes", body, c.key()), "create a "+what+" quote", one(201)) {
		return qt, false
	}
	a := c.call(ctx, "POST", "/v1/quotes/"+id+"/accept", map[string]any{}, c.key())
	return qt, c.want(a, "accept a "+what+" quote", one(200)) && decode(a, &qt)
}

// readSub reads a subscription and records its state and latest invoice.
func (c *client) readSub(ctx context.Context, cu *Customer, s *Sub) (remit.Subscription, bool) {
	var sub remit.Subscription
	a := c.call(ctx, "GET", "/v1/subscriptions/"+s.ID, nil, "", s.history)
	if !c.want(a, "read a subscription", one(200), s.history) || !decode(a, &sub) {
		return sub, false
	}
	c.noteSub(cu, s, sub)
	return sub, true
}

// noteSub records what an answer says of a subscription.
func (c *client) noteSub(cu *Customer, s *Sub, sub remit.Subscription) {
	s.Status = string(sub.Status)
	if c.pricedItems(sub.Items) {
		s.Priced = true
	}
	if sub.LatestInvoiceID != nil {
		c.d.m.invoice(cu, *sub.LatestInvoiceID, s.ID)
	}
	if s.CanceledByUs && sub.Status != remit.SubscriptionCanceled {
		c.find(ClassOther, "canceled subscription came back", fmt.Sprintf("subscription %s was canceled now but reads %s", s.ID, sub.Status), s.history)
	}
}

// subOf picks a random subscription of cu the model believes is in one of states (any state
// when none is given).
func (c *client) subOf(cu *Customer, states ...string) *Sub {
	var pick []*Sub
	for _, s := range cu.subs {
		if len(states) == 0 || slices.Contains(states, s.Status) {
			pick = append(pick, s)
		}
	}
	if len(pick) == 0 {
		return nil
	}
	return pick[c.rng.IntN(len(pick))]
}

// subAction locks a random customer, picks one of its subscriptions in states and reads it; the
// caller acts on it and unlocks cu.
func (c *client) subAction(ctx context.Context, states ...string) (*Customer, *Sub, remit.Subscription, bool) {
	cu := c.lockCustomer()
	if cu == nil {
		return nil, nil, remit.Subscription{}, false
	}
	s := c.subOf(cu, states...)
	if s == nil {
		cu.mu.Unlock()
		return nil, nil, remit.Subscription{}, false
	}
	sub, ok := c.readSub(ctx, cu, s)
	if !ok {
		cu.mu.Unlock()
	}
	return cu, s, sub, ok
}

// opChange changes a subscription's items now, with a random proration behaviour.
func opChange(ctx context.Context, c *client) bool {
	cu, s, sub, ok := c.subAction(ctx, "trialing", "active", "past_due")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	lines := c.recurringLines(s.Interval)
	items := make([]map[string]any, len(lines))
	for i, l := range lines {
		items[i] = map[string]any{"priceId": l["priceId"]}
		if q, ok := l["quantity"]; ok {
			items[i]["quantity"] = q
		}
	}
	behavior := []string{"create_prorations", "always_invoice", "none"}[c.rng.IntN(3)]
	a := c.call(ctx, "POST", "/v1/subscriptions/"+s.ID+"/change", map[string]any{"items": items, "prorationBehavior": behavior}, c.key(), s.history)
	if a.Status == 409 && behavior != "none" && errorOf(a).reason() == "payment_in_progress" {
		// A prorated change credits or revises the period's invoice; while a charge of it is in
		// flight (the job runner's collection or dunning retry, on its own time) the server
		// refuses the credit (docs/payments.md, "While an attempt is open"): nothing changed.
		c.d.t.check("409 payment in progress")
		return true
	}
	if !c.wantState(a, "change a subscription ("+behavior+")", allowed("change", s.Status), s.history) || a.Status != 200 {
		return true
	}
	if behavior != "none" && sub.Status != remit.SubscriptionTrialing && (s.Priced || c.pricedIn(lines)) {
		s.Prorated = true
	}
	var after remit.Subscription
	if decode(a, &after) {
		c.noteSub(cu, s, after)
	}
	return true
}

// opAmend accepts a subscription_amendment quote: new items from the next period.
func opAmend(ctx context.Context, c *client) bool {
	cu, s, _, ok := c.subAction(ctx)
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	body := map[string]any{"quoteId": c.name("q"), "orderType": "subscription_amendment", "subscriptionId": s.ID,
		"customerId": cu.ID, "billingAccountId": cu.BA, "currency": "USD", "lines": c.recurringLines(s.Interval)}
	if !c.want(c.call(ctx, "POST", "/v1/quotes", body, c.key(), s.history), "create an amendment quote", one(201), s.history) {
		return true
	}
	a := c.call(ctx, "POST", "/v1/quotes/"+body["quoteId"].(string)+"/accept", map[string]any{}, c.key(), s.history)
	if c.wantState(a, "accept an amendment quote", allowed("amend", s.Status), s.history) && c.pricedIn(body["lines"].([]map[string]any)) {
		s.Priced = true
	}
	return true
}

// opCancel cancels at the period's end, or now with or without proration.
func opCancel(ctx context.Context, c *client) bool {
	cu, s, _, ok := c.subAction(ctx, "trialing", "active", "past_due", "paused")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	body, action := map[string]any{"at": "period_end"}, "cancel_periodend"
	if c.chance(0.5) {
		body, action = map[string]any{"at": "now", "prorate": c.chance(0.7)}, "cancel_now"
	}
	a := c.call(ctx, "POST", "/v1/subscriptions/"+s.ID+"/cancel", body, c.key(), s.history)
	if !c.wantState(a, "cancel a subscription ("+action+")", allowed(action, s.Status), s.history) || a.Status != 200 {
		return true
	}
	if action == "cancel_now" {
		s.CanceledByUs = true
	}
	var after remit.Subscription
	if decode(a, &after) {
		c.noteSub(cu, s, after)
	}
	return true
}

// opPause pauses a subscription; opResume resumes one.
func opPause(ctx context.Context, c *client) bool { return c.simpleSubAction(ctx, "pause", "active") }

func opResume(ctx context.Context, c *client) bool { return c.simpleSubAction(ctx, "resume", "paused") }

func (c *client) simpleSubAction(ctx context.Context, action, state string) bool {
	cu, s, _, ok := c.subAction(ctx, state)
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	a := c.call(ctx, "POST", "/v1/subscriptions/"+s.ID+"/"+action, map[string]any{}, c.key(), s.history)
	var after remit.Subscription
	if c.wantState(a, action+" a subscription", allowed(action, s.Status), s.history) && a.Status == 200 && decode(a, &after) {
		c.noteSub(cu, s, after)
	}
	return true
}

// opReadSub reads a subscription (the model learns of renewals and their invoices).
func opReadSub(ctx context.Context, c *client) bool {
	cu, _, _, ok := c.subAction(ctx)
	if ok {
		cu.mu.Unlock()
	}
	return ok
}
