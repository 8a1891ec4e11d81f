package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Applying a proration (docs/quotes-and-subscriptions.md "Proration"). remit.ProrateChange prices
// it; this file puts it where the customer sees it, depending on the invoice that billed the
// current period:
//
//   - still a draft: its lines are revised, so that it bills exactly the time used of the old
//     items ("Used time on …") and the remaining time of the new ones ("Remaining time on …");
//   - open or paid: the unused time is credited with a credit note on it (bucket offset while it
//     is open, credit once paid: the credit becomes prepaid balance, which pays the next invoice),
//     and charges go on the next renewal invoice (create_prorations) or on an invoice finalized at
//     once (always_invoice).
//
// Remit's invoices have no negative lines, so a credit is never a line of the next invoice.

// applyProration applies a change's (or a cancel's) proration to the subscription's current
// period. reason is the credit note's.
func (qs *Quotes) applyProration(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription,
	lines []remit.ProrationLine, behavior, reason string, now time.Time) error {
	if len(lines) == 0 || behavior == remit.ProrationNone {
		return nil
	}
	inv, ok, err := qs.currentPeriodInvoice(ctx, tx, m, *sub)
	if err != nil {
		return err
	}
	if ok && inv.Status.Allows(remit.ActionRevise) {
		if err := qs.reviseForProration(ctx, tx, m, &inv, lines, now); err != nil {
			return err
		}
		if behavior == remit.ProrationAlways {
			_, err := qs.invoicing.finalizeInTx(ctx, tx, m, inv.InvoiceID, nil, now)
			return err
		}
		return nil
	}
	shortenPending(sub, lines, now)
	var charges []remit.ProrationLine
	for _, l := range lines {
		if !l.Credit {
			charges = append(charges, l)
		}
	}
	if ok && inv.Status.Allows(remit.ActionCredit) {
		if err := qs.creditUnusedTime(ctx, tx, m, *sub, inv, lines, reason, now); err != nil {
			return err
		}
	}
	if len(charges) == 0 {
		return nil
	}
	if behavior == remit.ProrationAlways {
		return qs.invoiceCharges(ctx, tx, m, sub, charges, now)
	}
	for _, c := range charges {
		sub.PendingProrations = append(sub.PendingProrations, remit.PendingProration{PriceID: c.Item.PriceID, Description: c.Description,
			Amount: c.Amount, PeriodStart: c.From, PeriodEnd: c.To})
	}
	return nil
}

// currentPeriodInvoice is the invoice that billed the subscription's current period in advance,
// if there is one.
func (qs *Quotes) currentPeriodInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub remit.Subscription) (remit.Invoice, bool, error) {
	if sub.LatestInvoiceID == nil {
		return remit.Invoice{}, false, nil
	}
	inv, err := tx.GetInvoice(ctx, m.ID, *sub.LatestInvoiceID, store.Locked)
	if err != nil {
		return inv, false, err
	}
	return inv, inv.PeriodStart != nil && inv.PeriodStart.Equal(sub.CurrentPeriodStart), nil
}

// billsAfter reports whether invoice line l bills item priceID for time after at, in the period
// that starts at periodStart: the item's line, or the remaining-time line of an earlier change.
func billsAfter(l remit.InvoiceLine, priceID string, periodStart, at time.Time) bool {
	return l.PriceID == priceID && l.PriceType == remit.PriceFixedRecurring && remit.Overlaps(l.PeriodStart, l.PeriodEnd, periodStart, at)
}

// reviseForProration revises a draft that bills the current period: each line of a credited item
// now bills only the time used before the change, each charge is a line of its own.
func (qs *Quotes) reviseForProration(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, lines []remit.ProrationLine, now time.Time) error {
	periodStart := *inv.PeriodStart
	for _, pl := range lines {
		if !pl.Credit {
			s, e := pl.From, pl.To
			inv.Lines = append(inv.Lines, remit.InvoiceLine{Object: "invoice_line", InvoiceLineID: remit.NewID("il"), PriceID: pl.Item.PriceID,
				PriceType: pl.Item.PriceType, LineType: remit.LineRecurring, Description: pl.Description, Quantity: 1, UnitAmount: pl.Amount,
				UnitOverride: true, PeriodStart: &s, PeriodEnd: &e})
			continue
		}
		for i := range inv.Lines {
			l := &inv.Lines[i]
			if !billsAfter(*l, pl.Item.PriceID, periodStart, pl.From) {
				continue
			}
			amount := l.Amount // as priced: unit amount × quantity, or by tiers or packages
			from, to := *l.PeriodStart, pl.From
			l.Quantity, l.UnitAmount, l.UnitOverride = 1, amount-remit.UnusedOf(amount, from, *l.PeriodEnd, to), true
			l.UsageQuantity, l.TierBreakdown = nil, nil // one charge for the time used, however the price prices
			l.PeriodEnd = &to
			l.Description = fmt.Sprintf("Used time on %s from %s to %s", pl.Name, remit.ProrationDate(from), remit.ProrationDate(to))
		}
	}
	return qs.invoicing.reviseDraft(ctx, tx, m, inv, now)
}

