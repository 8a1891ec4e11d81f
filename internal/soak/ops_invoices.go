package soak

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/remit-billing/remit"
)

// workingCards charge successfully in the sandbox.
var workingCards = []string{"pm_card_visa", "pm_card_mastercard"}

// invoiceLines answers 1–3 lines of one-time and fixed prices; sometimes a unit amount of the
// line's own, which a price priced by tiers or packages refuses (the answer wanted then is 422).
func (c *client) invoiceLines() (lines []map[string]any, want int) {
	want = 201
	groups := []string{"one_time", priceGroup("fixed", "month"), priceGroup("fixed", "year")}
	for range 1 + c.rng.IntN(3) {
		for _, p := range c.d.m.pickPrices(c.rng, groups[c.rng.IntN(len(groups))], 1) {
			l := map[string]any{"priceId": p.ID, "quantity": c.between(1, 6)}
			if c.chance(0.08) {
				l["unitAmount"] = c.between(0, 5000)
				if p.Priced {
					want = 422
				}
			}
			lines = append(lines, l)
		}
	}
	return lines, want
}

// opInvoice creates a draft invoice; sometimes with a metered line over a past period, or a
// coupon.
func opInvoice(ctx context.Context, c *client, cu *Customer) bool {
	lines, want := c.invoiceLines()
	body := map[string]any{"customerId": cu.ID, "billingAccountId": cu.BA, "currency": "USD", "lines": lines}
	if c.chance(0.1) {
		now := c.clockNow()
		body["lines"] = append(lines, map[string]any{"priceId": c.d.ref("m_calls")})
		body["periodStart"] = now.Add(-72 * time.Hour).Format(time.RFC3339)
		body["periodEnd"] = now.Add(-24 * time.Hour).Format(time.RFC3339)
	}
	if c.chance(0.15) {
		body["couponIds"] = []string{c.d.ref("soak_pct10")}
	}
	a := c.call(ctx, "POST", "/v1/invoices", body, c.key())
	var inv remit.Invoice
	if c.want(a, "create an invoice", one(want)) && a.Status == 201 && decode(a, &inv) {
		c.noteInvoice(cu, inv, "")
	}
	return true
}

// opOneOffQuote accepts a one_off quote: a draft invoice at the quoted amounts.
func opOneOffQuote(ctx context.Context, c *client, cu *Customer) bool {
	var lines []map[string]any
	for _, p := range c.d.m.pickPrices(c.rng, "one_time", 2) {
		lines = append(lines, map[string]any{"priceId": p.ID, "quantity": c.between(1, 4)})
	}
	body := map[string]any{"quoteId": c.name("q"), "orderType": "one_off", "customerId": cu.ID, "billingAccountId": cu.BA,
		"currency": "USD", "lines": lines}
	if qt, ok := c.quoteAccepted(ctx, body, "one_off"); ok && qt.InvoiceID != nil {
		c.d.m.invoice(cu, *qt.InvoiceID, "").Status = "draft"
	}
	return true
}

// noteInvoice records what an answer says of an invoice.
func (c *client) noteInvoice(cu *Customer, inv remit.Invoice, sub string) *Inv {
	if inv.SubscriptionID != nil {
		sub = *inv.SubscriptionID
	}
	m := c.d.m.invoice(cu, inv.InvoiceID, sub)
	m.Status = string(inv.Status)
	m.Manual = inv.Status == remit.InvoiceDraft && inv.AutoFinalizeAt == nil
	return m
}

// invoiceAction locks a random customer, picks one of its invoices the model believes is in one
// of states, and reads it; the caller unlocks cu.
func (c *client) invoiceAction(ctx context.Context, states ...string) (*Customer, *Inv, remit.Invoice, bool) {
	cu := c.lockCustomer()
	if cu == nil {
		return nil, nil, remit.Invoice{}, false
	}
	var pick []*Inv
	for _, inv := range cu.invoices {
		if inv.Status == "" || slices.Contains(states, inv.Status) {
			pick = append(pick, inv)
		}
	}
	if len(pick) == 0 {
		cu.mu.Unlock()
		return nil, nil, remit.Invoice{}, false
	}
	m := pick[c.rng.IntN(len(pick))]
	inv, ok := c.readInvoice(ctx, cu, m)
	if !ok {
		cu.mu.Unlock()
	}
	return cu, m, inv, ok
}

func (c *client) readInvoice(ctx context.Context, cu *Customer, m *Inv) (remit.Invoice, bool) {
	var inv remit.Invoice
	a := c.call(ctx, "GET", "/v1/invoices/"+m.ID, nil, "", m.history)
	if !c.want(a, "read an invoice", one(200), m.history) || !decode(a, &inv) {
		return inv, false
	}
	c.noteInvoice(cu, inv, m.Sub)
	return inv, true
}

