package remit

import (
	"fmt"
	"strconv"
	"strings"
)

// The money checks' rules (docs/verification.md): pure functions over facts the store reads in
// pages, each returning what is wrong with one record in words a finance person reads (nil: the
// record is consistent). The facts hold exactly what Remit's own writes keep in step, so every
// rule holds on every state the engine produces, and altering a stored amount or status by hand
// breaks one.

// --- balances ---

// LedgerEntryFacts is one prepaid balance entry with what the ledger says about it: for a debit
// (expiry, application) the entry it takes from; for a lot (grant, credit_note, top_up) what the
// entries naming it as their source took from it.
type LedgerEntryFacts struct {
	CustomerID    string
	EntryID       string
	Type          string
	Currency      string
	Amount        int64
	Remaining     *int64
	SourceEntryID *string
	InvoiceID     *string
	CreditNoteID  *string
	// The entry SourceEntryID names, when it exists in the customer's ledger.
	SourceFound    bool
	SourceType     string
	SourceCurrency string
	// Taken is what the entries naming this one as their source took from it (their amounts
	// negated and summed); read for entries that name no source themselves.
	Taken int64
}

// CheckLedgerEntryFacts checks one entry: a lot is positive, and its remaining is its amount less
// what was taken from it, never below 0; a debit is negative and takes from a lot of the customer
// in its own currency.
func CheckLedgerEntryFacts(f LedgerEntryFacts) []string {
	switch {
	case IsLot(f.Type):
		return checkLot(f)
	case f.Type == EntryExpiry || f.Type == EntryApplication:
		return checkDebit(f)
	}
	return []string{fmt.Sprintf("has type %q, which is neither a lot (grant, credit_note, top_up) nor a debit (expiry, application)", f.Type)}
}

func checkLot(f LedgerEntryFacts) []string {
	var out []string
	if f.Amount < 1 {
		out = append(out, fmt.Sprintf("is a %s of %d: a lot must be positive", f.Type, f.Amount))
	}
	if f.SourceEntryID != nil {
		out = append(out, fmt.Sprintf("is a %s but takes from entry %s, as only debits do", f.Type, *f.SourceEntryID))
	}
	if f.Type == EntryCreditNote && f.CreditNoteID == nil {
		out = append(out, "is a credit_note entry that names no credit note")
	}
	if f.Type == EntryTopUp && f.InvoiceID == nil {
		out = append(out, "is a top_up entry that names no invoice")
	}
	if f.Remaining == nil {
		return append(out, fmt.Sprintf("is a %s of %d without a remaining amount", f.Type, f.Amount))
	}
	rem := *f.Remaining
	switch {
	case rem < 0:
		out = append(out, fmt.Sprintf("has remaining %d: a lot can never go below 0", rem))
	case rem > f.Amount:
		out = append(out, fmt.Sprintf("has remaining %d, more than its amount %d", rem, f.Amount))
	}
	if want := f.Amount - f.Taken; rem != want {
		out = append(out, fmt.Sprintf("has remaining %d but its amount %d less the %d its expiries and applications took leaves %d",
			rem, f.Amount, f.Taken, want))
	}
	return out
}

func checkDebit(f LedgerEntryFacts) []string {
	var out []string
	if f.Amount >= 0 {
		out = append(out, fmt.Sprintf("is an %s of %d: a debit must be negative", f.Type, f.Amount))
	}
	if f.Remaining != nil {
		out = append(out, fmt.Sprintf("is an %s but carries a remaining amount (%d), as only lots do", f.Type, *f.Remaining))
	}
	if f.Type == EntryApplication && f.InvoiceID == nil {
		out = append(out, "is an application that names no invoice")
	}
	switch {
	case f.SourceEntryID == nil:
		out = append(out, fmt.Sprintf("is an %s of %d that names no lot to take from", f.Type, -f.Amount))
	case !f.SourceFound:
		out = append(out, fmt.Sprintf("takes %d from entry %s, which is not in the customer's ledger", -f.Amount, *f.SourceEntryID))
	case !IsLot(f.SourceType):
		out = append(out, fmt.Sprintf("takes %d from entry %s, an %s, which is not a lot", -f.Amount, *f.SourceEntryID, f.SourceType))
	case f.SourceCurrency != f.Currency:
		out = append(out, fmt.Sprintf("is in %s but takes from lot %s in %s", f.Currency, *f.SourceEntryID, f.SourceCurrency))
	}
	return out
}

