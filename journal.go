package remit

import (
	"fmt"
	"time"
)

// The general ledger (docs/ledger.md): every money movement posts one balanced journal entry, per
// merchant account and currency, to the fixed chart of accounts below. It is derived, never typed:
// each Post* function here is the posting rule of one movement, pure, and the engine stores what
// it returns in the movement's own transaction. Not to be confused with the customers' prepaid
// balance ledger (ledger.go, BalanceEntry).

// The chart of accounts.
const (
	AccountReceivable        = "accounts_receivable"
	AccountRevenue           = "revenue"
	AccountDeferredRevenue   = "deferred_revenue"
	AccountTaxPayable        = "tax_payable"
	AccountDiscounts         = "discounts"
	AccountRefunds           = "refunds"
	AccountCustomerCredit    = "customer_credit"
	AccountProcessorClearing = "processor_clearing"
	AccountProcessorFees     = "processor_fees"
	AccountBank              = "bank"
	AccountBadDebt           = "bad_debt"
)

// Kinds of accounts: which side their balance normally sits on.
const (
	KindAsset         = "asset"
	KindLiability     = "liability"
	KindRevenue       = "revenue"
	KindContraRevenue = "contra_revenue"
	KindExpense       = "expense"
)

// GeneralLedgerAccount is one account of the chart.
type GeneralLedgerAccount struct {
	Name string
	Kind string
}

// DebitNormal reports whether the account's balance is its debits less its credits (assets,
// expenses, contra-revenue); otherwise it is its credits less its debits.
func (a GeneralLedgerAccount) DebitNormal() bool {
	return a.Kind == KindAsset || a.Kind == KindExpense || a.Kind == KindContraRevenue
}

// ChartOfAccounts is the fixed chart, in the order reports list it.
var ChartOfAccounts = []GeneralLedgerAccount{
	{AccountReceivable, KindAsset},
	{AccountProcessorClearing, KindAsset},
	{AccountBank, KindAsset},
	{AccountDeferredRevenue, KindLiability},
	{AccountTaxPayable, KindLiability},
	{AccountCustomerCredit, KindLiability},
	{AccountRevenue, KindRevenue},
	{AccountDiscounts, KindContraRevenue},
	{AccountRefunds, KindContraRevenue},
	{AccountProcessorFees, KindExpense},
	{AccountBadDebt, KindExpense},
}

// LookupAccount returns the chart's account of that name.
func LookupAccount(name string) (GeneralLedgerAccount, bool) {
	for _, a := range ChartOfAccounts {
		if a.Name == name {
			return a, true
		}
	}
	return GeneralLedgerAccount{}, false
}

// Journal entry sources: the movement an entry posts (JournalSource.Type).
const (
	SourceInvoiceFinalized     = "invoice.finalized"
	SourceInvoiceUncollectible = "invoice.marked_uncollectible"
	SourceInvoiceVoided        = "invoice.voided"
	SourcePaymentSucceeded     = "payment.succeeded"
	SourcePayout               = "payout.created"
	SourceCreditNote           = "credit_note.created"
	SourceRefundFailed         = "refund.failed"
	SourcePrepaidApplied       = "customer_balance.applied"
	SourcePrepaidExpired       = "customer_balance.expired"
	SourceRevenueRecognized    = "revenue.recognized"
)

// Posting is one line of a journal entry: one account, a debit or a credit (the other is 0).
type Posting struct {
	Account string `json:"account"`
	Debit   int64  `json:"debit"`
	Credit  int64  `json:"credit"`

	PriceID string `json:"-"` // revenue and deferred revenue lines: the price they are revenue of (the revenue report)
}

