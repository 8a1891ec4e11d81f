package remit

import (
	"slices"
	"strings"
	"time"
)

// The prepaid balance ledger (docs/catalog-and-balance.md) is append-only: one entry per
// change, per customer and currency. Every positive entry (grant, credit_note, top_up) is a lot
// with a Remaining amount; negative entries (expiry, application) each take from one lot, named
// by SourceEntryID, and lower its Remaining by as much. So at every moment
//
//	sum of a currency's entry amounts = sum of its lots' Remaining >= 0.
//
// A lot is pending before its EffectiveAt, available from EffectiveAt until ExpiresAt (exclusive;
// lots without ExpiresAt never expire), and expired after. When its ExpiresAt passes, an expiry entry
// takes what remains.
const (
	EntryGrant       = "grant"
	EntryExpiry      = "expiry"
	EntryApplication = "application"
	EntryCreditNote  = "credit_note"
	EntryTopUp       = "top_up"
)

// IsLot reports whether entries of kind add to the balance (and so carry Remaining).
func IsLot(kind string) bool {
	return kind == EntryGrant || kind == EntryCreditNote || kind == EntryTopUp
}

// Invoice line types a grant's targets may name.
const (
	LineRecurring = "recurring"
	LineOneTime   = "one_time"
	LineUsage     = "usage"
)

// BalanceTargets restricts which invoice lines a grant may pay. Every given dimension must match;
// a nil dimension matches every line.
type BalanceTargets struct {
	LineTypes []string `json:"lineTypes,omitempty"`
	PriceIDs  []string `json:"priceIds,omitempty"`
	MeterIDs  []string `json:"meterIds,omitempty"`
}

// Matches reports whether a line of lineType, priceID and meterID ("" when the line has none) is
// one the targets allow. Nil targets match every line.
func (t *BalanceTargets) Matches(lineType, priceID, meterID string) bool {
	if t == nil {
		return true
	}
	if t.LineTypes != nil && !slices.Contains(t.LineTypes, lineType) {
		return false
	}
	if t.PriceIDs != nil && !slices.Contains(t.PriceIDs, priceID) {
		return false
	}
	if t.MeterIDs != nil && (meterID == "" || !slices.Contains(t.MeterIDs, meterID)) {
		return false
	}
	return true
}