// BalanceFacts is one customer's balance in one currency: the sum of its entries and the sum of
// its lots' remaining.
type BalanceFacts struct {
	CustomerID    string
	Currency      string
	EntriesTotal  int64
	LotsRemaining int64
}

// CheckBalanceFacts checks that a balance equals the sum of its entries and is not negative.
func CheckBalanceFacts(f BalanceFacts) []string {
	var out []string
	if f.EntriesTotal != f.LotsRemaining {
		out = append(out, fmt.Sprintf("has a %s balance whose entries sum to %d but whose lots have %d remaining",
			f.Currency, f.EntriesTotal, f.LotsRemaining))
	}
	if f.EntriesTotal < 0 {
		out = append(out, fmt.Sprintf("has a %s balance of %d: a balance can never go below 0", f.Currency, f.EntriesTotal))
	}
	return out
}

// --- invoices and their payments ---

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

// --- receipts ---

// ReceiptFacts is a payment receipt's money.
type ReceiptFacts struct {
	ReceiptID      string
	InvoiceID      string
	Currency       string
	Method         string
	Status         ReceiptStatus
	Amount         int64
	AmountRefunded int64
}

// PaymentReceiptFacts is a payment with its receipt (nil: none) and its refunds.
type PaymentReceiptFacts struct {
	PaymentID      string
	InvoiceID      string
	Status         PaymentStatus
	Method         string
	Currency       string
	Amount         int64
	AmountRefunded int64
	Refunds        int64 // the amounts of its refunds that did not fail (pending or succeeded), summed
	RefundCount    int64 // how many refunds name it, whatever their state
	Receipt        *ReceiptFacts
}

// CheckPaymentReceiptFacts checks that a succeeded payment has one receipt for the same invoice,
// amount, currency, method and refunded amount, with the status those amounts give, that any other
// payment has none (nor refunds), and that a payment's amount refunded is what its refunds that did
// not fail add up to.
func CheckPaymentReceiptFacts(f PaymentReceiptFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.AmountRefunded != f.Refunds {
		add("has amount refunded %d but its pending and succeeded refunds sum to %d", f.AmountRefunded, f.Refunds)
	}
	if f.Status != PaymentSucceeded {
		if f.Receipt != nil {
			add("is %s yet has receipt %s: only a succeeded payment has a receipt", f.Status, f.Receipt.ReceiptID)
		}
		if f.RefundCount > 0 {
			add("is %s yet %d refunds were made of it", f.Status, f.RefundCount)
		}
		return out
	}
	r := f.Receipt
	if r == nil {
		return append(out, fmt.Sprintf("succeeded (%d %s) but has no receipt", f.Amount, f.Currency))
	}
	if r.Amount != f.Amount {
		add("is for %d but its receipt %s says %d", f.Amount, r.ReceiptID, r.Amount)
	}
	if r.AmountRefunded != f.AmountRefunded {
		add("has amount refunded %d but its receipt %s says %d", f.AmountRefunded, r.ReceiptID, r.AmountRefunded)
	}
	if want := ReceiptStatusOf(r.Amount, r.AmountRefunded); r.Status != want {
		add("has receipt %s with status %s, but %d refunded of %d makes it %s", r.ReceiptID, r.Status, r.AmountRefunded, r.Amount, want)
	}
	if r.Currency != f.Currency {
		add("is in %s but its receipt %s is in %s", f.Currency, r.ReceiptID, r.Currency)
	}
	if r.InvoiceID != f.InvoiceID {
		add("pays invoice %s but its receipt %s names invoice %s", f.InvoiceID, r.ReceiptID, r.InvoiceID)
	}
	if r.Method != f.Method {
		add("was made by %s but its receipt %s says %s", f.Method, r.ReceiptID, r.Method)
	}
	return out
}

