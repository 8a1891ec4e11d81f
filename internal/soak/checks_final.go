package soak

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// checkBalances: each customer's ledger adds up (every lot within its amount, the entries' sum
// the lots' remaining, the balance shown within it and never negative), every grant the API
// accepted is there once, and no lot is left with something after its expiresAt.
func (c *client) checkBalances(ctx context.Context, due time.Time) {
	for _, cu := range c.d.m.allCustomers() {
		cu.mu.Lock()
		var bal remit.CustomerBalance
		a := c.call(ctx, "GET", "/v1/customers/"+cu.ID+"/balance", nil, "")
		if c.want(a, "read a balance", one(200)) && decode(a, &bal) {
			c.d.t.check("balance")
			if p := balanceProblems(bal, cu, due); len(p) > 0 {
				c.find(ClassOther, "balance: "+p[0], fmt.Sprintf("customer %s: %s", cu.ID, strings.Join(p, "; ")))
			}
		}
		cu.mu.Unlock()
	}
}

// balanceProblems answers what does not add up in a customer's balance; the caller holds cu.mu.
func balanceProblems(bal remit.CustomerBalance, cu *Customer, due time.Time) []string {
	var p []string
	var sum, remaining, granted int64
	grants := 0
	for _, e := range bal.Entries {
		sum += e.Amount
		if e.Remaining != nil {
			remaining += *e.Remaining
			if *e.Remaining < 0 || *e.Remaining > e.Amount {
				p = append(p, fmt.Sprintf("lot %s has remaining %d of %d", e.EntryID, *e.Remaining, e.Amount))
			}
			if e.ExpiresAt != nil && e.ExpiresAt.Before(due) && *e.Remaining > 0 {
				p = append(p, fmt.Sprintf("grant %s keeps %d after its expiresAt %s", e.EntryID, *e.Remaining, e.ExpiresAt.Format(time.RFC3339)))
			}
		}
		if e.Type == "grant" {
			granted += e.Amount
			grants++
		}
	}
	if sum != remaining {
		p = append(p, fmt.Sprintf("entries add up to %d, lots hold %d", sum, remaining))
	}
	if granted != cu.granted || grants != len(cu.grants) {
		p = append(p, fmt.Sprintf("%d grants of %d in the ledger, the API accepted %d of %d", grants, granted, len(cu.grants), cu.granted))
	}
	for _, b := range bal.Balances {
		if b.Available < 0 || b.Pending < 0 || b.Available+b.Pending > remaining {
			p = append(p, fmt.Sprintf("balance shown %d available + %d pending, lots hold %d", b.Available, b.Pending, remaining))
		}
	}
	return p
}

// finalChecks runs every check once more when the clients have stopped, then the ones that read
// everything: every invoice (found through its invoice.created event) with its payments, every
// credit note, the usage events, the store's own verification and the server's log.
func (d *driver) finalChecks(ctx context.Context, c *client) {
	c.op = "final"
	clk, ok := c.readClock(ctx)
	if !ok {
		return
	}
	c.afterAdvance(ctx, clk.Now, true)
	c.checkAllInvoices(ctx)
	c.checkCreditNotes(ctx)
	c.checkUsage(ctx)
	if d.cfg.VerifyStore != nil {
		d.t.check("remit verify")
		if ok, detail, err := d.cfg.VerifyStore(ctx); err != nil || !ok {
			c.find(ClassOther, "remit verify", fmt.Sprintf("remit verify of the store: ok %t, %v\n%s", ok, err, detail))
		}
	}
	if d.cfg.ServerErrors != nil {
		for _, line := range d.cfg.ServerErrors() {
			d.findAlone(classOfFailure(line), "server log: "+logKey(line), "the server logged: "+shorten([]byte(line), 1500))
		}
	}
}

// logKey is what makes two logged errors one finding: the message and the error's first words,
// without IDs.
func logKey(line string) string {
	line = logIDs.ReplaceAllString(line, "{id}")
	if len(line) > 160 {
		line = line[:160]
	}
	return line
}