// BalanceEntry is one ledger entry. Amount is signed: positive entries add to the balance,
// negative ones take from it.
type BalanceEntry struct {
	Object            string            `json:"object"` // "balance_entry"
	EntryID           string            `json:"entryId"`
	CustomerID        string            `json:"customerId"`
	Type              string            `json:"type"`
	Currency          string            `json:"currency"`
	Amount            int64             `json:"amount"`
	Remaining         *int64            `json:"remaining"`     // lots (grant, credit_note, top_up) only
	SourceEntryID     *string           `json:"sourceEntryId"` // expiry, application: the lot taken from
	InvoiceID         *string           `json:"invoiceId"`     // application, top_up
	CreditNoteID      *string           `json:"creditNoteId"`  // credit_note
	Targets           *BalanceTargets   `json:"targets"`       // grants only; nil pays any line
	Description       *string           `json:"description"`
	EffectiveAt       time.Time         `json:"effectiveAt"`
	Priority          int64             `json:"priority"`  // lots: spending order (SpendingOrder); debits: their lot's
	Category          string            `json:"category"`  // GrantPaid | GrantPromotional; debits: their lot's
	ExpiresAt         *time.Time        `json:"expiresAt"` // grants only
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`

	Seq string `json:"-"` // append order within equal CreatedAt
}

// PendingAt reports whether the lot is not yet effective at now.
func (e BalanceEntry) PendingAt(now time.Time) bool { return now.Before(e.EffectiveAt) }

// AvailableAt reports whether the lot can be spent at now: effective and not expired.
func (e BalanceEntry) AvailableAt(now time.Time) bool {
	return !now.Before(e.EffectiveAt) && (e.ExpiresAt == nil || now.Before(*e.ExpiresAt))
}

// CurrencyBalance is a customer's balance in one currency at one moment.
type CurrencyBalance struct {
	Currency  string `json:"currency"`
	Available int64  `json:"available"` // Remaining of lots effective and not expired
	Pending   int64  `json:"pending"`   // Remaining of lots not yet effective
}

// CustomerBalance is the answer of GET /v1/customers/{id}/balance.
type CustomerBalance struct {
	Object            string            `json:"object"` // "customer_balance"
	CustomerID        string            `json:"customerId"`
	Balances          []CurrencyBalance `json:"balances"`
	Entries           []BalanceEntry    `json:"entries"` // newest first
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
}

// Balances computes each currency's balance at now from the ledger's lots, sorted by currency.
func Balances(entries []BalanceEntry, now time.Time) []CurrencyBalance {
	by := map[string]*CurrencyBalance{}
	var order []string
	for _, e := range entries {
		b := by[e.Currency]
		if b == nil {
			b = &CurrencyBalance{Currency: e.Currency}
			by[e.Currency] = b
			order = append(order, e.Currency)
		}
		if e.Remaining == nil || *e.Remaining == 0 {
			continue
		}
		switch {
		case e.PendingAt(now):
			b.Pending += *e.Remaining
		case e.AvailableAt(now):
			b.Available += *e.Remaining
		}
	}
	slices.Sort(order)
	out := make([]CurrencyBalance, 0, len(order))
	for _, c := range order {
		out = append(out, *by[c])
	}
	return out
}

// GrantInput is a prepaid balance grant (POST /v1/customers/{id}/balance/grant).
type GrantInput struct {
	EntryID     string // optional; ble_... when empty
	Currency    string
	Amount      int64
	Targets     *BalanceTargets
	Description *string
	EffectiveAt *time.Time // default: now on the merchant clock
	ExpiresAt   *time.Time // default: never
	Priority    *int64     // 0-100, default DefaultGrantPriority
	Category    string     // GrantPaid | GrantPromotional (the default)
	Metadata    map[string]string
}

// Grant categories: a paid grant is money the customer paid (a liability in the books), a
// promotional one a discount given.
const (
	GrantPaid            = "paid"
	GrantPromotional     = "promotional"
	DefaultGrantPriority = 50
)

// LotCategory is the category of a lot of kind: a grant's is given (default promotional), top-ups
// and credit notes are money the customer paid.
func LotCategory(kind, given string) string {
	switch {
	case kind == EntryGrant && given != "":
		return given
	case kind == EntryGrant:
		return GrantPromotional
	default:
		return GrantPaid
	}
}

// SpendingOrder sorts spendable lots in the order they are spent (docs/catalog-and-balance.md
// "Spending order"): lower priority first; then the earliest expiresAt (lots that never expire
// last); then the oldest (earliest effectiveAt, then append order). The store reads the lots in
// the same order, which is also their lock order.
func SpendingOrder(lots []BalanceEntry) {
	slices.SortStableFunc(lots, func(a, b BalanceEntry) int {
		if a.Priority != b.Priority {
			return cmpInt(a.Priority, b.Priority)
		}
		switch {
		case a.ExpiresAt == nil && b.ExpiresAt != nil:
			return 1
		case a.ExpiresAt != nil && b.ExpiresAt == nil:
			return -1
		case a.ExpiresAt != nil && !a.ExpiresAt.Equal(*b.ExpiresAt):
			return a.ExpiresAt.Compare(*b.ExpiresAt)
		}
		if c := a.EffectiveAt.Compare(b.EffectiveAt); c != 0 {
			return c
		}
		return strings.Compare(a.Seq, b.Seq)
	})
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

// ExpireInput is a prepaid balance expiry (POST /v1/customers/{id}/balance/expire).
type ExpireInput struct {
	EntryID       string // optional; ble_... when empty
	SourceEntryID string
	Amount        *int64 // default: all that remains
	Description   *string
	EffectiveAt   *time.Time // default: now; not in the future
	Metadata      map[string]string
}

// BalanceCredit is a positive entry other than a grant: a credit note's credit bucket or the top-up
// of a paid credit_grant / credit_top_up invoice line.
type BalanceCredit struct {
	Kind         string // EntryCreditNote (needs CreditNoteID) or EntryTopUp (needs InvoiceID)
	EntryID      string // optional; ble_... when empty
	Currency     string
	Amount       int64 // > 0
	InvoiceID    string
	CreditNoteID string
	Description  string
	Metadata     map[string]string
}