// ReceiptPaymentFacts is a receipt with whether the payment it names exists.
type ReceiptPaymentFacts struct {
	ReceiptID    string
	PaymentID    string
	PaymentFound bool
}

// CheckReceiptPaymentFacts checks that a receipt's payment exists (the rest is
// CheckPaymentReceiptFacts's).
func CheckReceiptPaymentFacts(f ReceiptPaymentFacts) []string {
	if !f.PaymentFound {
		return []string{fmt.Sprintf("is the receipt of payment %s, which does not exist", f.PaymentID)}
	}
	return nil
}

// --- credit notes ---

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

// --- tax reversals ---

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

// --- settlements ---

// PayoutFacts is the payout a settlement names.
type PayoutFacts struct {
	PayoutID     string
	Found        bool
	SettlementID string
	Currency     string
	Amount       int64
}

// SettlementFacts is a settlement's figures with the payments that name it and its payout.
type SettlementFacts struct {
	SettlementID string
	Currency     string
	Status       SettlementStatus
	Gross        int64
	Refunds      int64
	Fees         int64
	PaymentCount int64
	Closed       bool // closedAt is set
	Paid         bool // paidAt is set
	Payout       *PayoutFacts
	// The payments that name it: how many, their amounts and fees summed, and how many of them
	// are not succeeded card payments in its currency.
	Payments       int64
	PaymentsAmount int64
	PaymentsFees   int64
	Foreign        int64
}

// CheckSettlementFacts checks that a settlement's gross, fees and payment count are those of its
// payments, and that a paid settlement was paid out its net (gross − refunds − fees).
func CheckSettlementFacts(f SettlementFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if f.Gross != f.PaymentsAmount {
		add("has gross %d but the %d payments in it sum to %d", f.Gross, f.Payments, f.PaymentsAmount)
	}
	if f.Fees != f.PaymentsFees {
		add("has fees %d but its payments' fees sum to %d", f.Fees, f.PaymentsFees)
	}
	if f.PaymentCount != f.Payments {
		add("counts %d payments but %d name it", f.PaymentCount, f.Payments)
	}
	if f.Foreign > 0 {
		add("holds %d payments that are not succeeded card payments in %s", f.Foreign, f.Currency)
	}
	net := f.Gross - f.Refunds - f.Fees
	switch f.Status {
	case SettlementOpen, SettlementClosed:
		if f.Status == SettlementClosed && !f.Closed {
			add("is closed but has no closing time")
		}
		if f.Payout != nil {
			add("is %s yet names payout %s", f.Status, f.Payout.PayoutID)
		}
	case SettlementPaid:
		switch p := f.Payout; {
		case !f.Closed || !f.Paid:
			add("is paid but lacks its closing or payment time")
		case p == nil:
			add("is paid but names no payout")
		case !p.Found:
			add("is paid by payout %s, which does not exist", p.PayoutID)
		case p.SettlementID != f.SettlementID:
			add("is paid by payout %s, which pays settlement %s", p.PayoutID, p.SettlementID)
		case p.Amount != net || p.Currency != f.Currency:
			add("was paid out %d %s but its net is %d %s (gross %d − refunds %d − fees %d)", p.Amount, p.Currency, net, f.Currency, f.Gross, f.Refunds, f.Fees)
		}
	default:
		add("has status %q, which is no settlement state", f.Status)
	}
	return out
}

// SettledPaymentFacts is a payment with the settlement it names.
type SettledPaymentFacts struct {
	PaymentID          string
	Status             PaymentStatus
	Method             string
	Currency           string
	SettlementID       *string
	SettlementFound    bool
	SettlementCurrency string
}

