package remit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exports (docs/exports.md): GET /v1/exports/{dataset}.csv streams one dataset of a merchant
// account. The rules are here: which datasets there are, which filters each takes and the values
// they take (PlanExport), and what each writes, column by column (the ExportColumns of each record
// type). The engine reads the records (app/exports.go); the edge writes them as CSV
// (httpapi/exports.go).

// The datasets, as the path names them.
const (
	ExportInvoices       = "invoices"
	ExportInvoiceLines   = "invoice-lines"
	ExportPayments       = "payments"
	ExportRefunds        = "refunds"
	ExportCreditNotes    = "credit-notes"
	ExportBalanceEntries = "balance-entries"
	ExportUsageDaily     = "usage-daily"
	ExportJournalEntries = "journal-entries"
)

// ExportDatasets are the datasets, in the contract's order (the enum of its {dataset}).
var ExportDatasets = []string{ExportInvoices, ExportInvoiceLines, ExportPayments, ExportRefunds, ExportCreditNotes,
	ExportBalanceEntries, ExportUsageDaily, ExportJournalEntries}

// exportFilter is one filter of a dataset: its query parameter and the values it takes (nil: any).
type exportFilter struct {
	param  string
	values []string
}

var (
	invoiceStatusNames = names(InvoiceStatuses)
	refundStatusNames  = []string{RefundPending, RefundSucceeded, RefundFailed}
	entryTypeNames     = []string{EntryGrant, EntryExpiry, EntryApplication, EntryCreditNote, EntryTopUp}
)

// exportFilters are each dataset's filters, beside createdFrom and createdTo, named as the lists
// name them (docs/exports.md).
var exportFilters = map[string][]exportFilter{
	ExportInvoices: {{"customerId", nil}, {"billingAccountId", nil}, {"subscriptionId", nil},
		{"status", invoiceStatusNames}, {"number", nil}},
	ExportInvoiceLines: {{"invoiceId", nil}, {"customerId", nil}, {"billingAccountId", nil}, {"subscriptionId", nil},
		{"status", invoiceStatusNames}},
	ExportPayments:       {{"invoiceId", nil}, {"customerId", nil}, {"status", names(PaymentStatuses)}},
	ExportRefunds:        {{"paymentId", nil}, {"invoiceId", nil}, {"creditNoteId", nil}, {"status", refundStatusNames}},
	ExportCreditNotes:    {{"invoiceId", nil}, {"customerId", nil}},
	ExportBalanceEntries: {{"customerId", nil}, {"type", entryTypeNames}, {"currency", nil}},
	ExportUsageDaily:     {{"customerId", nil}, {"meterId", nil}},
	ExportJournalEntries: {{"account", accountNames()}, {"currency", nil}},
}

// ExportFilterNames are the filters of a dataset besides createdFrom and createdTo, in order (nil
// for an unknown dataset).
func ExportFilterNames(dataset string) []string {
	var out []string
	for _, f := range exportFilters[dataset] {
		out = append(out, f.param)
	}
	return out
}

// ExportQuery is an export as asked: the dataset of the path and every query parameter but the
// scope's (environment, merchantAccountId), with all its values.
type ExportQuery struct {
	Dataset string
	Params  map[string][]string
}

// ExportFilter is what an export reads: the merchant account's records of the dataset created in
// [From, To) (a zero time: no bound; usage-daily: the usage's timestamp, whole UTC days), equal to
// each filter given ("" for none). Each dataset uses the filters it takes (exportFilters).
type ExportFilter struct {
	From, To                                     time.Time
	CustomerID, BillingAccountID, SubscriptionID string
	InvoiceID, PaymentID, CreditNoteID, MeterID  string
	Status, Number, Type, Currency, Account      string
}

// field is the filter a query parameter sets.
func (f *ExportFilter) field(param string) *string {
	return map[string]*string{"customerId": &f.CustomerID, "billingAccountId": &f.BillingAccountID,
		"subscriptionId": &f.SubscriptionID, "invoiceId": &f.InvoiceID, "paymentId": &f.PaymentID,
		"creditNoteId": &f.CreditNoteID, "meterId": &f.MeterID, "status": &f.Status, "number": &f.Number,
		"type": &f.Type, "currency": &f.Currency, "account": &f.Account}[param]
}

