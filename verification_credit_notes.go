package remit

import (
	"fmt"
)

// The rules of the money checks of credit notes (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// CreditNoteFacts is a credit note with its invoice, its refunds and its prepaid balance credit.
type CreditNoteFacts struct {
	CreditNoteID   string
	InvoiceID      string
	Currency       string
	Total          int64
	CreditAmount   int64
	RefundAmount   int64
	OffsetAmount   int64
	TaxTotal       int64
	Lines          []CreditNoteLine
	LinesUnread    bool // its stored lines are not valid JSON
	BalanceEntryID *string
	// The invoice, when it exists.
	InvoiceFound    bool
	InvoiceStatus   InvoiceStatus
	InvoiceCurrency string
	Refunds         int64 // the amounts of the refunds it made, whatever their state, summed
	FailedRefunds   int64 // the amounts of those that failed (credited to the balance instead)
	Credited        int64 // the amounts of the credit_note balance entries naming it, summed
}

// CheckCreditNoteFacts checks a credit note against itself (total = credit + refund + offset
// buckets = its lines; tax within the total; each line's allocations add up to it), against its
// invoice (exists, same currency, not a draft), its refunds (the refund bucket) and the prepaid
// balance (the credit bucket, plus any refund that failed, is credited to the customer).
func CheckCreditNoteFacts(f CreditNoteFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if sum := f.CreditAmount + f.RefundAmount + f.OffsetAmount; f.Total != sum {
		add("has total %d but its credit %d, refund %d and offset %d buckets add up to %d", f.Total, f.CreditAmount, f.RefundAmount, f.OffsetAmount, sum)
	}
	if f.CreditAmount < 0 || f.RefundAmount < 0 || f.OffsetAmount < 0 {
		add("has a negative bucket (credit %d, refund %d, offset %d)", f.CreditAmount, f.RefundAmount, f.OffsetAmount)
	}
	if f.TaxTotal < 0 || f.TaxTotal > f.Total {
		add("reverses tax %d of a total of %d: the tax is a share of the total", f.TaxTotal, f.Total)
	}
	out = append(out, creditNoteLineProblems(f)...)
	switch {
	case !f.InvoiceFound:
		add("is on invoice %s, which does not exist", f.InvoiceID)
	case f.InvoiceCurrency != f.Currency:
		add("is in %s but its invoice %s is in %s", f.Currency, f.InvoiceID, f.InvoiceCurrency)
	case f.InvoiceStatus == InvoiceDraft:
		add("is on invoice %s, a draft: only open and paid invoices take credit notes", f.InvoiceID)
	}
	if f.Refunds != f.RefundAmount {
		add("has refund bucket %d but its refunds sum to %d", f.RefundAmount, f.Refunds)
	}
	if want := f.CreditAmount + f.FailedRefunds; f.Credited != want {
		add("should have credited %d to the customer's balance (credit bucket %d + failed refunds %d) but its balance entries sum to %d",
			want, f.CreditAmount, f.FailedRefunds, f.Credited)
	}
	if f.CreditAmount > 0 && f.BalanceEntryID == nil {
		add("has credit bucket %d but names no balance entry", f.CreditAmount)
	}
	return out
}

// creditNoteLineProblems checks a credit note's lines against its totals and each line's
// allocations against the line.
func creditNoteLineProblems(f CreditNoteFacts) []string {
	if f.LinesUnread {
		return []string{"has lines that are not valid JSON"}
	}
	var out []string
	var total, tax int64
	buckets := map[string]int64{}
	for _, l := range f.Lines {
		total, tax = total+l.Amount, tax+l.TaxAmount
		buckets[l.Bucket] += l.Amount
		var amt, lt int64
		for _, a := range l.Allocations {
			amt, lt = amt+a.Amount, lt+a.TaxAmount
		}
		if amt != l.Amount || lt != l.TaxAmount {
			out = append(out, fmt.Sprintf("has a line of %d (tax %d) whose allocations to invoice lines add up to %d (tax %d)", l.Amount, l.TaxAmount, amt, lt))
		}
	}
	if total != f.Total {
		out = append(out, fmt.Sprintf("has total %d but its lines sum to %d", f.Total, total))
	}
	if tax != f.TaxTotal {
		out = append(out, fmt.Sprintf("has tax total %d but its lines' tax sums to %d", f.TaxTotal, tax))
	}
	for _, b := range []struct {
		name   string
		amount int64
	}{{BucketCredit, f.CreditAmount}, {BucketRefund, f.RefundAmount}, {BucketOffset, f.OffsetAmount}} {
		if buckets[b.name] != b.amount {
			out = append(out, fmt.Sprintf("has %s bucket %d but its %s lines sum to %d", b.name, b.amount, b.name, buckets[b.name]))
		}
		delete(buckets, b.name)
	}
	for name, amount := range buckets {
		out = append(out, fmt.Sprintf("has lines of %d in bucket %q, which is no bucket", amount, name))
	}
	return out
}

// InvoiceCreditFacts is an invoice's credited figures with what its credit notes and lines say.
type InvoiceCreditFacts struct {
	InvoiceID         string
	Status            InvoiceStatus
	Total             int64
	CreditedTotal     int64
	OffsetTotal       int64
	Notes             int64 // how many credit notes are on it
	NotesTotal        int64 // their totals, summed
	NotesOffset       int64 // their offset buckets, summed
	LinesCredited     int64 // its lines' credited amounts, summed
	OverCreditedLines int64 // how many of its lines have more credited than they billed
}

// CheckInvoiceCreditFacts checks that an invoice's credited total and offset total are its credit
// notes', spread over its lines, within its total and within each line's billed amount.
func CheckInvoiceCreditFacts(f InvoiceCreditFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.CreditedTotal != f.NotesTotal {
		add("has credited total %d but its %d credit notes total %d", f.CreditedTotal, f.Notes, f.NotesTotal)
	}
	if f.OffsetTotal != f.NotesOffset {
		add("has offset total %d but its credit notes' offset buckets sum to %d", f.OffsetTotal, f.NotesOffset)
	}
	if f.NotesTotal > f.Total {
		add("has credit notes totalling %d, more than its total %d", f.NotesTotal, f.Total)
	}
	if f.LinesCredited != f.NotesTotal {
		add("has lines credited %d in all but its credit notes total %d", f.LinesCredited, f.NotesTotal)
	}
	if f.OverCreditedLines > 0 {
		add("has %d lines credited beyond what they billed", f.OverCreditedLines)
	}
	if f.Status == InvoiceDraft && f.Notes > 0 {
		add("is a draft with %d credit notes: only open and paid invoices take credit notes", f.Notes)
	}
	return out
}
