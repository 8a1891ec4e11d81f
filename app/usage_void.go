package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Usage corrections (docs/usage.md "Corrections"). A void takes a usage event out of every total
// in one transaction with everything it changes: drafts need nothing (they reprice on refresh);
// each finalized invoice line that billed the event gets a credit note (reason usage_correction,
// bucket credit) for the difference the void makes to its amount, and the event, the line and the
// credit note name each other. Thresholds already crossed stay crossed.
//
// Locks, in the order a usage event takes them (so a void and an event never wait for each other
// in a circle): the event's row, its unique value's, the running total's. The total's lock is the
// one finalization takes before it reads usage (Invoicing.lockUsage): a void and a finalization of
// the same period run one after the other, and the void, reading invoices after the lock, either
// precedes the finalization (which then excludes the event) or sees it (and credits the line).

// VoidUsageEvent voids a usage event and corrects what it billed; it emits usage_event.voided,
// and credit_note.created for each credit note.
//
// Errors: not_found (the event), conflict (already voided; a charge of an invoice to credit is in
// flight: retry once it settles).
func (us *Usage) VoidUsageEvent(ctx context.Context, m remit.MerchantAccount, eventID string) (remit.UsageEvent, error) {
	now := micro(us.Now(m))
	e, err := inTx(ctx, us.DB, func(ctx context.Context, tx *store.Tx) (remit.UsageEvent, error) {
		e, err := tx.GetUsageEvent(ctx, m.ID, eventID, store.Locked)
		if err != nil {
			return e, err
		}
		if e.VoidedAt != nil {
			return e, remit.StateConflict("usage event", eventID, remit.UsageVoided, "voided")
		}
		agg, err := us.aggregationOf(ctx, tx.Q, m, e.MeterID)
		if err != nil {
			return e, err
		}
		if e.UniqueValue != nil {
			if err := tx.LockUniqueValue(ctx, m.ID, e.CustomerID, e.MeterID, *e.UniqueValue); err != nil {
				return e, err
			}
		}
		if _, _, err := tx.LockUsageTotal(ctx, m.ID, e.CustomerID, e.MeterID, now); err != nil {
			return e, err
		}
		billed, before, err := us.billedLines(ctx, tx, m, e, agg)
		if err != nil {
			return e, err
		}
		if ok, err := tx.VoidUsage(ctx, e, agg, now); err != nil {
			return e, err
		} else if !ok {
			return e, remit.StateConflict("usage event", eventID, remit.UsageVoided, "voided")
		}
		e.Status, e.VoidedAt, e.Corrections = remit.UsageVoided, &now, []remit.UsageCorrection{}
		for i, b := range billed {
			c, err := us.correctLine(ctx, tx, m, e, agg, b, before[i], now)
			if err != nil {
				return e, err
			}
			e.Corrections = append(e.Corrections, c)
		}
		if err := tx.SetUsageCorrections(ctx, m.ID, e.EventID, e.Corrections); err != nil {
			return e, err
		}
		if err := us.catalog.usageChangedEntitlements(ctx, tx, m, e.CustomerID, e.MeterID); err != nil {
			return e, err
		}
		return e, us.Emit(ctx, tx, scopeOf(m), now, remit.EventUsageEventVoided, e.EventID, e)
	})
	return e, err
}

// billedLines are the finalized usage lines that billed event e (its timestamp in their period,
// recorded before they were finalized), with the usage of each period before the void.
func (us *Usage) billedLines(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, e remit.UsageEvent, agg string) ([]store.BilledUsageLine, []int64, error) {
	lines, err := tx.BilledUsageLines(ctx, m.ID, e.CustomerID, e.MeterID, e.Timestamp)
	if err != nil {
		return nil, nil, err
	}
	var billed []store.BilledUsageLine
	var before []int64
	for _, b := range lines {
		if b.Invoice.FinalizedAt == nil || !b.Line.Billed(e, *b.Invoice.FinalizedAt) {
			continue // counted after the invoice was finalized: it did not bill it
		}
		n, err := tx.AggregateUsage(ctx, agg, m.ID, e.CustomerID, e.MeterID, ceilMicros(b.From), ceilMicros(b.To))
		if err != nil {
			return nil, nil, err
		}
		billed, before = append(billed, b), append(before, n)
	}
	return billed, before, nil
}