// PlanExport checks an export's query and returns what it reads. An unknown dataset is not_found;
// every problem of the query is in one validation_failure: a parameter that is not a filter of
// the dataset, one given twice, a value a filter does not take, a creation range that is not RFC
// 3339 or not [from, to), and for usage-daily a bound that is not a UTC midnight.
func PlanExport(q ExportQuery) (ExportFilter, error) {
	filters, ok := exportFilters[q.Dataset]
	if !ok {
		return ExportFilter{}, Errorf(ENotFound, "No export dataset '%s'; the datasets are %s.", q.Dataset,
			strings.Join(ExportDatasets, ", ")).With("resource", "export_dataset").With("field", "dataset")
	}
	var p Problems
	var f ExportFilter
	var lq ListQuery
	for _, param := range slices.Sorted(maps.Keys(q.Params)) {
		vs := q.Params[param]
		if len(vs) != 1 {
			p.Add(InQuery, param, "repeated", param+" is given "+strconv.Itoa(len(vs))+" times; give it once.")
			continue
		}
		v := vs[0]
		switch i := slices.IndexFunc(filters, func(f exportFilter) bool { return f.param == param }); {
		case param == "createdFrom":
			lq.CreatedFrom = v
		case param == "createdTo":
			lq.CreatedTo = v
		case i < 0:
			p.Add(InQuery, param, "unknown_parameter", fmt.Sprintf("%s is not a filter of the %s export; it takes createdFrom, createdTo, %s.",
				param, q.Dataset, strings.Join(ExportFilterNames(q.Dataset), ", ")))
		default:
			if allowed := filters[i].values; v != "" && allowed != nil && !OneOf(v, allowed) {
				p.Add(InQuery, param, "invalid_enum", fmt.Sprintf("%s must be one of %s for the %s export.", param, strings.Join(allowed, ", "), q.Dataset))
			}
			if param == "currency" && v != "" {
				CurrencyProblem(&p, InQuery, param, v)
			}
			*f.field(param) = v
		}
	}
	f.From, f.To = lq.CreatedRange(&p)
	if q.Dataset == ExportUsageDaily {
		for param, t := range map[string]time.Time{"createdFrom": f.From, "createdTo": f.To} {
			if !t.IsZero() && !t.Equal(UTCDay(t)) {
				p.Add(InQuery, param, "not_whole_day", param+" must be a UTC midnight (2026-01-31T00:00:00Z) for usage-daily, whose rows are whole UTC days.")
			}
		}
	}
	return f, p.Err()
}

// UTCDay is the start (midnight, UTC) of the UTC day holding t.
func UTCDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Export is an export ready to stream: its columns (the header row) and its rows.
type Export struct {
	Dataset string
	Columns []string
	// Rows reads the records in order, on one consistent snapshot of the store, and calls row with
	// each one's values (the slice is reused between calls). It returns the first error row or the
	// store returns; ctx ending stops it.
	Rows func(ctx context.Context, row func([]string) error) error
}

// --- columns ---

// ExportColumns are a dataset's columns, in order: each a header name and how a record writes it.
// Money is two columns, the amount in minor units and the same amount as a decimal of the
// currency's major unit (name_decimal, DecimalAmount); timestamps are RFC 3339 in UTC; an absent
// value is empty.
type ExportColumns[T any] []exportColumn[T]

type exportColumn[T any] struct {
	name  string
	value func(*T) string
}

// Names are the columns' names: the header row.
func (cs ExportColumns[T]) Names() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// Row writes r's values into dst (reused: its contents are replaced) and returns it.
func (cs ExportColumns[T]) Row(dst []string, r *T) []string {
	dst = dst[:0]
	for _, c := range cs {
		dst = append(dst, c.value(r))
	}
	return dst
}

func columns[T any](parts ...ExportColumns[T]) ExportColumns[T] { return slices.Concat(parts...) }

func text[T any](name string, v func(*T) string) ExportColumns[T] {
	return ExportColumns[T]{{name, v}}
}

func optText[T any](name string, v func(*T) *string) ExportColumns[T] {
	return text(name, func(r *T) string { return deref(v(r)) })
}

func integer[T any](name string, v func(*T) int64) ExportColumns[T] {
	return text(name, func(r *T) string { return strconv.FormatInt(v(r), 10) })
}

func stamp[T any](name string, v func(*T) time.Time) ExportColumns[T] {
	return text(name, func(r *T) string { return exportTime(v(r)) })
}