// expectDraft answers what an action only a draft allows expects of inv.
func expectDraft(inv remit.Invoice) []int {
	if inv.Status == remit.InvoiceDraft {
		return one(200)
	}
	return one(409)
}

// opRefresh recomputes a draft.
func opRefresh(ctx context.Context, c *client) bool {
	cu, m, inv, ok := c.invoiceAction(ctx, "draft")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	c.draftAction(ctx, cu, m, inv, "refresh")
	return true
}

// draftAction posts an action only a draft allows (refresh, finalize) to the invoice the model
// knows as m (read as inv), checks the answer and notes what it says; ok when it answered 200.
func (c *client) draftAction(ctx context.Context, cu *Customer, m *Inv, inv remit.Invoice, action string) (after remit.Invoice, ok bool) {
	a := c.call(ctx, "POST", "/v1/invoices/"+m.ID+"/"+action, map[string]any{}, c.key(), m.history)
	if !c.wantState(a, action+" a draft", expectDraft(inv), m.history) || a.Status != 200 || !decode(a, &after) {
		return after, false
	}
	c.noteInvoice(cu, after, m.Sub)
	return after, true
}

// opFinalize finalizes a draft; the answer shows the collection's outcome, which the model knows
// from the customer's card.
func opFinalize(ctx context.Context, c *client) bool {
	cu, m, inv, ok := c.invoiceAction(ctx, "draft")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	after, ok := c.draftAction(ctx, cu, m, inv, "finalize")
	if !ok {
		return true
	}
	want := remit.InvoiceOpen
	if after.AmountDue == 0 || (after.CollectionMethod == "charge_automatically" && slices.Contains(workingCards, cu.Card)) {
		want = remit.InvoicePaid
	}
	c.d.t.check("finalize outcome")
	if after.Status != want {
		c.find(ClassOther, "finalize outcome "+string(want)+" → "+string(after.Status),
			fmt.Sprintf("invoice %s (due %d, %s, card %q) finalized %s, the model expected %s", m.ID, after.AmountDue, after.CollectionMethod, cu.Card, after.Status, want), m.history)
	}
	return true
}

// opPay pays an open or uncollectible invoice with the default card or out of band.
func opPay(ctx context.Context, c *client) bool {
	cu, m, inv, ok := c.invoiceAction(ctx, "open", "uncollectible")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	body, want := map[string]any{"outOfBand": true}, 200
	if cu.Card != "" && c.chance(0.7) {
		body = map[string]any{}
		if !slices.Contains(workingCards, cu.Card) {
			want = 409 // payment_failed: the attempt is recorded, the answer says it failed
		}
	}
	if inv.Status != remit.InvoiceOpen && inv.Status != remit.InvoiceUncollectible {
		want = 409
	}
	a := c.payBy(ctx, inv, m, body)
	var after remit.Invoice
	if c.wantState(a, "pay an invoice", one(want), m.history) && a.Status == 200 && decode(a, &after) {
		c.noteInvoice(cu, after, m.Sub)
		if after.Status != remit.InvoicePaid {
			c.find(ClassOther, "pay answered 200 unpaid", fmt.Sprintf("invoice %s answered 200 to pay but is %s", m.ID, after.Status), m.history)
		}
	}
	return true
}

// payBy pays through the API, or for a card payment now and then through the hosted payment page
// the invoice's paymentUrl names (the customer's way; the same answers).
func (c *client) payBy(ctx context.Context, inv remit.Invoice, m *Inv, body map[string]any) Answer {
	if len(body) == 0 && inv.PaymentURL != nil && c.chance(0.3) {
		if u, err := url.Parse(*inv.PaymentURL); err == nil {
			return c.call(ctx, "PUT", u.RequestURI(), nil, "", m.history)
		}
	}
	return c.call(ctx, "POST", "/v1/invoices/"+m.ID+"/pay", body, c.key(), m.history)
}

// opVoid voids an invoice (open only; anything else is 409).
func opVoid(ctx context.Context, c *client) bool {
	cu, m, inv, ok := c.invoiceAction(ctx, "open", "paid", "uncollectible")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	want := 409
	if inv.Status == remit.InvoiceOpen && inv.AmountPaid == 0 {
		want = 200
	}
	a := c.call(ctx, "POST", "/v1/invoices/"+m.ID+"/void", map[string]any{}, c.key(), m.history)
	var after remit.Invoice
	if c.wantState(a, "void an invoice", one(want), m.history) && a.Status == 200 && decode(a, &after) {
		c.noteInvoice(cu, after, m.Sub)
	}
	return true
}
