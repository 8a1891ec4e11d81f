package soak

import (
	"context"
	"fmt"

	"github.com/remit-billing/remit"
)

var creditReasons = []string{"duplicated_charge", "product_unsatisfactory", "order_change", "order_cancellation", "other"}

// creditBucket picks a bucket for a credit note on inv and the most it may hold
// (docs/credit-notes.md, "Limits"): offset at most what remains due, refund at most what was paid
// and not refunded, and every bucket at most what is left to credit.
func (c *client) creditBucket(inv remit.Invoice) (string, int64) {
	left := inv.Total - inv.CreditedTotal
	switch {
	case inv.Status == remit.InvoiceOpen && c.chance(0.6):
		return "offset", min(left, inv.AmountRemaining)
	case inv.Status == remit.InvoicePaid && c.chance(0.5):
		return "refund", min(left, inv.AmountPaid-inv.RefundedTotal)
	}
	return "credit", left
}

// opCreditNote issues a credit note on an open or paid invoice; one in ten asks for one more
// than the limit, which the model expects to be refused (409).
func opCreditNote(ctx context.Context, c *client) bool {
	cu, m, inv, ok := c.invoiceAction(ctx, "open", "paid")
	if !ok {
		return false
	}
	defer cu.mu.Unlock()
	bucket, limit := c.creditBucket(inv)
	amount, want := int64(0), 200
	switch {
	case limit <= 0 || c.chance(0.1):
		amount, want = max(limit, 0)+1, 409
	default:
		amount = c.between(1, max(1, limit/2))
	}
	if inv.Status != remit.InvoiceOpen && inv.Status != remit.InvoicePaid {
		want = 409
	}
	body := map[string]any{"invoiceId": m.ID, "reason": creditReasons[c.rng.IntN(len(creditReasons))],
		"lines": []any{map[string]any{"description": "Soak " + bucket, "amount": amount, "bucket": bucket}}}
	a := c.call(ctx, "POST", "/v1/credit-notes", body, c.key(), m.history)
	var cn remit.CreditNote
	if !c.wantState(a, "issue a credit note ("+bucket+")", one(want), m.history) || a.Status != 200 || !decode(a, &cn) {
		return true
	}
	c.d.m.addNote(cn.CreditNoteID)
	c.d.t.check("credit note as asked")
	if cn.Total != amount || cn.CreditAmount+cn.RefundAmount+cn.OffsetAmount != amount {
		c.find(ClassOther, "credit note other than asked", fmt.Sprintf("credit note %s of %d (%s) answered total %d, buckets %d/%d/%d",
			cn.CreditNoteID, amount, bucket, cn.Total, cn.CreditAmount, cn.RefundAmount, cn.OffsetAmount), m.history)
	}
	c.readInvoice(ctx, cu, m)
	return true
}