func optStamp[T any](name string, v func(*T) *time.Time) ExportColumns[T] {
	return text(name, func(r *T) string {
		if t := v(r); t != nil {
			return exportTime(*t)
		}
		return ""
	})
}

func money[T any](name string, currency func(*T) string, v func(*T) int64) ExportColumns[T] {
	return ExportColumns[T]{
		{name, func(r *T) string { return strconv.FormatInt(v(r), 10) }},
		{name + "_decimal", func(r *T) string { return DecimalAmount(v(r), currency(r)) }},
	}
}

func optMoney[T any](name string, currency func(*T) string, v func(*T) *int64) ExportColumns[T] {
	return ExportColumns[T]{
		{name, func(r *T) string {
			if a := v(r); a != nil {
				return strconv.FormatInt(*a, 10)
			}
			return ""
		}},
		{name + "_decimal", func(r *T) string {
			if a := v(r); a != nil {
				return DecimalAmount(*a, currency(r))
			}
			return ""
		}},
	}
}

// metadataColumn is a record's metadata: the JSON object the store keeps (keys in order), as it is.
func metadataColumn[T any](v func(*T) string) ExportColumns[T] {
	return text("metadata", func(r *T) string {
		if md := v(r); md != "" {
			return md
		}
		return "{}"
	})
}

func exportTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// --- records ---

// InvoiceRecord is an invoice as its export reads it: without its lines, with its customer's name
// and its metadata as stored (a JSON object; Invoice.Metadata is not read).
type InvoiceRecord struct {
	Invoice      Invoice
	CustomerName string
	Metadata     string
}

// InvoiceColumns are the invoices export's columns.
var InvoiceColumns = func() ExportColumns[InvoiceRecord] {
	inv := func(r *InvoiceRecord) *Invoice { return &r.Invoice }
	cur := func(r *InvoiceRecord) string { return r.Invoice.Currency }
	amount := func(name string, v func(*Invoice) int64) ExportColumns[InvoiceRecord] {
		return money(name, cur, func(r *InvoiceRecord) int64 { return v(inv(r)) })
	}
	return columns(
		text("invoice_id", func(r *InvoiceRecord) string { return r.Invoice.InvoiceID }),
		optText("number", func(r *InvoiceRecord) *string { return r.Invoice.Number }),
		text("status", func(r *InvoiceRecord) string { return string(r.Invoice.Status) }),
		text("customer_id", func(r *InvoiceRecord) string { return r.Invoice.CustomerID }),
		text("customer_name", func(r *InvoiceRecord) string { return r.CustomerName }),
		text("billing_account_id", func(r *InvoiceRecord) string { return r.Invoice.BillingAccountID }),
		optText("subscription_id", func(r *InvoiceRecord) *string { return r.Invoice.SubscriptionID }),
		optText("quote_id", func(r *InvoiceRecord) *string { return r.Invoice.QuoteID }),
		text("collection_method", func(r *InvoiceRecord) string { return r.Invoice.CollectionMethod }),
		text("currency", cur),
		amount("subtotal", func(i *Invoice) int64 { return i.Subtotal }),
		amount("discount_total", func(i *Invoice) int64 { return i.DiscountTotal }),
		amount("prepaid_applied", func(i *Invoice) int64 { return i.PrepaidApplied }),
		amount("tax_total", func(i *Invoice) int64 { return i.TaxTotal }),
		amount("total", func(i *Invoice) int64 { return i.Total }),
		amount("amount_due", func(i *Invoice) int64 { return i.AmountDue }),
		amount("amount_paid", func(i *Invoice) int64 { return i.AmountPaid }),
		amount("amount_remaining", func(i *Invoice) int64 { return i.AmountRemaining }),
		amount("credited_total", func(i *Invoice) int64 { return i.CreditedTotal }),
		amount("offset_total", func(i *Invoice) int64 { return i.OffsetTotal }),
		amount("refunded_total", func(i *Invoice) int64 { return i.RefundedTotal }),
		optStamp("period_start", func(r *InvoiceRecord) *time.Time { return r.Invoice.PeriodStart }),
		optStamp("period_end", func(r *InvoiceRecord) *time.Time { return r.Invoice.PeriodEnd }),
		optStamp("finalized_at", func(r *InvoiceRecord) *time.Time { return r.Invoice.FinalizedAt }),
		optStamp("paid_at", func(r *InvoiceRecord) *time.Time { return r.Invoice.PaidAt }),
		optStamp("voided_at", func(r *InvoiceRecord) *time.Time { return r.Invoice.VoidedAt }),
		stamp("created_at", func(r *InvoiceRecord) time.Time { return r.Invoice.CreatedAt }),
		metadataColumn(func(r *InvoiceRecord) string { return r.Metadata }),
	)
}()