// CheckSettledPaymentFacts checks that a succeeded card payment is in a settlement of its currency
// and that no other payment is in one.
func CheckSettledPaymentFacts(f SettledPaymentFacts) []string {
	settles := f.Status == PaymentSucceeded && f.Method == MethodCard
	switch {
	case settles && f.SettlementID == nil:
		return []string{"is a succeeded card payment in no settlement"}
	case !settles && f.SettlementID != nil:
		return []string{fmt.Sprintf("is a %s %s payment, yet settlement %s counts it", f.Status, f.Method, *f.SettlementID)}
	case f.SettlementID == nil:
		return nil
	case !f.SettlementFound:
		return []string{fmt.Sprintf("is in settlement %s, which does not exist", *f.SettlementID)}
	case f.SettlementCurrency != f.Currency:
		return []string{fmt.Sprintf("is in %s but its settlement %s is in %s", f.Currency, *f.SettlementID, f.SettlementCurrency)}
	}
	return nil
}

// SettlementRefundFacts is one currency's refunds as the settlements count them and as the
// refunds of card payments that did not fail add up.
type SettlementRefundFacts struct {
	Currency     string
	Settled      int64 // the settlements' refund amounts, summed
	SettledCount int64 // their refund counts, summed
	Refunds      int64 // the refunds of card payments that did not fail, summed
	RefundCount  int64 // how many
}

// CheckSettlementRefundFacts checks that the settlements of a currency hold exactly the refunds
// made of card payments in it (a refund lands in the settlement open when it is made, and one that
// fails is taken back out of the one open then).
func CheckSettlementRefundFacts(f SettlementRefundFacts) []string {
	var out []string
	if f.Settled != f.Refunds {
		out = append(out, fmt.Sprintf("%s settlements hold refunds of %d but the refunds of card payments that did not fail sum to %d", f.Currency, f.Settled, f.Refunds))
	}
	if f.SettledCount != f.RefundCount {
		out = append(out, fmt.Sprintf("%s settlements count %d refunds but %d refunds of card payments did not fail", f.Currency, f.SettledCount, f.RefundCount))
	}
	return out
}

// --- document numbers ---

// InvoiceNumberFacts is an invoice's state and number.
type InvoiceNumberFacts struct {
	InvoiceID string
	Status    InvoiceStatus
	Number    *string
}

// CheckInvoiceNumberFacts checks that an invoice has a number exactly when it was finalized: a
// draft has none, every other invoice (a void one too) keeps the one finalization gave it.
func CheckInvoiceNumberFacts(f InvoiceNumberFacts) []string {
	switch {
	case f.Status == InvoiceDraft && f.Number != nil:
		return []string{fmt.Sprintf("is a draft but carries number %s: numbers are given at finalization", *f.Number)}
	case f.Status != InvoiceDraft && f.Number == nil:
		return []string{fmt.Sprintf("is %s but has no number", f.Status)}
	}
	return nil
}

// maxUntracked bounds how far beyond the documents a counter is followed number by number (1 bit
// each): a counter further ahead than this is reported by range.
const maxUntracked = 1 << 20

// DocumentNumbering checks the numbers of one kind of document of a merchant account (INV-,
// RCPT-, CN-) for gap-free use: fed every number in any order, it finds numbers that are
// malformed, beyond the counter or used twice, then (Gaps) the numbers up to the counter that no
// document uses. Memory is one bit per number.
type DocumentNumbering struct {
	Prefix  string
	Counter int64

	seen  []uint64
	size  int64 // numbers 1..size are tracked one by one
	above int64 // numbers used beyond size (and within the counter)
}

// NewDocumentNumbering starts the check of numbers Prefix + 000001.. given the counter's value
// (0: no counter) and how many documents carry a number.
func NewDocumentNumbering(prefix string, counter, documents int64) *DocumentNumbering {
	size := min(counter, documents+maxUntracked)
	size = max(size, 0)
	return &DocumentNumbering{Prefix: prefix, Counter: counter, size: size, seen: make([]uint64, (size+63)/64)}
}

