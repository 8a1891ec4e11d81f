package remit_test

import (
	"testing"

	"github.com/remit-billing/remit"
)

// paidInvoice has two lines: 10.00 + 0.73 tax and 5.00 without tax, all paid.
func paidInvoice() remit.Invoice {
	return remit.Invoice{InvoiceID: "inv_1", CustomerID: "cus_1", Currency: "USD", Status: remit.InvoicePaid,
		Total: 1573, AmountPaid: 1573, Lines: []remit.InvoiceLine{
			{InvoiceLineID: "il_a", Amount: 1000, TaxAmount: 73, Taxes: []remit.LineTax{{Jurisdiction: "US-NY", TaxAmount: 73, RatePPM: 73000}}},
			{InvoiceLineID: "il_b", Amount: 500},
		}}
}

// TestPlanCreditNote: what a credit note does to its invoice, decided without a store.
func TestPlanCreditNote(t *testing.T) {
	ilA, ilB := "il_a", "il_b"
	refund := remit.BucketRefund
	for _, c := range []struct {
		name     string
		inv      func() remit.Invoice
		in       remit.CreditNoteInput
		code     remit.Code
		reason   any
		total    int64
		taxTotal int64
		credit   int64 // the credit bucket (the default on a paid invoice)
		touched  []int
	}{
		{name: "a whole line, its tax reversed", inv: paidInvoice, in: remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilA, Amount: 1073}}},
			total: 1073, taxTotal: 73, credit: 1073, touched: []int{0}},
		{name: "part of a line reverses its share of the tax (73 × 536 ÷ 1073 = 36.46)", inv: paidInvoice,
			in:    remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilA, Amount: 536}}},
			total: 536, taxTotal: 36, credit: 536, touched: []int{0}},
		{name: "unattributed: spread over what is left of every line", inv: paidInvoice,
			in:    remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{Amount: 1573}}},
			total: 1573, taxTotal: 73, credit: 1573, touched: []int{0, 1}},
		{name: "refund bucket", inv: paidInvoice, in: remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilB, Amount: 500, Bucket: &refund}}},
			total: 500, touched: []int{1}},
		{name: "a draft takes no credit note", inv: func() remit.Invoice { i := paidInvoice(); i.Status = remit.InvoiceDraft; return i },
			in: remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{Amount: 1}}}, code: remit.EConflict, reason: "invalid_state"},
		{name: "a line of another invoice", inv: paidInvoice, in: remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: ptr("il_x"), Amount: 1}}},
			code: remit.ENotFound},
		{name: "bucket totals that disagree with the lines", inv: paidInvoice,
			in:   remit.CreditNoteInput{CreditAmount: ptr[int64](5), RefundAmount: ptr[int64](1), Lines: []remit.CreditNoteLineInput{{Amount: 10}}},
			code: remit.EInvalid},
		{name: "more than is left of a line", inv: paidInvoice, in: remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilB, Amount: 501}}},
			code: remit.EConflict, reason: "line_amount_exceeds_remaining"},
		{name: "more than is left of the invoice", inv: paidInvoice,
			in:   remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilA, Amount: 1073}, {InvoiceLineID: &ilB, Amount: 500}, {Amount: 1}}},
			code: remit.EConflict, reason: "total_exceeds_invoice"},
		{name: "an offset on a paid invoice", inv: paidInvoice,
			in:   remit.CreditNoteInput{Lines: []remit.CreditNoteLineInput{{InvoiceLineID: &ilB, Amount: 100, Bucket: ptr(remit.BucketOffset)}}},
			code: remit.EConflict, reason: "offset_exceeds_remaining"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := c.inv()
			before := inv.Lines[0].Taxes[0].Reversed
			plan, err := remit.PlanCreditNote(inv, c.in)
			if c.code != "" {
				var e *remit.Error
				if !errorAs(err, &e) || e.Code != c.code || (c.reason != nil && e.Details["reason"] != c.reason) {
					t.Fatalf("err %v, want %s %v", err, c.code, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := plan.Note
			if n.Total != c.total || n.TaxTotal != c.taxTotal || n.CreditAmount != c.credit || len(plan.Touched) != len(c.touched) {
				t.Fatalf("note total %d tax %d credit %d touched %v; want %d %d %d %v", n.Total, n.TaxTotal, n.CreditAmount, plan.Touched, c.total, c.taxTotal, c.credit, c.touched)
			}
			var reversed, credited int64
			for _, r := range plan.Reversal {
				reversed -= r.TaxAmount
			}
			for _, l := range plan.Invoice.Lines {
				credited += l.CreditedAmount
			}
			if reversed != c.taxTotal || credited != c.total {
				t.Fatalf("reversal %d, credited %d", reversed, credited)
			}
			if inv.Lines[0].Taxes[0].Reversed != before || inv.Lines[0].CreditedAmount != 0 {
				t.Fatal("the plan changed the invoice it was given")
			}
		})
	}
}