// InvoiceLineRecord is one line of an invoice as the invoice-lines export reads it: the line, its
// place on the invoice (0 for the first) and what the export shows of its invoice.
type InvoiceLineRecord struct {
	InvoiceID        string
	InvoiceNumber    *string
	InvoiceStatus    InvoiceStatus
	CustomerID       string
	CustomerName     string
	BillingAccountID string
	SubscriptionID   *string
	Currency         string
	InvoiceCreatedAt time.Time
	Position         int64
	Line             InvoiceLine
}

// InvoiceLineColumns are the invoice-lines export's columns.
var InvoiceLineColumns = func() ExportColumns[InvoiceLineRecord] {
	cur := func(r *InvoiceLineRecord) string { return r.Currency }
	amount := func(name string, v func(*InvoiceLine) int64) ExportColumns[InvoiceLineRecord] {
		return money(name, cur, func(r *InvoiceLineRecord) int64 { return v(&r.Line) })
	}
	return columns(
		text("invoice_line_id", func(r *InvoiceLineRecord) string { return r.Line.InvoiceLineID }),
		text("invoice_id", func(r *InvoiceLineRecord) string { return r.InvoiceID }),
		optText("invoice_number", func(r *InvoiceLineRecord) *string { return r.InvoiceNumber }),
		text("invoice_status", func(r *InvoiceLineRecord) string { return string(r.InvoiceStatus) }),
		integer("line_number", func(r *InvoiceLineRecord) int64 { return r.Position + 1 }),
		text("customer_id", func(r *InvoiceLineRecord) string { return r.CustomerID }),
		text("customer_name", func(r *InvoiceLineRecord) string { return r.CustomerName }),
		text("billing_account_id", func(r *InvoiceLineRecord) string { return r.BillingAccountID }),
		optText("subscription_id", func(r *InvoiceLineRecord) *string { return r.SubscriptionID }),
		text("line_type", func(r *InvoiceLineRecord) string { return r.Line.LineType }),
		text("price_id", func(r *InvoiceLineRecord) string { return r.Line.PriceID }),
		text("price_type", func(r *InvoiceLineRecord) string { return r.Line.PriceType }),
		optText("meter_id", func(r *InvoiceLineRecord) *string { return r.Line.MeterID }),
		text("description", func(r *InvoiceLineRecord) string { return r.Line.Description }),
		integer("quantity", func(r *InvoiceLineRecord) int64 { return r.Line.Quantity }),
		text("currency", cur),
		amount("unit_amount", func(l *InvoiceLine) int64 { return l.UnitAmount }),
		amount("amount", func(l *InvoiceLine) int64 { return l.Amount }),
		amount("discount_amount", func(l *InvoiceLine) int64 { return l.DiscountAmount }),
		amount("prepaid_applied", func(l *InvoiceLine) int64 { return l.PrepaidApplied }),
		amount("tax_amount", func(l *InvoiceLine) int64 { return l.TaxAmount }),
		amount("credited_amount", func(l *InvoiceLine) int64 { return l.CreditedAmount }),
		optStamp("period_start", func(r *InvoiceLineRecord) *time.Time { return r.Line.PeriodStart }),
		optStamp("period_end", func(r *InvoiceLineRecord) *time.Time { return r.Line.PeriodEnd }),
		stamp("invoice_created_at", func(r *InvoiceLineRecord) time.Time { return r.InvoiceCreatedAt }),
	)
}()

// PaymentRecord is a payment attempt as its export reads it, with its customer's name.
type PaymentRecord struct {
	Payment      Payment
	CustomerName string
}