// Format writes number n of the sequence.
func (d *DocumentNumbering) Format(n int64) string { return formatNumber(d.Prefix, n) }

// Add records a document's number and returns what is wrong with it, or "".
func (d *DocumentNumbering) Add(number string) string {
	n, ok := d.parse(number)
	switch {
	case !ok:
		return fmt.Sprintf("carries number %q, which is not of the form %s", number, d.Format(1))
	case n > d.Counter:
		return fmt.Sprintf("carries number %s, beyond the counter, which stands at %d", number, d.Counter)
	case n > d.size:
		d.above++
		return ""
	}
	i, bit := (n-1)/64, uint64(1)<<((n-1)%64)
	if d.seen[i]&bit != 0 {
		return fmt.Sprintf("carries number %s, which another document carries too", number)
	}
	d.seen[i] |= bit
	return ""
}

func (d *DocumentNumbering) parse(s string) (int64, bool) {
	digits, ok := strings.CutPrefix(s, d.Prefix)
	if !ok || len(digits) < 6 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || d.Format(n) != s {
		return 0, false
	}
	return n, true
}

// Gaps calls fn with each range of numbers from 1 to the counter that no document carries, in
// order, with how many of the range are unused (all of it, except for a range beyond what is
// tracked one by one).
func (d *DocumentNumbering) Gaps(fn func(from, to, unused int64)) {
	from := int64(0)
	for n := int64(1); n <= d.size; n++ {
		used := d.seen[(n-1)/64]&(uint64(1)<<((n-1)%64)) != 0
		switch {
		case !used && from == 0:
			from = n
		case used && from != 0:
			fn(from, n-1, n-from)
			from = 0
		}
	}
	if from != 0 {
		fn(from, d.size, d.size-from+1)
	}
	if d.Counter > d.size && d.Counter-d.size > d.above {
		fn(d.size+1, d.Counter, d.Counter-d.size-d.above)
	}
}

// --- processor charges ---

// ProcessorChargeFacts is the sandbox processor's own record of a charge.
type ProcessorChargeFacts struct {
	IdempotencyRef string
	Reference      string
	Status         string
	Currency       string
	Amount         int64
	Fee            int64
}

// ProcessorPaymentFacts is a payment with the charge the sandbox processor made for it (its
// idempotency reference is the payment's ID), if any.
type ProcessorPaymentFacts struct {
	PaymentID          string
	Status             PaymentStatus
	Method             string
	Processor          string
	Currency           string
	Amount             int64
	Fee                int64
	IdempotencyRef     *string
	ProcessorReference *string
	Charge             *ProcessorChargeFacts
}

// CheckProcessorPaymentFacts checks a payment against the processor's charges: a card payment is
// known to the processor by its own ID; a succeeded sandbox payment has a succeeded sandbox charge
// of the same amount, currency, fee and reference; a payment that failed, was canceled, was
// received out of band or went through another processor has no succeeded sandbox charge. Payments
// still processing or awaiting the customer may have a charge whose outcome is not recorded yet.
func CheckProcessorPaymentFacts(f ProcessorPaymentFacts) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	charged := f.Charge != nil && f.Charge.Status == "succeeded"
	switch {
	case f.Method == MethodOutOfBand:
		if f.Processor != ProcessorOutOfBand {
			add("was received out of band but names processor %s", f.Processor)
		}
		if f.Charge != nil {
			add("was received out of band, yet the sandbox processor has a %s charge of %d for it", f.Charge.Status, f.Charge.Amount)
		}
		return out
	case f.Method != MethodCard:
		return []string{fmt.Sprintf("was made by %q, which is no payment method", f.Method)}
	case f.IdempotencyRef == nil || *f.IdempotencyRef != f.PaymentID:
		add("is known to the processor by %s, not by its own ID", strOr(f.IdempotencyRef, "nothing"))
	}
	switch {
	case f.Processor == ProcessorOutOfBand:
		add("is a card payment recorded as received out of band")
	case f.Processor != ProcessorSandbox:
		if charged {
			add("went through %s, yet the sandbox processor charged %d for it", f.Processor, f.Charge.Amount)
		}
	case f.Status == PaymentSucceeded:
		out = append(out, succeededChargeProblems(f)...)
	case f.Status == PaymentFailed || f.Status == PaymentCanceled:
		if charged {
			add("is %s, yet the processor charged %d %s for it (charge %s)", f.Status, f.Charge.Amount, f.Charge.Currency, f.Charge.Reference)
		}
	case !f.Status.Open():
		add("has status %q, which is no payment state", f.Status)
	}
	return out
}

