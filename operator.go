package remit

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/bojanz/currency"
)

// Operators are the people who sign in to the dashboard (docs/dashboard.md): an e-mail address,
// a role, and a password they set themselves through a one-time link.

// OperatorRole is what an operator may do: an admin acts, a viewer only reads.
type OperatorRole string

const (
	OperatorAdmin  OperatorRole = "admin"
	OperatorViewer OperatorRole = "viewer"
)

// Valid reports whether r is a known role.
func (r OperatorRole) Valid() bool { return r == OperatorAdmin || r == OperatorViewer }

// Operator is a dashboard user of one organization.
type Operator struct {
	ID             string
	OrganizationID string
	Email          string // lower-case; unique across the store
	Role           OperatorRole
	PasswordHash   string // bcrypt; empty until the set-password link is used
	DisabledAt     *time.Time
	CreatedAt      time.Time
}

// Active reports whether the operator may sign in: a password set and not disabled.
func (o Operator) Active() bool { return o.PasswordHash != "" && o.DisabledAt == nil }

// Bounds of operator input.
const (
	OperatorPasswordMin = 12  // characters
	OperatorPasswordMax = 72  // bytes: bcrypt reads no further
	OperatorEmailMax    = 254 // RFC 5321
	// OperatorLinkTTL is how long a set-password link works (once).
	OperatorLinkTTL = 72 * time.Hour
)

// NormalizeOperatorEmail checks an operator's e-mail address and returns it in lower case.
func NormalizeOperatorEmail(email string, p *Problems) string {
	e := strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(e)
	switch {
	case e == "":
		p.Body("email", "required", "email is required.")
	case len(e) > OperatorEmailMax:
		p.Body("email", "too_long", fmt.Sprintf("email may be at most %d characters.", OperatorEmailMax))
	case err != nil || a.Address != e:
		p.Body("email", "invalid_format", "email must be one address, such as ops@example.com.")
	}
	return e
}

// CustomerOverview is what the dashboard shows of a customer: the customer and the first page of
// each thing that belongs to it.
type CustomerOverview struct {
	Account       MerchantAccount
	Customer      Customer
	Invoices      List[Invoice]
	Payments      List[Payment]
	Subscriptions List[Subscription]
	Balances      []CurrencyBalance
	Entries       []BalanceEntry // the newest of its ledger
	Methods       []PaymentMethod
}

// DayRevenue is what an account was paid on one UTC day (Day: days since 1970-01-01), in one
// currency.
type DayRevenue struct {
	Day      int64
	Currency string
	Amount   int64
}

// OpenTotal is what an account's open invoices of one currency still ask: in all, and of those
// whose collection failed (in dunning: retrying or exhausted).
type OpenTotal struct {
	Currency                string
	Open, OpenCount         int64
	InDunning, DunningCount int64
}

// AccountOverview is a merchant account's home in the dashboard.
type AccountOverview struct {
	Account        MerchantAccount
	Now            time.Time    // the account's clock
	Revenue        []DayRevenue // the last RevenueDays days, oldest first; days without payment absent
	MRR            []DayRevenue // the monthly recurring revenue at the end of each of those days, today at now (MRRByDay)
	Open           []OpenTotal
	FailedPayments List[Payment] // the newest failed payments
	FailedJobs     int           // its scheduled jobs failed for good (docs/reliability.md "Scheduled work that fails")
}

// RevenueDays is how many days an account's revenue chart shows.
const RevenueDays = 30

// ParseMajorAmount reads an amount typed in major units ("12.50", "1,250.00" is refused: no
// grouping) into minor units of currency: no more decimals than the currency has, at least 0.
// field names the form field in the problem it records.
func ParseMajorAmount(s, currencyCode, field string, p *Problems) int64 {
	s = strings.TrimSpace(s)
	digits, ok := currency.GetDigits(currencyCode)
	if !ok {
		digits = 2
	}
	whole, frac, _ := strings.Cut(s, ".")
	bad := func() int64 {
		p.Body(field, "invalid_format", fmt.Sprintf("Type the amount in %s with at most %d decimals, such as %s.", currencyCode, digits, example(digits)))
		return 0
	}
	if s == "" || whole == "" || len(frac) > int(digits) || !allDigits(whole) || !allDigits(frac) || len(whole) > 15 {
		return bad()
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", int(digits)-len(frac)), 10, 64)
	if err != nil {
		return bad()
	}
	return n
}

func example(digits uint8) string {
	if digits == 0 {
		return "1250"
	}
	return "12." + strings.Repeat("5", int(digits))
}

// UsageOverview is a customer's usage of one meter over the last RevenueDays days of the
// account's clock, per UTC day, by the meter's aggregation, and over the whole span.
type UsageOverview struct {
	Account MerchantAccount
	Meters  []Meter // the account's meters, for choosing
	Meter   *Meter  // the meter shown (nil: none chosen)
	Now     time.Time
	Days    []DayRevenue // Currency empty: quantities
	Total   int64        // the aggregation over the whole span (not the sum of days for max, latest, unique_count)
}

// InvoiceOverview is what the dashboard shows of an invoice besides the invoice: its payments,
// receipts and credit notes.
type InvoiceOverview struct {
	Payments    List[Payment]
	Receipts    OffsetList[PaymentReceipt]
	CreditNotes []CreditNote
}