// PaymentColumns are the payments export's columns.
var PaymentColumns = func() ExportColumns[PaymentRecord] {
	cur := func(r *PaymentRecord) string { return r.Payment.Currency }
	method := func(v func(*PaymentMethodSummary) string) func(*PaymentRecord) string {
		return func(r *PaymentRecord) string {
			if m := r.Payment.PaymentMethod; m != nil {
				return v(m)
			}
			return ""
		}
	}
	return columns(
		text("payment_id", func(r *PaymentRecord) string { return r.Payment.PaymentID }),
		text("invoice_id", func(r *PaymentRecord) string { return r.Payment.InvoiceID }),
		text("customer_id", func(r *PaymentRecord) string { return r.Payment.CustomerID }),
		text("customer_name", func(r *PaymentRecord) string { return r.CustomerName }),
		text("billing_account_id", func(r *PaymentRecord) string { return r.Payment.BillingAccountID }),
		text("payment_intent_id", func(r *PaymentRecord) string { return r.Payment.PaymentIntentID }),
		integer("attempt", func(r *PaymentRecord) int64 { return r.Payment.Attempt }),
		text("status", func(r *PaymentRecord) string { return string(r.Payment.Status) }),
		text("method", func(r *PaymentRecord) string { return r.Payment.Method }),
		text("payment_method_id", method(func(m *PaymentMethodSummary) string { return m.PaymentMethodID })),
		text("brand", method(func(m *PaymentMethodSummary) string { return m.Brand })),
		text("last4", method(func(m *PaymentMethodSummary) string { return m.Last4 })),
		text("source", func(r *PaymentRecord) string { return r.Payment.Source }),
		text("processor", func(r *PaymentRecord) string { return r.Payment.Processor }),
		optText("processor_reference", func(r *PaymentRecord) *string { return r.Payment.ProcessorReference }),
		text("currency", cur),
		money("amount", cur, func(r *PaymentRecord) int64 { return r.Payment.Amount }),
		money("fee_amount", cur, func(r *PaymentRecord) int64 { return r.Payment.FeeAmount }),
		money("amount_refunded", cur, func(r *PaymentRecord) int64 { return r.Payment.AmountRefunded }),
		optText("failure_code", func(r *PaymentRecord) *string { return r.Payment.FailureCode }),
		optText("failure_message", func(r *PaymentRecord) *string { return r.Payment.FailureMessage }),
		optText("settlement_id", func(r *PaymentRecord) *string { return r.Payment.SettlementID }),
		stamp("created_at", func(r *PaymentRecord) time.Time { return r.Payment.CreatedAt }),
		stamp("updated_at", func(r *PaymentRecord) time.Time { return r.Payment.UpdatedAt }),
	)
}()

// RefundRecord is a refund as its export reads it, with the customer of the payment it refunds.
type RefundRecord struct {
	Refund       Refund
	CustomerID   string
	CustomerName string
}

// RefundColumns are the refunds export's columns.
var RefundColumns = func() ExportColumns[RefundRecord] {
	cur := func(r *RefundRecord) string { return r.Refund.Currency }
	return columns(
		text("refund_id", func(r *RefundRecord) string { return r.Refund.RefundID }),
		text("payment_id", func(r *RefundRecord) string { return r.Refund.PaymentID }),
		text("invoice_id", func(r *RefundRecord) string { return r.Refund.InvoiceID }),
		text("credit_note_id", func(r *RefundRecord) string { return r.Refund.CreditNoteID }),
		text("customer_id", func(r *RefundRecord) string { return r.CustomerID }),
		text("customer_name", func(r *RefundRecord) string { return r.CustomerName }),
		text("status", func(r *RefundRecord) string { return r.Refund.Status }),
		optText("processor", func(r *RefundRecord) *string { return r.Refund.Processor }),
		optText("processor_reference", func(r *RefundRecord) *string { return r.Refund.ProcessorReference }),
		text("currency", cur),
		money("amount", cur, func(r *RefundRecord) int64 { return r.Refund.Amount }),
		optText("failure_code", func(r *RefundRecord) *string { return r.Refund.FailureCode }),
		optText("failure_message", func(r *RefundRecord) *string { return r.Refund.FailureMessage }),
		stamp("created_at", func(r *RefundRecord) time.Time { return r.Refund.CreatedAt }),
		stamp("updated_at", func(r *RefundRecord) time.Time { return r.Refund.UpdatedAt }),
	)
}()

// CreditNoteRecord is a credit note as its export reads it: without its lines, with its customer's
// name and its metadata as stored.
type CreditNoteRecord struct {
	CreditNote   CreditNote
	CustomerName string
	Metadata     string
}