// JournalSource names the movement an entry posts: its type (Source* above) and its resource.
type JournalSource struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// JournalEntry is one balanced entry of the general journal (GET /v1/ledger/entries).
type JournalEntry struct {
	Object            string        `json:"object"` // "journal_entry"
	EntryID           string        `json:"entryId"`
	PostedAt          time.Time     `json:"postedAt"`
	Source            JournalSource `json:"source"`
	Currency          string        `json:"currency"`
	Description       string        `json:"description"`
	Lines             []Posting     `json:"lines"`
	Environment       Environment   `json:"environment"`
	MerchantAccountID string        `json:"merchantAccountId"`

	InvoiceID string `json:"-"` // the invoice whose receivable the entry moves, if any
}

// Balanced reports whether the entry's debits equal its credits and every line is one-sided and
// not negative, on accounts of the chart.
func (e JournalEntry) Balanced() bool {
	var dr, cr int64
	for _, l := range e.Lines {
		if _, ok := LookupAccount(l.Account); !ok || l.Debit < 0 || l.Credit < 0 || (l.Debit > 0 && l.Credit > 0) {
			return false
		}
		dr += l.Debit
		cr += l.Credit
	}
	return dr == cr
}

// CheckBalanced is Balanced as an internal error naming the entry (a posting rule's bug).
func (e JournalEntry) CheckBalanced() error {
	if !e.Balanced() {
		return Internal(fmt.Errorf("journal entry %s for %s %s does not balance: %+v", e.EntryID, e.Source.Type, e.Source.ID, e.Lines))
	}
	return nil
}

// entryBuilder gathers an entry's lines, dropping zero amounts and turning a negative amount into
// the other side.
type entryBuilder struct{ lines []Posting }

func (b *entryBuilder) dr(account string, amount int64) *entryBuilder {
	return b.drOf(account, "", amount)
}

func (b *entryBuilder) cr(account string, amount int64) *entryBuilder {
	return b.drOf(account, "", -amount)
}

// drOf is dr of a line that names the price it is revenue of.
func (b *entryBuilder) drOf(account, priceID string, amount int64) *entryBuilder {
	switch {
	case amount > 0:
		b.lines = append(b.lines, Posting{Account: account, Debit: amount, PriceID: priceID})
	case amount < 0:
		b.lines = append(b.lines, Posting{Account: account, Credit: -amount, PriceID: priceID})
	}
	return b
}

func (b *entryBuilder) crOf(account, priceID string, amount int64) *entryBuilder {
	return b.drOf(account, priceID, -amount)
}

// entry returns the entry of the lines gathered (ok false when there are none: nothing to post),
// with same-account same-price same-side lines merged in first-seen order.
func (b *entryBuilder) entry(src JournalSource, currency, desc string, at time.Time, invoiceID string) (JournalEntry, bool) {
	if len(b.lines) == 0 {
		return JournalEntry{}, false
	}
	var merged []Posting
	for _, l := range b.lines {
		found := false
		for i := range merged {
			if merged[i].Account == l.Account && merged[i].PriceID == l.PriceID && (merged[i].Debit > 0) == (l.Debit > 0) {
				merged[i].Debit += l.Debit
				merged[i].Credit += l.Credit
				found = true
				break
			}
		}
		if !found {
			merged = append(merged, l)
		}
	}
	return JournalEntry{Object: "journal_entry", PostedAt: at, Source: src, Currency: currency, Description: desc,
		Lines: merged, InvoiceID: invoiceID}, true
}

// JournalQuery is the journal entries list's query: entries with a line on Account (empty: all);
// its range bounds postedAt.
type JournalQuery struct {
	Account string
	ListQuery
}

// AccountBalance is one account's totals in one currency; Balance is on its normal side (debits
// less credits for assets, expenses and contra-revenue; credits less debits otherwise).
type AccountBalance struct {
	Account  string `json:"account"`
	Kind     string `json:"kind"`
	Currency string `json:"currency"`
	Debit    int64  `json:"debit"`
	Credit   int64  `json:"credit"`
	Balance  int64  `json:"balance"`
}