// succeededChargeProblems compares a succeeded sandbox payment with its charge.
func succeededChargeProblems(f ProcessorPaymentFacts) []string {
	c := f.Charge
	switch {
	case c == nil:
		return []string{fmt.Sprintf("succeeded (%d %s) but the processor made no charge for it", f.Amount, f.Currency)}
	case c.Status != "succeeded":
		return []string{fmt.Sprintf("succeeded but its processor charge %s %s", c.Reference, c.Status)}
	}
	var out []string
	if c.Amount != f.Amount || c.Currency != f.Currency {
		out = append(out, fmt.Sprintf("is for %d %s but the processor charged %d %s", f.Amount, f.Currency, c.Amount, c.Currency))
	}
	if c.Fee != f.Fee {
		out = append(out, fmt.Sprintf("has fee %d but the processor took a fee of %d", f.Fee, c.Fee))
	}
	if f.ProcessorReference == nil || *f.ProcessorReference != c.Reference {
		out = append(out, fmt.Sprintf("names processor reference %s but its charge is %s", strOr(f.ProcessorReference, "none"), c.Reference))
	}
	return out
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// CheckUnclaimedChargeFacts checks a sandbox charge whose idempotency reference is the ID of no
// payment of any merchant account: a succeeded one is money taken that no payment records.
func CheckUnclaimedChargeFacts(c ProcessorChargeFacts) []string {
	if c.Status != "succeeded" {
		return nil
	}
	return []string{fmt.Sprintf("charged %d %s (fee %d) for %s, which is no payment of any merchant account", c.Amount, c.Currency, c.Fee, c.IdempotencyRef)}
}

// ProcessorRefundFacts is a refund through the sandbox processor with the processor's own record
// of it (its idempotency reference is the refund's ID), if any.
type ProcessorRefundFacts struct {
	RefundID        string
	Status          string
	Currency        string
	Amount          int64
	ChargeReference string
	// The processor's record.
	Recorded                bool
	RecordedAmount          int64
	RecordedCurrency        string
	RecordedChargeReference string
}

// CheckProcessorRefundFacts checks a sandbox refund against the processor's record: a succeeded
// refund was made by the processor as recorded; a failed one (credited to the balance instead) was
// not made. A pending one may or may not have reached the processor yet.
func CheckProcessorRefundFacts(f ProcessorRefundFacts) []string {
	switch f.Status {
	case RefundSucceeded:
		switch {
		case !f.Recorded:
			return []string{fmt.Sprintf("succeeded (%d %s) but the processor made no such refund", f.Amount, f.Currency)}
		case f.RecordedAmount != f.Amount || f.RecordedCurrency != f.Currency || f.RecordedChargeReference != f.ChargeReference:
			return []string{fmt.Sprintf("is %d %s of charge %s but the processor refunded %d %s of charge %s", f.Amount, f.Currency,
				f.ChargeReference, f.RecordedAmount, f.RecordedCurrency, f.RecordedChargeReference)}
		}
	case RefundFailed:
		if f.Recorded {
			return []string{fmt.Sprintf("failed and was credited to the customer's balance, yet the processor refunded %d %s", f.RecordedAmount, f.RecordedCurrency)}
		}
	case RefundPending:
	default:
		return []string{fmt.Sprintf("has status %q, which is no refund state", f.Status)}
	}
	return nil
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