// shortenPending takes the time after `at` out of the pending proration charges of the items
// credited (a second change in one period): a charge not yet billed is reduced, not credited.
func shortenPending(sub *remit.Subscription, lines []remit.ProrationLine, at time.Time) {
	for _, pl := range lines {
		if !pl.Credit {
			continue
		}
		for i := range sub.PendingProrations {
			p := &sub.PendingProrations[i]
			if p.PriceID != pl.Item.PriceID || !p.PeriodEnd.After(at) {
				continue
			}
			p.Amount -= remit.UnusedOf(p.Amount, p.PeriodStart, p.PeriodEnd, at)
			p.PeriodEnd = at
		}
	}
	kept := []remit.PendingProration{}
	for _, p := range sub.PendingProrations {
		if p.Amount > 0 {
			kept = append(kept, p)
		}
	}
	sub.PendingProrations = kept
}

// creditUnusedTime issues the credit note for the unused time of the credited items on the open
// or paid invoice that billed the current period: each item's line, prorated on what it billed
// (after discounts, with tax), less what earlier credits of it gave back.
func (qs *Quotes) creditUnusedTime(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub remit.Subscription, inv remit.Invoice,
	lines []remit.ProrationLine, reason string, now time.Time) error {
	bucket := "credit" // paid: the credit becomes prepaid balance
	if inv.Status.Allows(remit.ActionOffset) {
		bucket = "offset" // open: the customer owes less
	}
	var in []remit.CreditNoteLineInput
	for _, pl := range lines {
		if !pl.Credit {
			continue
		}
		for _, l := range inv.Lines {
			if !billsAfter(l, pl.Item.PriceID, sub.CurrentPeriodStart, now) {
				continue
			}
			// Proration credits are tails of the line's period (from a moment to its end), so what
			// was credited before covers the end of what is unused now: credit only the rest.
			amt := min(remit.UnusedOf(remit.LineBilled(l), *l.PeriodStart, *l.PeriodEnd, now)-l.CreditedAmount, remit.LineCreditable(l))
			if amt > 0 {
				id, b := l.InvoiceLineID, bucket
				in = append(in, remit.CreditNoteLineInput{InvoiceLineID: &id, Bucket: &b, Description: pl.Description, Amount: amt})
			}
		}
	}
	if len(in) == 0 {
		return nil
	}
	_, err := qs.creditNotes.issueCreditNote(ctx, tx, m, remit.CreditNoteInput{InvoiceID: inv.InvoiceID, Reason: reason, Lines: in}, now)
	return err
}

// invoiceCharges bills proration charges on an invoice of their own, finalized at once
// (always_invoice).
func (qs *Quotes) invoiceCharges(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, charges []remit.ProrationLine, now time.Time) error {
	var lines []remit.InvoiceLineInput
	var periods []*[2]time.Time
	for _, c := range charges {
		unit, desc, q := c.Amount, c.Description, int64(1)
		lines = append(lines, remit.InvoiceLineInput{PriceID: c.Item.PriceID, Quantity: &q, UnitAmount: &unit, Description: &desc, Prorated: true})
		periods = append(periods, &[2]time.Time{c.From, c.To})
	}
	inv, err := qs.invoicing.CreateDraftInvoice(ctx, tx, m, remit.InvoiceDraftInput{CustomerID: sub.CustomerID, BillingAccountID: sub.BillingAccountID,
		Currency: sub.Currency, Lines: lines, LinePeriods: periods, PeriodStart: &charges[0].From, PeriodEnd: &charges[0].To,
		SubscriptionID: &sub.SubscriptionID}, now)
	if err != nil {
		return err
	}
	_, err = qs.invoicing.finalizeInTx(ctx, tx, m, inv.InvoiceID, nil, now)
	return err
}

// pendingProrationLines are the pending proration charges as lines of the next renewal invoice.
func pendingProrationLines(sub remit.Subscription) ([]remit.InvoiceLineInput, []*[2]time.Time) {
	var lines []remit.InvoiceLineInput
	var periods []*[2]time.Time
	for _, p := range sub.PendingProrations {
		unit, desc, q := p.Amount, p.Description, int64(1)
		lines = append(lines, remit.InvoiceLineInput{PriceID: p.PriceID, Quantity: &q, UnitAmount: &unit, Description: &desc, Prorated: true})
		periods = append(periods, &[2]time.Time{p.PeriodStart, p.PeriodEnd})
	}
	return lines, periods
}