// LedgerBalances is GET /v1/ledger/balances: every account of the chart in every currency the
// journal has, as of a moment.
type LedgerBalances struct {
	Object            string           `json:"object"` // "ledger_balances"
	AsOf              time.Time        `json:"asOf"`
	Balances          []AccountBalance `json:"balances"`
	Environment       Environment      `json:"environment"`
	MerchantAccountID string           `json:"merchantAccountId"`
}

// NewAccountBalance is the balance of account a with these totals.
func NewAccountBalance(a GeneralLedgerAccount, currency string, debit, credit int64) AccountBalance {
	b := AccountBalance{Account: a.Name, Kind: a.Kind, Currency: currency, Debit: debit, Credit: credit, Balance: credit - debit}
	if a.DebitNormal() {
		b.Balance = debit - credit
	}
	return b
}

func accountNames() []string {
	out := make([]string, len(ChartOfAccounts))
	for i, a := range ChartOfAccounts {
		out[i] = a.Name
	}
	return out
}

// JournalLineRecord is one line of a journal entry as the journal-entries export reads it.
type JournalLineRecord struct {
	EntryID     string
	PostedAt    time.Time
	Currency    string
	Description string
	Source      JournalSource
	Line        Posting
}

// JournalLineColumns are the journal-entries export's columns: the general-journal import format
// of QuickBooks Online and Xero (Date, JournalNo, Account, Debit, Credit, Description, Reference),
// one row per line; the lines of one entry share its JournalNo. Amounts are decimals of the
// currency's major unit, an empty cell for the side a line does not post; Date is the UTC day
// (YYYY-MM-DD); Reference is the movement (source type and ID).
var JournalLineColumns = func() ExportColumns[JournalLineRecord] {
	amount := func(name string, v func(*JournalLineRecord) int64) ExportColumns[JournalLineRecord] {
		return text(name, func(r *JournalLineRecord) string {
			if a := v(r); a != 0 {
				return DecimalAmount(a, r.Currency)
			}
			return ""
		})
	}
	return columns(
		text("Date", func(r *JournalLineRecord) string { return r.PostedAt.UTC().Format("2006-01-02") }),
		text("JournalNo", func(r *JournalLineRecord) string { return r.EntryID }),
		text("Account", func(r *JournalLineRecord) string { return r.Line.Account }),
		amount("Debit", func(r *JournalLineRecord) int64 { return r.Line.Debit }),
		amount("Credit", func(r *JournalLineRecord) int64 { return r.Line.Credit }),
		text("Description", func(r *JournalLineRecord) string { return r.Description + " (" + r.Currency + ")" }),
		text("Reference", func(r *JournalLineRecord) string { return r.Source.Type + " " + r.Source.ID }),
	)
}()

// RevenueReportLine is one price's revenue in one currency over a month: what was recognized in
// it (revenue at finalization and day by day, less what voids took back), and its deferred revenue
// at the month's start and end. PriceID is null for revenue of no price (prepaid balance that
// expired, a void's revenue reversed).
type RevenueReportLine struct {
	PriceID         *string `json:"priceId"`
	Currency        string  `json:"currency"`
	Recognized      int64   `json:"recognized"`
	DeferredOpening int64   `json:"deferredOpening"`
	DeferredClosing int64   `json:"deferredClosing"`
}

// RevenueReport is GET /v1/reports/revenue: a month's revenue per price.
type RevenueReport struct {
	Object            string              `json:"object"` // "revenue_report"
	Month             string              `json:"month"`  // YYYY-MM
	PeriodStart       time.Time           `json:"periodStart"`
	PeriodEnd         time.Time           `json:"periodEnd"`
	Lines             []RevenueReportLine `json:"lines"`
	Environment       Environment         `json:"environment"`
	MerchantAccountID string              `json:"merchantAccountId"`
}

// ParseMonth reads a YYYY-MM month as its [start, end) in UTC.
func ParseMonth(month string) (start, end time.Time, ok bool) {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	return t, t.AddDate(0, 1, 0), true
}
