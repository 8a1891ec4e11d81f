package remit

import (
	"fmt"
)

// The rules of the money checks of invoices and their payments (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// InvoiceLineTotals are the sums of an invoice's line figures.
type InvoiceLineTotals struct {
	Amount, Discount, Prepaid, Tax int64
}

// InvoicePaymentFacts is an invoice's stored figures with what its lines, payments and the
// prepaid balance ledger say.
type InvoicePaymentFacts struct {
	InvoiceID string
	Status    InvoiceStatus
	// Its stored figures.
	Subtotal, DiscountTotal, PrepaidApplied, TaxTotal, Total, AmountDue int64
	AmountPaid, AmountRemaining, OffsetTotal, RefundedTotal             int64
	// What the rest of the store says.
	Lines    InvoiceLineTotals
	Paid     int64 // the amounts of its succeeded payments, summed
	Refunded int64 // their amountRefunded, summed
	Applied  int64 // what its application entries took from the prepaid balance
}

// CheckInvoicePaymentFacts checks an invoice's figures against its lines (total = subtotal −
// discounts − prepaid + tax = amount due), amount paid against its succeeded payments, refunded
// total against what was refunded of them, prepaid applied against the ledger, and the amount
// remaining and status against each other: amount remaining = amount due − amount paid − offsets
// (0 once void), positive while open or uncollectible, 0 once paid.
func CheckInvoicePaymentFacts(f InvoicePaymentFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for _, c := range []struct {
		what        string
		stored, sum int64
	}{{"subtotal", f.Subtotal, f.Lines.Amount}, {"discount total", f.DiscountTotal, f.Lines.Discount},
		{"prepaid applied", f.PrepaidApplied, f.Lines.Prepaid}, {"tax total", f.TaxTotal, f.Lines.Tax}} {
		if c.stored != c.sum {
			add("has %s %d but its lines sum to %d", c.what, c.stored, c.sum)
		}
	}
	if want := f.Subtotal - f.DiscountTotal - f.PrepaidApplied + f.TaxTotal; f.Total != want {
		add("has total %d but subtotal %d − discounts %d − prepaid %d + tax %d is %d", f.Total, f.Subtotal, f.DiscountTotal, f.PrepaidApplied, f.TaxTotal, want)
	}
	if f.AmountDue != f.Total {
		add("has amount due %d but total %d", f.AmountDue, f.Total)
	}
	if f.AmountPaid != f.Paid {
		add("has amount paid %d but its succeeded payments sum to %d", f.AmountPaid, f.Paid)
	}
	if f.RefundedTotal != f.Refunded {
		add("has refunded total %d but %d of its payments was refunded", f.RefundedTotal, f.Refunded)
	}
	if f.PrepaidApplied != f.Applied {
		add("has prepaid applied %d but its balance applications took %d", f.PrepaidApplied, f.Applied)
	}
	return append(out, invoiceStatusProblems(f)...)
}

// invoiceStatusProblems checks the amount remaining and the status of an invoice against its
// amounts.
func invoiceStatusProblems(f InvoicePaymentFacts) []string {
	var out []string
	left := f.AmountDue - f.AmountPaid - f.OffsetTotal
	rel := func() {
		if f.AmountRemaining != left {
			out = append(out, fmt.Sprintf("has amount remaining %d but amount due %d − paid %d − offset by credit notes %d is %d",
				f.AmountRemaining, f.AmountDue, f.AmountPaid, f.OffsetTotal, left))
		}
	}
	switch f.Status {
	case InvoiceDraft:
		if f.AmountPaid != 0 || f.OffsetTotal != 0 || f.RefundedTotal != 0 {
			out = append(out, fmt.Sprintf("is a draft yet has amount paid %d, offset %d and refunded %d: a draft is neither paid nor credited",
				f.AmountPaid, f.OffsetTotal, f.RefundedTotal))
		}
		rel()
	case InvoiceOpen, InvoiceUncollectible:
		rel()
		if f.AmountRemaining <= 0 {
			out = append(out, fmt.Sprintf("is %s with amount remaining %d: an invoice with nothing left to pay is paid", f.Status, f.AmountRemaining))
		}
	case InvoicePaid:
		rel()
		if f.AmountRemaining != 0 {
			out = append(out, fmt.Sprintf("is paid but has amount remaining %d", f.AmountRemaining))
		}
	case InvoiceVoid:
		if f.AmountRemaining != 0 {
			out = append(out, fmt.Sprintf("is void but has amount remaining %d", f.AmountRemaining))
		}
		if f.AmountPaid != 0 {
			out = append(out, fmt.Sprintf("is void but has amount paid %d: only an unpaid invoice can be voided", f.AmountPaid))
		}
	default:
		out = append(out, fmt.Sprintf("has status %q, which is no invoice state", f.Status))
	}
	return out
}

// InvoiceLinesFacts is whether an invoice's lines as kept in its own row (what an invoice read
// answers) are its lines as stored line by line (what the ledger of usage corrections, the MRR
// chart and the other checks read).
type InvoiceLinesFacts struct {
	InvoiceID string
	Agree     bool
}

// CheckInvoiceLinesFacts checks that an invoice's two copies of its lines agree.
func CheckInvoiceLinesFacts(f InvoiceLinesFacts) []string {
	if f.Agree {
		return nil
	}
	return []string{"its lines as kept with the invoice (what GET /v1/invoices/{id} answers) differ from its stored lines"}
}
