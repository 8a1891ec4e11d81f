package remit

import (
	"fmt"
)

// The rules of the money checks of balances (docs/verification.md); every check family has a file
// verification_*.go, and verification.go says what they share.

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