// CreditNoteColumns are the credit-notes export's columns.
var CreditNoteColumns = func() ExportColumns[CreditNoteRecord] {
	cur := func(r *CreditNoteRecord) string { return r.CreditNote.Currency }
	amount := func(name string, v func(*CreditNote) int64) ExportColumns[CreditNoteRecord] {
		return money(name, cur, func(r *CreditNoteRecord) int64 { return v(&r.CreditNote) })
	}
	return columns(
		text("credit_note_id", func(r *CreditNoteRecord) string { return r.CreditNote.CreditNoteID }),
		text("number", func(r *CreditNoteRecord) string { return r.CreditNote.Number }),
		text("invoice_id", func(r *CreditNoteRecord) string { return r.CreditNote.InvoiceID }),
		text("customer_id", func(r *CreditNoteRecord) string { return r.CreditNote.CustomerID }),
		text("customer_name", func(r *CreditNoteRecord) string { return r.CustomerName }),
		text("status", func(r *CreditNoteRecord) string { return r.CreditNote.Status }),
		text("reason", func(r *CreditNoteRecord) string { return r.CreditNote.Reason }),
		optText("description", func(r *CreditNoteRecord) *string { return r.CreditNote.Description }),
		text("currency", cur),
		amount("total", func(c *CreditNote) int64 { return c.Total }),
		amount("tax_total", func(c *CreditNote) int64 { return c.TaxTotal }),
		amount("credit_amount", func(c *CreditNote) int64 { return c.CreditAmount }),
		amount("refund_amount", func(c *CreditNote) int64 { return c.RefundAmount }),
		amount("offset_amount", func(c *CreditNote) int64 { return c.OffsetAmount }),
		optText("balance_entry_id", func(r *CreditNoteRecord) *string { return r.CreditNote.BalanceEntryID }),
		optText("usage_event_id", func(r *CreditNoteRecord) *string { return r.CreditNote.UsageEventID }),
		stamp("created_at", func(r *CreditNoteRecord) time.Time { return r.CreditNote.CreatedAt }),
		metadataColumn(func(r *CreditNoteRecord) string { return r.Metadata }),
	)
}()

// BalanceEntryRecord is a prepaid balance entry as its export reads it, with its customer's name and
// its metadata as stored.
type BalanceEntryRecord struct {
	Entry        BalanceEntry
	CustomerName string
	Metadata     string
}

// BalanceEntryColumns are the balance-entries export's columns.
var BalanceEntryColumns = func() ExportColumns[BalanceEntryRecord] {
	cur := func(r *BalanceEntryRecord) string { return r.Entry.Currency }
	return columns(
		text("entry_id", func(r *BalanceEntryRecord) string { return r.Entry.EntryID }),
		text("customer_id", func(r *BalanceEntryRecord) string { return r.Entry.CustomerID }),
		text("customer_name", func(r *BalanceEntryRecord) string { return r.CustomerName }),
		text("type", func(r *BalanceEntryRecord) string { return r.Entry.Type }),
		text("currency", cur),
		money("amount", cur, func(r *BalanceEntryRecord) int64 { return r.Entry.Amount }),
		optMoney("remaining", cur, func(r *BalanceEntryRecord) *int64 { return r.Entry.Remaining }),
		optText("source_entry_id", func(r *BalanceEntryRecord) *string { return r.Entry.SourceEntryID }),
		optText("invoice_id", func(r *BalanceEntryRecord) *string { return r.Entry.InvoiceID }),
		optText("credit_note_id", func(r *BalanceEntryRecord) *string { return r.Entry.CreditNoteID }),
		optText("description", func(r *BalanceEntryRecord) *string { return r.Entry.Description }),
		stamp("effective_at", func(r *BalanceEntryRecord) time.Time { return r.Entry.EffectiveAt }),
		optStamp("expires_at", func(r *BalanceEntryRecord) *time.Time { return r.Entry.ExpiresAt }),
		stamp("created_at", func(r *BalanceEntryRecord) time.Time { return r.Entry.CreatedAt }),
		metadataColumn(func(r *BalanceEntryRecord) string { return r.Metadata }),
	)
}()

// UsageDay is one row of usage-daily: a customer's usage of a meter over one UTC day, aggregated
// as the meter aggregates (Quantity), and the number of live usage events it counts.
type UsageDay struct {
	Day                      time.Time // the day's midnight, UTC
	CustomerID, CustomerName string
	MeterID, Aggregation     string
	Quantity, Events         int64
}