// correctLine applies the void to one finalized line: the line's usage drops by what the void took
// out of its period (remit.CorrectedUsage), the difference in its price is credited
// (remit.UsageCorrectionCredit, then remit.UsageCorrectionTotal), and the line records the
// correction.
func (us *Usage) correctLine(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, e remit.UsageEvent, agg string, b store.BilledUsageLine, before int64, now time.Time) (remit.UsageCorrection, error) {
	after, err := tx.AggregateUsage(ctx, agg, m.ID, e.CustomerID, e.MeterID, ceilMicros(b.From), ceilMicros(b.To))
	if err != nil {
		return remit.UsageCorrection{}, err
	}
	// The line as it stands, under the invoice's lock: what is left to credit of it is current.
	inv, err := tx.GetInvoice(ctx, m.ID, b.Invoice.InvoiceID, store.Locked)
	if err != nil {
		return remit.UsageCorrection{}, err
	}
	l := b.Line
	for _, x := range inv.Lines {
		if x.InvoiceLineID == l.InvoiceLineID {
			l = x
		}
	}
	b.Invoice = inv
	c := remit.UsageCorrection{EventID: e.EventID, InvoiceID: b.Invoice.InvoiceID, InvoiceLineID: l.InvoiceLineID,
		UsageBefore: l.BilledUsage()}
	c.UsageAfter = remit.CorrectedUsage(c.UsageBefore, before, after)
	price, err := tx.GetPrice(ctx, m.ID, l.PriceID)
	if err != nil {
		return c, err
	}
	pricing := price.Pricing(l.UnitAmount)
	if l.UnitOverride {
		pricing = remit.UsagePricing{UnitAmount: l.UnitAmount}
	}
	if c.Amount, err = remit.UsageCorrectionCredit(pricing, c.UsageBefore, c.UsageAfter); err != nil {
		return c, err
	}
	if credit := remit.UsageCorrectionTotal(l, c.Amount); credit > 0 && creditable(b.Invoice) {
		cn, err := us.creditNotes.issueCreditNote(ctx, tx, m, usageCreditNote(e, b, c, credit), now)
		if err != nil {
			return c, err
		}
		c.CreditNoteID = &cn.CreditNoteID
	}
	return c, tx.AddLineUsageCorrection(ctx, m.ID, b.Invoice.InvoiceID, l, c)
}

// creditable reports whether an invoice takes credit notes (open or paid); an uncollectible one
// records the correction without one: nothing of it was collected.
func creditable(inv remit.Invoice) bool { return remit.CheckCreditable(inv) == nil }

// usageCreditNote is the credit note of a usage correction: one line on the corrected invoice
// line, in the credit bucket (the customer's prepaid balance), naming the voided event.
func usageCreditNote(e remit.UsageEvent, b store.BilledUsageLine, c remit.UsageCorrection, credit int64) remit.CreditNoteInput {
	bucket := remit.BucketCredit
	desc := fmt.Sprintf("Usage correction: event %s voided (usage %d → %d)", e.EventID, c.UsageBefore, c.UsageAfter)
	lineID := b.Line.InvoiceLineID
	eventID := e.EventID
	return remit.CreditNoteInput{InvoiceID: b.Invoice.InvoiceID, Reason: remit.ReasonUsageCorrection, Description: &desc,
		UsageEventID: &eventID,
		Lines:        []remit.CreditNoteLineInput{{InvoiceLineID: &lineID, Bucket: &bucket, Description: desc, Amount: credit}}}
}
