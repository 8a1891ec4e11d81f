package remit

import "time"

// Finalization as a plan (docs/invoices-and-tax.md, "Finalization"): the engine loads what a
// finalization needs (the draft, its lines priced with their usage, the customer's spendable
// grants, the tax at the customer's place), PlanFinalization decides everything, and the engine
// persists the plan and emits its events. The decision is here, pure and table-tested
// (invoice_finalize_test.go); the engine's part is app/invoices.go (finalizeInTx).

// FinalizationInput is what a finalization decides from.
type FinalizationInput struct {
	Draft          Invoice          // the draft, its lines priced as they stand (amounts, usage)
	Lines          []PricedLine     // the lines as the arithmetic takes them, in the draft's order
	Coupons        []CouponTerms    // the draft's coupons, in order
	Grants         []SpendableGrant // the customer's spendable prepaid balance, earliest expiry first
	TaxOf          TaxFunc          // the tax at the customer's place
	FinalizedByRef *string          // who finalized it, when the request said (finalizedByRef)
	Now            time.Time        // the merchant clock
}

// FinalizationPlan is what finalizing a draft does.
type FinalizationPlan struct {
	// Invoice is the invoice as finalized: its figures (discounts, prepaid balance, tax), open,
	// finalizedAt now, no automatic finalization left. Its number is the engine's to take, last.
	Invoice Invoice
	// Applications are the prepaid balance to take from each lot (the ledger's entries).
	Applications []Application
	// PaidAtOnce: nothing remains to pay (a zero total, or prepaid balance covered it); it is
	// paid in the same transaction and collects nothing.
	PaidAtOnce bool
	// HostedPage: something remains to pay; the customer gets a hosted payment page (paymentUrl).
	HostedPage bool
	// Collect: charge the billing account's default payment method now (charge_automatically);
	// whether a processor and a default method exist is the engine's to find out.
	Collect bool
	// Events are the invoice's own events, in order; the tax transaction's events and those of a
	// collection attempt come from their own steps.
	Events []EventType
}

// PlanFinalization decides a draft's finalization: its figures in the arithmetic's order
// (ComputeInvoiceFigures), its new state, and what follows: paid at once, or a hosted page and,
// for charge_automatically, a collection attempt. A draft that is no longer a draft is the
// status table's conflict (InvoiceStates).
func PlanFinalization(in FinalizationInput) (FinalizationPlan, error) {
	if err := InvoiceStates.Check(in.Draft.InvoiceID, in.Draft.Status, ActionFinalize); err != nil {
		return FinalizationPlan{}, err
	}
	inv := in.Draft
	inv.Lines = append([]InvoiceLine(nil), in.Draft.Lines...)
	fig := ComputeInvoiceFigures(InvoiceFiguresInput{Lines: in.Lines, Coupons: in.Coupons, Grants: in.Grants}, in.TaxOf)
	ApplyFigures(&inv, fig)
	now := in.Now
	inv.Status, inv.FinalizedAt, inv.FinalizedByRef, inv.UpdatedAt, inv.AutoFinalizeAt = InvoiceOpen, &now, in.FinalizedByRef, now, nil
	inv.DueDate = DueDate(now, inv.DaysUntilDue)
	plan := FinalizationPlan{Invoice: inv, Applications: fig.Applications, Events: []EventType{EventInvoiceFinalized}}
	if inv.AmountRemaining == 0 {
		plan.PaidAtOnce = true
		plan.Events = append(plan.Events, EventInvoicePaid)
		return plan, nil
	}
	plan.HostedPage = true
	plan.Collect = inv.CollectionMethod == ChargeAutomatically
	return plan, nil
}

// DueDate is when an invoice finalized at finalizedAt is due: daysUntilDue whole days (of 24
// hours, UTC) later; none without payment terms.
func DueDate(finalizedAt time.Time, daysUntilDue *int64) *time.Time {
	if daysUntilDue == nil {
		return nil
	}
	due := finalizedAt.AddDate(0, 0, int(*daysUntilDue))
	return &due
}

// ApplyFigures writes the arithmetic's figures onto the invoice: each line's discount, prepaid
// balance and tax (by jurisdiction), and the totals. The amount due is the total; the amount
// remaining is what payments and offsets left of it.
func ApplyFigures(inv *Invoice, fig InvoiceFigures) {
	for i := range inv.Lines {
		lf := fig.Lines[i]
		l := &inv.Lines[i]
		l.DiscountAmount, l.PrepaidApplied, l.TaxAmount = lf.DiscountAmount, lf.PrepaidApplied, lf.TaxAmount
		l.Taxes = l.Taxes[:0:0] // no taxes stays as it was (none or empty), and nothing is shared with the draft
		for _, t := range lf.Taxes {
			l.Taxes = append(l.Taxes, LineTax{Jurisdiction: t.Jurisdiction, Rate: float64(t.RatePPM) / 1e6, RatePPM: t.RatePPM,
				TaxableAmount: t.TaxableAmount, TaxAmount: t.TaxAmount})
		}
	}
	inv.Subtotal, inv.DiscountTotal, inv.PrepaidApplied, inv.TaxTotal, inv.Total = fig.Subtotal, fig.DiscountTotal, fig.PrepaidApplied, fig.TaxTotal, fig.Total
	inv.AmountDue = fig.Total
	inv.AmountRemaining = fig.Total - inv.AmountPaid - inv.OffsetTotal
}
