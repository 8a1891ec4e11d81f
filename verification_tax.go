package remit

import (
	"fmt"
)

// The rules of the money checks of tax reversals (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

// SaleTaxFacts is the tax transaction an invoice names.
type SaleTaxFacts struct {
	TaxTransactionID string
	Found            bool
	Type             string
	Status           TaxStatus
	SourceDocumentID string
	TotalTax         int64
	LinesTax         int64 // its lines' tax, summed
	LinesUnread      bool  // its stored lines are not valid JSON
}

// InvoiceTaxFacts is an invoice's tax with its sale transaction and what reversed it: its credit
// notes (with their reversal transactions and the credited tax of its lines) and a void.
type InvoiceTaxFacts struct {
	InvoiceID         string
	Status            InvoiceStatus
	TaxTotal          int64
	Sale              *SaleTaxFacts // nil: the invoice names none
	NotesTax          int64         // its credit notes' tax totals, summed
	NotesReversed     int64         // what the reversal transactions its credit notes name reverse (positive)
	LinesCreditedTax  int64         // its lines' credited tax, summed
	OverReversedLines int64         // how many of its lines have more tax reversed than they charged
	VoidReversals     int64         // how many reversal transactions name the invoice itself (a void)
	VoidReversed      int64         // what they reverse (positive)
}

// CheckInvoiceTaxFacts checks that a finalized invoice's committed sale records its tax, that its
// credit notes reversed no more tax than it charged, each line no more than its own, and exactly
// what their reversal transactions record, and that a void reversed, once, exactly the tax its
// credit notes left (so that all reversals together never exceed the tax charged).
func CheckInvoiceTaxFacts(f InvoiceTaxFacts) []string {
	out := saleProblems(f)
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.NotesTax > f.TaxTotal {
		add("had %d of tax reversed by its credit notes, more than the %d it charged", f.NotesTax, f.TaxTotal)
	}
	if f.NotesReversed != f.NotesTax {
		add("has credit notes reversing %d of tax but their reversal transactions record %d", f.NotesTax, f.NotesReversed)
	}
	if f.LinesCreditedTax != f.NotesTax {
		add("has lines with %d of tax reversed but its credit notes reversed %d", f.LinesCreditedTax, f.NotesTax)
	}
	if f.OverReversedLines > 0 {
		add("has %d lines with more tax reversed than they charged", f.OverReversedLines)
	}
	left := f.TaxTotal - f.NotesTax // what a void still has to reverse
	voidReverses := f.Status == InvoiceVoid && left > 0 && f.Sale != nil
	switch {
	case voidReverses && f.VoidReversals != 1:
		add("is void with %d of its tax not reversed by credit notes, so one reversal of it is due, but %d name it", left, f.VoidReversals)
	case voidReverses && f.VoidReversed != left:
		add("is void and its reversal reverses %d, but %d of its tax was left to reverse (%d charged, %d reversed by credit notes)",
			f.VoidReversed, left, f.TaxTotal, f.NotesTax)
	case !voidReverses && f.VoidReversals > 0:
		add("is %s with %d of tax left unreversed, yet %d reversal transactions reverse it as voided", f.Status, left, f.VoidReversals)
	}
	return out
}

// saleProblems checks the tax transaction an invoice names: a sale of the invoice, committed with
// the invoice's tax once it is finalized (a draft's, while quoted).
func saleProblems(f InvoiceTaxFacts) []string {
	s := f.Sale
	if s == nil {
		if f.Status != InvoiceDraft {
			return []string{fmt.Sprintf("is %s with tax %d but names no tax transaction", f.Status, f.TaxTotal)}
		}
		return nil
	}
	if !s.Found {
		return []string{fmt.Sprintf("names tax transaction %s, which does not exist", s.TaxTransactionID)}
	}
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if s.Type != TaxSale || s.SourceDocumentID != f.InvoiceID {
		add("names tax transaction %s, a %s of %s, not the sale of this invoice", s.TaxTransactionID, s.Type, s.SourceDocumentID)
	}
	if s.LinesUnread {
		add("has tax transaction %s whose lines are not valid JSON", s.TaxTransactionID)
	} else if s.LinesTax != s.TotalTax {
		add("has tax transaction %s with total tax %d but lines summing to %d", s.TaxTransactionID, s.TotalTax, s.LinesTax)
	}
	if f.Status == InvoiceDraft {
		if s.Status == TaxQuoted && s.TotalTax != f.TaxTotal {
			add("has tax %d but its quoted tax transaction %s records %d", f.TaxTotal, s.TaxTransactionID, s.TotalTax)
		}
		return out
	}
	if s.Status != TaxCommitted {
		add("is %s but its tax transaction %s is %s, not committed", f.Status, s.TaxTransactionID, s.Status)
	}
	if s.TotalTax != f.TaxTotal {
		add("charged tax %d but its committed sale %s records %d", f.TaxTotal, s.TaxTransactionID, s.TotalTax)
	}
	return out
}

// TaxReversalFacts is a reversal tax transaction with the document it reverses: a credit note, or
// a voided invoice.
type TaxReversalFacts struct {
	TaxTransactionID string
	Status           TaxStatus
	TotalTax         int64
	LinesTax         int64 // its lines' tax, summed
	LinesUnread      bool  // its stored lines are not valid JSON
	SourceDocumentID string
	// The credit note it reverses the tax of, when its source is one.
	NoteFound            bool
	NoteTaxTotal         int64
	NoteTaxTransactionID *string
	// The invoice it reverses as voided, when its source is one.
	InvoiceFound  bool
	InvoiceStatus InvoiceStatus
}

// CheckTaxReversalFacts checks a reversal: committed, negative, its lines adding up to it, and
// reversing exactly its credit note's tax (which names it) or the tax of an invoice that is void.
func CheckTaxReversalFacts(f TaxReversalFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.Status != TaxCommitted {
		add("is a reversal in state %s: reversals are committed when made", f.Status)
	}
	if f.TotalTax >= 0 {
		add("is a reversal of %d: a reversal takes tax back, so it is negative", f.TotalTax)
	}
	if f.LinesUnread {
		add("has lines that are not valid JSON")
	} else if f.LinesTax != f.TotalTax {
		add("has total tax %d but its lines sum to %d", f.TotalTax, f.LinesTax)
	}
	switch {
	case f.NoteFound:
		if f.NoteTaxTransactionID == nil || *f.NoteTaxTransactionID != f.TaxTransactionID {
			add("reverses the tax of credit note %s, which names another tax transaction", f.SourceDocumentID)
		}
		if -f.TotalTax != f.NoteTaxTotal {
			add("reverses %d of tax but its credit note %s reverses %d", -f.TotalTax, f.SourceDocumentID, f.NoteTaxTotal)
		}
	case f.InvoiceFound:
		if f.InvoiceStatus != InvoiceVoid {
			add("reverses the tax of invoice %s as voided, but the invoice is %s", f.SourceDocumentID, f.InvoiceStatus)
		}
	default:
		add("reverses document %s, which is neither a credit note nor an invoice", f.SourceDocumentID)
	}
	return out
}
