package remit

import "fmt"

// The rules of the general ledger's check (docs/ledger.md "What is verified"); every check family
// has a file verification_*.go, and verification.go says what they share.

// GeneralLedgerFacts are, for one currency of a merchant account, the journal's balances of the
// accounts the money state also holds, beside what the money state says they are.
type GeneralLedgerFacts struct {
	Currency string
	// The journal's balances, on each account's normal side.
	Receivable, CustomerCredit, DeferredRevenue int64
	// The money state: open invoices' amountRemaining, the paid prepaid lots' remaining (credit
	// note and top-up entries), the prepaid balance sold on invoices not yet paid (open or
	// uncollectible invoices' credit_grant and credit_top_up lines), and what the revenue
	// schedules still defer.
	OpenRemaining, PaidCredit, UnpaidTopUps, Unrecognized int64
}

// CheckGeneralLedgerFacts checks that the journal's receivable, customer credit and deferred
// revenue are what the invoices, the prepaid balances and the revenue schedules say.
func CheckGeneralLedgerFacts(f GeneralLedgerFacts) []string {
	var out []string
	if f.Receivable != f.OpenRemaining {
		out = append(out, fmt.Sprintf("%s accounts_receivable is %d but the open invoices' amountRemaining sums to %d", f.Currency, f.Receivable, f.OpenRemaining))
	}
	if want := f.PaidCredit + f.UnpaidTopUps; f.CustomerCredit != want {
		out = append(out, fmt.Sprintf("%s customer_credit is %d but the paid prepaid balances sum to %d (and prepaid balance sold on unpaid invoices to %d)",
			f.Currency, f.CustomerCredit, f.PaidCredit, f.UnpaidTopUps))
	}
	if f.DeferredRevenue != f.Unrecognized {
		out = append(out, fmt.Sprintf("%s deferred_revenue is %d but the revenue not yet recognized is %d", f.Currency, f.DeferredRevenue, f.Unrecognized))
	}
	return out
}

// UnbalancedEntry is the violation of a journal entry whose debits and credits differ (or that has
// a negative or two-sided line): the journal was changed outside Remit.
const UnbalancedEntry = "its debits and credits differ, or a line is negative or on both sides"
