package tax

import "github.com/remit-billing/remit"

// InvoiceInput is everything the arithmetic of one invoice needs.
type InvoiceInput struct {
	Lines   []remit.PricedLine
	Coupons []remit.CouponTerms
	Grants  []remit.SpendableGrant // spendable prepaid balance, earliest expiry first
	Rates   []Component            // the customer's jurisdictions
	Exempt  bool
}

// LineFigures are one line's computed figures.
type LineFigures struct {
	Amount         int64
	DiscountAmount int64
	PrepaidApplied int64
	TaxAmount      int64
	Taxes          []LineTax // one per jurisdiction
}

// InvoiceFigures are the computed lines and totals. Totals are sums of the line figures:
// Total = Subtotal − DiscountTotal − PrepaidApplied + TaxTotal.
type InvoiceFigures struct {
	Lines          []LineFigures
	Applications   []remit.Application
	Subtotal       int64
	DiscountTotal  int64
	PrepaidApplied int64
	TaxTotal       int64
	Total          int64
}

// ComputeInvoice runs the invoice arithmetic in its fixed order: discounts, prepaid balance on
// eligible lines after discounts, then tax per line and jurisdiction on what is left, rounded
// half-up. It is pure: the same input always gives the same figures.
func ComputeInvoice(in InvoiceInput) InvoiceFigures {
	n := len(in.Lines)
	amounts := make([]int64, n)
	for i, l := range in.Lines {
		amounts[i] = l.Amount
	}
	disc := remit.DiscountLines(amounts, in.Coupons)
	after := make([]int64, n)
	for i := range amounts {
		after[i] = amounts[i] - disc[i]
	}
	apps, prepaid := remit.ApplyPrepaid(in.Lines, after, in.Grants)
	taxable := make([]int64, n)
	for i := range after {
		taxable[i] = after[i] - prepaid[i]
	}
	taxes := Compute(taxable, in.Rates, in.Exempt)
	out := InvoiceFigures{Lines: make([]LineFigures, n), Applications: apps}
	for i := range in.Lines {
		out.Lines[i] = LineFigures{Amount: amounts[i], DiscountAmount: disc[i], PrepaidApplied: prepaid[i]}
	}
	for _, t := range taxes {
		lf := &out.Lines[t.Line]
		lf.TaxAmount += t.TaxAmount
		lf.Taxes = append(lf.Taxes, t)
	}
	for _, lf := range out.Lines {
		out.Subtotal += lf.Amount
		out.DiscountTotal += lf.DiscountAmount
		out.PrepaidApplied += lf.PrepaidApplied
		out.TaxTotal += lf.TaxAmount
	}
	out.Total = out.Subtotal - out.DiscountTotal - out.PrepaidApplied + out.TaxTotal
	return out
}