var logIDs = regexp.MustCompile(`'[^']*'|\b(job|sub|inv|pay|cn|req)_[0-9a-z]+`)

// checkAllInvoices reads every invoice of the account with its payments.
func (c *client) checkAllInvoices(ctx context.Context) {
	type created struct {
		Data struct {
			Object struct {
				InvoiceID  string `json:"invoiceId"`
				CustomerID string `json:"customerId"`
			} `json:"object"`
		} `json:"data"`
	}
	events, ok := pages[created](ctx, c, "/v1/events?type=invoice.created&limit=100", "list invoice.created events")
	if !ok {
		return
	}
	applied := map[*Customer]int64{}
	for _, ev := range events {
		id := ev.Data.Object.InvoiceID
		cu := c.d.m.customerByID(ev.Data.Object.CustomerID)
		if cu == nil || id == "" {
			continue
		}
		cu.mu.Lock()
		m := c.d.m.invoice(cu, id, "")
		if inv, ok := c.readInvoice(ctx, cu, m); ok {
			c.checkInvoice(inv, m)
			c.checkPayments(ctx, inv, m)
			c.checkUsageBilled(cu, inv, m)
			applied[cu] += inv.PrepaidApplied
		}
		cu.mu.Unlock()
	}
	c.checkApplications(ctx, applied)
}

// checkApplications: what each customer's ledger says it applied to invoices is what its
// invoices say they took from the prepaid balance.
func (c *client) checkApplications(ctx context.Context, applied map[*Customer]int64) {
	for _, cu := range c.d.m.allCustomers() {
		var bal remit.CustomerBalance
		a := c.call(ctx, "GET", "/v1/customers/"+cu.ID+"/balance", nil, "")
		if !c.want(a, "read a balance", one(200)) || !decode(a, &bal) {
			continue
		}
		c.d.t.check("balance applied = invoices' prepaidApplied")
		var ledger int64
		for _, e := range bal.Entries {
			if e.Type == "application" {
				ledger -= e.Amount
			}
		}
		if ledger != applied[cu] {
			c.find(ClassOther, "applications differ from prepaidApplied", fmt.Sprintf("customer %s: the ledger's applications take %d, its invoices say prepaidApplied %d", cu.ID, ledger, applied[cu]))
		}
	}
}

// checkPayments: each payment refunded at most its amount; the succeeded ones are what the
// invoice says was paid, and their refunds what it says was refunded.
func (c *client) checkPayments(ctx context.Context, inv remit.Invoice, m *Inv) {
	pays, ok := pages[remit.Payment](ctx, c, "/v1/payments?limit=100&invoiceId="+inv.InvoiceID, "list an invoice's payments")
	if !ok {
		return
	}
	c.d.t.check("payments")
	var paid, refunded int64
	var p []string
	for _, pay := range pays {
		if pay.AmountRefunded < 0 || pay.AmountRefunded > pay.Amount {
			p = append(p, fmt.Sprintf("payment %s refunded %d of %d", pay.PaymentID, pay.AmountRefunded, pay.Amount))
		}
		if pay.Status == remit.PaymentSucceeded {
			paid += pay.Amount
			refunded += pay.AmountRefunded
		}
	}
	if paid != inv.AmountPaid || refunded != inv.RefundedTotal {
		p = append(p, fmt.Sprintf("succeeded payments %d (refunded %d), the invoice says paid %d (refunded %d)", paid, refunded, inv.AmountPaid, inv.RefundedTotal))
	}
	if len(p) > 0 {
		c.find(ClassOther, "payments: "+p[0][:min(len(p[0]), 40)], fmt.Sprintf("invoice %s: %s", inv.InvoiceID, strings.Join(p, "; ")), m.history)
	}
}