// UsageDayColumns are the usage-daily export's columns.
var UsageDayColumns = columns(
	text("date", func(r *UsageDay) string { return r.Day.Format(time.DateOnly) }),
	text("customer_id", func(r *UsageDay) string { return r.CustomerID }),
	text("customer_name", func(r *UsageDay) string { return r.CustomerName }),
	text("meter_id", func(r *UsageDay) string { return r.MeterID }),
	text("aggregation", func(r *UsageDay) string { return r.Aggregation }),
	integer("quantity", func(r *UsageDay) int64 { return r.Quantity }),
	integer("event_count", func(r *UsageDay) int64 { return r.Events }),
)

// ExportColumnNames are each dataset's header row (docs/exports.md lists them).
func ExportColumnNames(dataset string) []string {
	switch dataset {
	case ExportInvoices:
		return InvoiceColumns.Names()
	case ExportInvoiceLines:
		return InvoiceLineColumns.Names()
	case ExportPayments:
		return PaymentColumns.Names()
	case ExportRefunds:
		return RefundColumns.Names()
	case ExportCreditNotes:
		return CreditNoteColumns.Names()
	case ExportBalanceEntries:
		return BalanceEntryColumns.Names()
	case ExportUsageDaily:
		return UsageDayColumns.Names()
	case ExportJournalEntries:
		return JournalLineColumns.Names()
	}
	return nil
}

// --- usage-daily ---

// UsageHour is one hour of a customer's usage of a meter as the hourly pre-aggregates keep it
// (store/usage_agg.go), or, with Value set, one distinct value of a unique_count meter's hour (its
// figures then are zero).
type UsageHour struct {
	CustomerID, CustomerName string
	MeterID, Aggregation     string
	HourStart                time.Time
	Quantity                 int64 // the hour's sum (sum meters)
	Events                   int64 // the hour's live events
	Max                      *int64
	Latest                   *UsageLatest
	Value                    *string
}

// UsageLatest is the latest live event of an hour: its timestamp (Unix microseconds), its seq and
// its quantity.
type UsageLatest struct{ TS, Seq, Quantity int64 }

// UsageDays folds hours, read in order of customer, meter and hour, into days, one day in memory
// at a time (plus, for unique_count, the day's distinct values).
type UsageDays struct {
	day    UsageDay
	open   bool
	max    *int64
	latest *UsageLatest
	values map[string]struct{}
}

// Add folds h in. When h begins another day, customer or meter, the day before is complete: it is
// returned with ok.
func (d *UsageDays) Add(h UsageHour) (done UsageDay, ok bool) {
	day := UTCDay(h.HourStart)
	if d.open && (h.CustomerID != d.day.CustomerID || h.MeterID != d.day.MeterID || !day.Equal(d.day.Day)) {
		done, ok = d.Last()
	}
	if !d.open {
		d.day = UsageDay{Day: day, CustomerID: h.CustomerID, CustomerName: h.CustomerName, MeterID: h.MeterID, Aggregation: h.Aggregation}
		d.open, d.max, d.latest = true, nil, nil
		clear(d.values)
	}
	if h.Value != nil {
		if d.values == nil {
			d.values = map[string]struct{}{}
		}
		d.values[*h.Value] = struct{}{}
		return done, ok
	}
	d.day.Quantity += h.Quantity
	d.day.Events += h.Events
	if h.Max != nil && (d.max == nil || *h.Max > *d.max) {
		d.max = h.Max
	}
	if l := h.Latest; l != nil && (d.latest == nil || l.TS > d.latest.TS || (l.TS == d.latest.TS && l.Seq > d.latest.Seq)) {
		d.latest = l
	}
	return done, ok
}

// Last completes the day being folded, if there is one, and returns it.
func (d *UsageDays) Last() (UsageDay, bool) {
	if !d.open {
		return UsageDay{}, false
	}
	d.open = false
	day := d.day
	switch day.Aggregation {
	case AggCount:
		day.Quantity = day.Events
	case AggMax:
		day.Quantity = 0
		if d.max != nil {
			day.Quantity = *d.max
		}
	case AggLatest:
		day.Quantity = 0
		if d.latest != nil {
			day.Quantity = d.latest.Quantity
		}
	case AggUniqueCount:
		day.Quantity = int64(len(d.values))
	}
	return day, true
}

// names lists states as strings.
func names[S ~string](ss []S) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