// TestReversalShareLargeLines: the share is exact for lines whose tax × credited amount passes
// int64 (a line of 10^12 minor units taxed 10^11, credited by halves).
func TestReversalShareLargeLines(t *testing.T) {
	const taxable, lineTax = 1_000_000_000_000, 100_000_000_001
	first := remit.ReversalShare(lineTax, taxable, 0, taxable/2, 0)
	if first != 50_000_000_001 { // 50,000,000,000.5 rounded half-up
		t.Fatalf("first half reversed %d, want 50000000001", first)
	}
	if rest := remit.ReversalShare(lineTax, taxable, taxable/2, taxable/2, first); first+rest != lineTax {
		t.Fatalf("halves reversed %d + %d, want %d in all", first, rest, lineTax)
	}
}

// TestUnreversedTax: what a void still reverses is the sale's tax less every credit note's
// reversal, per invoice line and jurisdiction; nothing left, no line.
func TestUnreversedTax(t *testing.T) {
	sale := remit.TaxTransaction{Lines: []remit.TaxTransactionLine{
		{LineID: "l1", Jurisdiction: "CA", TaxableAmount: 5000, TaxAmount: 250},
		{LineID: "l1", Jurisdiction: "CA-BC", TaxableAmount: 5000, TaxAmount: 350},
		{LineID: "l2", Jurisdiction: "CA", TaxableAmount: 1000, TaxAmount: 50},
	}}
	rev := func(lines ...remit.TaxTransactionLine) remit.TaxTransaction {
		return remit.TaxTransaction{Lines: lines}
	}
	for _, tc := range []struct {
		name      string
		reversals []remit.TaxTransaction
		want      []remit.TaxTransactionLine
	}{
		{"no credit note: the whole sale", nil, sale.Lines},
		{"one line partly reversed", []remit.TaxTransaction{rev(remit.TaxTransactionLine{LineID: "l1", Jurisdiction: "CA", TaxableAmount: -2000, TaxAmount: -100})},
			[]remit.TaxTransactionLine{{LineID: "l1", Jurisdiction: "CA", TaxableAmount: 3000, TaxAmount: 150}, sale.Lines[1], sale.Lines[2]}},
		{"two notes, one line reversed in full", []remit.TaxTransaction{
			rev(remit.TaxTransactionLine{LineID: "l2", Jurisdiction: "CA", TaxableAmount: -400, TaxAmount: -20}),
			rev(remit.TaxTransactionLine{LineID: "l2", Jurisdiction: "CA", TaxableAmount: -600, TaxAmount: -30},
				remit.TaxTransactionLine{LineID: "l1", Jurisdiction: "CA-BC", TaxableAmount: -1000, TaxAmount: -70}),
		}, []remit.TaxTransactionLine{sale.Lines[0], {LineID: "l1", Jurisdiction: "CA-BC", TaxableAmount: 4000, TaxAmount: 280}}},
		{"everything reversed", []remit.TaxTransaction{rev(
			remit.TaxTransactionLine{LineID: "l1", Jurisdiction: "CA", TaxableAmount: -5000, TaxAmount: -250},
			remit.TaxTransactionLine{LineID: "l1", Jurisdiction: "CA-BC", TaxableAmount: -5000, TaxAmount: -350},
			remit.TaxTransactionLine{LineID: "l2", Jurisdiction: "CA", TaxableAmount: -1000, TaxAmount: -50})}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := remit.UnreversedTax(sale, tc.reversals)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("line %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