// checkCreditNotes: each credit note is its buckets and its lines.
func (c *client) checkCreditNotes(ctx context.Context) {
	for _, id := range c.d.m.allNotes() {
		var cn remit.CreditNote
		a := c.call(ctx, "GET", "/v1/credit-notes/"+id, nil, "")
		if !c.want(a, "read a credit note", one(200)) || !decode(a, &cn) {
			continue
		}
		c.d.t.check("credit note figures")
		var lines int64
		for _, l := range cn.Lines {
			lines += l.Amount
		}
		if cn.Total != cn.CreditAmount+cn.RefundAmount+cn.OffsetAmount || cn.Total != lines {
			c.find(ClassOther, "credit note figures", fmt.Sprintf("credit note %s: total %d, buckets %d + %d + %d, lines %d", id, cn.Total, cn.CreditAmount, cn.RefundAmount, cn.OffsetAmount, lines))
		}
	}
}

// checkUsage: every usage event the model sent is recorded once with its quantity, voided when
// the model voided it.
func (c *client) checkUsage(ctx context.Context) {
	for _, cu := range c.d.m.allCustomers() {
		cu.mu.Lock()
		for _, u := range cu.usage {
			var ev remit.UsageEvent
			a := c.call(ctx, "GET", "/v1/usage-events/"+u.ID, nil, "")
			if !c.want(a, "read a usage event", one(200)) || !decode(a, &ev) {
				continue
			}
			c.d.t.check("usage event")
			if ev.Quantity != u.Body["quantity"].(int64) || (ev.Status == remit.UsageVoided) != u.Voided {
				c.find(ClassOther, "usage event differs", fmt.Sprintf("usage event %s reads quantity %d status %s; the model sent %v (voided %t)", u.ID, ev.Quantity, ev.Status, u.Body["quantity"], u.Voided))
			}
		}
		cu.mu.Unlock()
	}
}

// checkUsageBilled: each usage line of a finalized invoice billed exactly the usage the model
// recorded in the line's period before the finalization and had not voided by then (voids after
// it are corrections, not a new quantity). Every usage price of the soak bills its usage as the
// quantity (no packages). A line whose period holds an event recorded or voided under a clock
// advance is left out, and so are the customers one of whose usage requests got no answer.
func (c *client) checkUsageBilled(cu *Customer, inv remit.Invoice, m *Inv) {
	if inv.FinalizedAt == nil || cu.usageLost {
		return
	}
	fin := *inv.FinalizedAt
	for _, l := range inv.Lines {
		from, to := l.PeriodStart, l.PeriodEnd
		if from == nil || to == nil {
			from, to = inv.PeriodStart, inv.PeriodEnd
		}
		if l.LineType != "usage" || l.MeterID == nil || *l.MeterID != "soak_calls" || from == nil || to == nil {
			continue
		}
		want, sure := usageAt(cu.usage, *from, *to, fin)
		if !sure {
			continue
		}
		c.d.t.check("usage billed")
		if l.Quantity != want {
			c.find(ClassOther, "usage billed differs from usage recorded", fmt.Sprintf("invoice %s (finalized %s) line %s bills %d of usage in [%s, %s); the model recorded %d live before the finalization",
				inv.InvoiceID, fin.Format(time.RFC3339Nano), l.InvoiceLineID, l.Quantity, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), want), m.history)
		}
	}
}

// usageAt answers the usage of events in [from, to) recorded before fin and not voided by then,
// and whether the model is sure of it.
func usageAt(events []*Usage, from, to, fin time.Time) (int64, bool) {
	var sum int64
	near := func(t time.Time) bool { return !t.IsZero() && t.Sub(fin).Abs() < time.Millisecond }
	for _, u := range events {
		if u.At.Before(from) || !u.At.Before(to) {
			continue
		}
		if u.Unsure || near(u.Recorded) || near(u.VoidedAt) {
			return 0, false
		}
		if u.Recorded.Before(fin) && (!u.Voided || u.VoidedAt.After(fin)) {
			sum += u.Body["quantity"].(int64)
		}
	}
	return sum, true
}
