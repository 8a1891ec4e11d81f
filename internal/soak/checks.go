package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// list is a cursor-paged list answer.
type list[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// pages reads every page of a cursor-paged list route (path has its own query string).
func pages[T any](ctx context.Context, c *client, path, what string) ([]T, bool) {
	var all []T
	cursor := ""
	for {
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		var page list[T]
		a := c.call(ctx, "GET", p, nil, "")
		if !c.want(a, what, one(200)) || !decode(a, &page) {
			return all, false
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return all, true
		}
		cursor = *page.NextCursor
	}
}

// checkRenewals: every subscription that renews (trialing, active, past_due) has its current
// period end (or its cancelAt) after due: its renewals ran. A subscription the list shows behind
// is read again under its customer's lock before it is judged (an operation may have moved it
// since the list was read).
func (c *client) checkRenewals(ctx context.Context, due time.Time) {
	subs, ok := pages[remit.Subscription](ctx, c, "/v1/subscriptions?limit=100", "list subscriptions")
	if !ok {
		return
	}
	for _, sub := range subs {
		c.d.t.check("subscription renewed")
		s, cu := c.d.m.subByID(sub.SubscriptionID), c.d.m.customerByID(sub.CustomerID)
		if s == nil || cu == nil {
			continue
		}
		cu.mu.Lock()
		if sub.LatestInvoiceID != nil {
			c.d.m.invoice(cu, *sub.LatestInvoiceID, s.ID)
		}
		if behind(sub, due) || (s.CanceledByUs && sub.Status != remit.SubscriptionCanceled) {
			if fresh, ok := c.readSub(ctx, cu, s); ok && behind(fresh, due) {
				c.stuckSub(fresh, s, due)
			}
		}
		cu.mu.Unlock()
	}
}

// behind reports whether sub should have renewed (or ended) before due.
func behind(sub remit.Subscription, due time.Time) bool {
	end := sub.CurrentPeriodEnd
	if sub.CancelAt != nil && sub.CancelAt.Before(end) {
		end = *sub.CancelAt
	}
	return sub.Status.Renews() && end.Before(due)
}

// stuckSub records a subscription whose renewal did not run, with its prices' definitions.
func (c *client) stuckSub(sub remit.Subscription, s *Sub, due time.Time) {
	class := ClassOther
	if s.Prorated {
		class = ClassTieredProration
	}
	var defs []string
	for _, it := range append(append([]remit.SubscriptionItem(nil), sub.Items...), sub.PendingItems...) {
		if p := c.d.m.price(it.PriceID); p != nil {
			defs = append(defs, p.Body)
		}
	}
	raw, _ := json.Marshal(sub)
	c.find(class, "subscription not renewed", fmt.Sprintf("subscription %s is %s with its period ending %s, before %s (the clock less the grace): its renewal did not run (tiered/package item %t, prorated %t)\n  the subscription: %s\n  its prices: %s",
		sub.SubscriptionID, sub.Status, sub.CurrentPeriodEnd.Format(time.RFC3339), due.Format(time.RFC3339), s.Priced, s.Prorated, raw, strings.Join(defs, "\n    ")), s.history)
}

// checkDrafts reads every invoice the model does not know to be past draft (but the drafts that
// wait for the merchant, having no autoFinalizeAt): no draft is past its autoFinalizeAt, and each
// invoice's figures add up.
func (c *client) checkDrafts(ctx context.Context, due time.Time) {
	for _, cu := range c.d.m.allCustomers() {
		cu.mu.Lock()
		for _, m := range cu.invoices {
			if (m.Status != "" && m.Status != "draft") || m.Manual {
				continue
			}
			inv, ok := c.readInvoice(ctx, cu, m)
			if !ok {
				continue
			}
			c.checkInvoice(inv, m)
			c.d.t.check("draft finalized in time")
			if inv.Status == remit.InvoiceDraft && inv.AutoFinalizeAt != nil && inv.AutoFinalizeAt.Before(due) {
				c.find(ClassOther, "draft past its autoFinalizeAt", fmt.Sprintf("invoice %s is a draft whose autoFinalizeAt %s is before %s (the clock less the grace): its invoice.auto_finalize job did not run, or failed (GET /v1/jobs?status=failed and the server log findings say which)",
					m.ID, inv.AutoFinalizeAt.Format(time.RFC3339), due.Format(time.RFC3339)), m.history)
			}
		}
		cu.mu.Unlock()
	}
}

// checkInvoice: the figures of an invoice add up as docs/invoices-and-tax.md defines them.
func (c *client) checkInvoice(inv remit.Invoice, m *Inv) {
	c.d.t.check("invoice figures")
	if p := invoiceProblems(inv); len(p) > 0 {
		c.find(ClassOther, "invoice figures: "+p[0], fmt.Sprintf("invoice %s (%s): %s", inv.InvoiceID, inv.Status, strings.Join(p, "; ")), m.history)
	}
}

// invoiceProblems answers what does not add up in an invoice.
func invoiceProblems(inv remit.Invoice) []string {
	var p []string
	var sub, disc, pre, tax int64
	for _, l := range inv.Lines {
		sub, disc, pre, tax = sub+l.Amount, disc+l.DiscountAmount, pre+l.PrepaidApplied, tax+l.TaxAmount
		if l.Amount < 0 || l.CreditedAmount > l.Amount-l.DiscountAmount-l.PrepaidApplied+l.TaxAmount {
			p = append(p, fmt.Sprintf("line %s: amount %d, credited %d", l.InvoiceLineID, l.Amount, l.CreditedAmount))
		}
	}
	if sub != inv.Subtotal || disc != inv.DiscountTotal || pre != inv.PrepaidApplied || tax != inv.TaxTotal {
		p = append(p, "totals are not the sums of the lines")
	}
	if inv.Total != inv.Subtotal-inv.DiscountTotal-inv.PrepaidApplied+inv.TaxTotal || inv.AmountDue != inv.Total {
		p = append(p, "total ≠ subtotal − discounts − prepaid + tax, or amountDue ≠ total")
	}
	if inv.CreditedTotal > inv.Total || inv.RefundedTotal > inv.AmountPaid || inv.OffsetTotal > inv.CreditedTotal {
		p = append(p, fmt.Sprintf("credited %d, refunded %d, offset %d beyond total %d / paid %d", inv.CreditedTotal, inv.RefundedTotal, inv.OffsetTotal, inv.Total, inv.AmountPaid))
	}
	switch inv.Status {
	case remit.InvoiceOpen, remit.InvoiceUncollectible:
		if inv.AmountRemaining != inv.AmountDue-inv.AmountPaid-inv.OffsetTotal || inv.AmountRemaining <= 0 {
			p = append(p, fmt.Sprintf("%s with remaining %d ≠ due %d − paid %d − offset %d, or not above 0", inv.Status, inv.AmountRemaining, inv.AmountDue, inv.AmountPaid, inv.OffsetTotal))
		}
	case remit.InvoicePaid:
		if inv.AmountRemaining != 0 {
			p = append(p, fmt.Sprintf("paid with %d remaining", inv.AmountRemaining))
		}
	case remit.InvoiceDraft, remit.InvoiceVoid:
		if inv.AmountPaid != 0 {
			p = append(p, fmt.Sprintf("%s with %d paid", inv.Status, inv.AmountPaid))
		}
	}
	return p
}

// checkVerification: GET /v1/verification is ok.
func (c *client) checkVerification(ctx context.Context) {
	var v remit.Verification
	a := c.call(ctx, "GET", "/v1/verification", nil, "")
	if !c.want(a, "verify", one(200)) || !decode(a, &v) {
		return
	}
	for _, ch := range v.Checks {
		c.d.t.check("verification " + ch.Name)
		if ch.OK {
			continue
		}
		var lines []string
		class := ClassOther
		for i, vi := range ch.Violations {
			if s := c.d.m.subByID(vi.ID); s != nil && vi.Resource == "subscription" && c.prorated(s) {
				class = ClassTieredProration
			}
			if strings.Contains(vi.Detail, "deadlock") {
				class = ClassDeadlock
			}
			if i < 5 {
				lines = append(lines, fmt.Sprintf("%s %s: %s", vi.Resource, vi.ID, vi.Detail))
			}
		}
		c.find(class, "verification "+ch.Name, fmt.Sprintf("GET /v1/verification: check %s has %d violations:\n  %s", ch.Name, ch.ViolationCount, strings.Join(lines, "\n  ")))
	}
}

// prorated reads s.Prorated under its customer's lock.
func (c *client) prorated(s *Sub) bool {
	cu := c.d.m.customerByID(s.Customer)
	if cu == nil {
		return false
	}
	cu.mu.Lock()
	defer cu.mu.Unlock()
	return s.Prorated
}

// checkFailedJobs: no scheduled job has failed (GET /v1/jobs?status=failed). A server without
// the route answers 404: the check is skipped and the report says so.
func (c *client) checkFailedJobs(ctx context.Context) {
	if c.d.jobsRoute.Load() == 2 {
		return
	}
	a := c.call(ctx, "GET", "/v1/jobs?status=failed&limit=100", nil, "")
	if a.Status == 404 {
		c.d.jobsRoute.Store(2)
		c.d.t.note("GET /v1/jobs?status=failed answered 404: the failed-jobs check is skipped (the route is not on this server); failed jobs are read from the server's log instead where the caller gives it")
		return
	}
	var page list[map[string]any]
	if !c.want(a, "list failed jobs", one(200)) || !decode(a, &page) {
		return
	}
	c.d.jobsRoute.Store(1)
	c.d.t.check("no failed job")
	for _, j := range page.Items {
		raw, _ := json.Marshal(j)
		kind, _ := j["kind"].(string)
		c.find(classOfFailure(string(raw)), "failed job "+kind, "GET /v1/jobs?status=failed lists "+string(raw))
	}
}

// classOfFailure classifies a failure by its text: a unit amount refused on a line is the known
// proration defect, and so is a renewal refused by validation (its log line names no field when
// several lines are refused: "The request has 2 invalid fields"; two pending proration charges on
// tiered prices give exactly that); a deadlock is the known PostgreSQL one.
func classOfFailure(s string) string {
	switch {
	case strings.Contains(s, "deadlock"):
		return ClassDeadlock
	case strings.Contains(s, "unitAmount"), strings.Contains(s, "subscription.renew") && strings.Contains(s, "validation_failure"):
		return ClassTieredProration
	}
	return ClassOther
}
