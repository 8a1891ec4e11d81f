package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// Exports (docs/exports.md): each reads one dataset of a merchant account in creation order
// (oldest first; usage by customer, meter and hour), filtered and bounded as remit.ExportFilter
// says, and hands each record to fn as the query reads it: nothing collects the rows, so memory
// stays flat however many there are. Run them on an export's snapshot (ExportSnapshot): a read
// transaction beside the writer on SQLite, REPEATABLE READ READ ONLY on PostgreSQL. An error of fn stops the
// query and is returned as it is; so does the end of ctx.

// ExportSnapshot runs an export's reads (fn) on a snapshot (DB.Snapshot) planned to hand rows on
// as they are read: on PostgreSQL, which would rather sort a whole table than walk an index to
// read all of it, sorts are turned off for the transaction, so that an export follows its index
// and its first row comes at once (the sort would hold every row before the first).
func (db *DB) ExportSnapshot(ctx context.Context, fn func(ctx context.Context, q Q) error) error {
	return db.Snapshot(ctx, func(ctx context.Context, q Q) error {
		if q.d == Postgres {
			if _, err := q.exec(ctx, `SET LOCAL enable_sort = off`); err != nil {
				return wrapErr(err, "store.ExportSnapshot")
			}
		}
		return fn(ctx, q)
	})
}

type scanner = interface{ Scan(...any) error }

// eachRow runs query and calls fn with each row scan reads, one at a time.
func eachRow[T any](ctx context.Context, q Q, op string, scan func(scanner) (T, error), fn func(*T) error, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return wrapErr(err, op)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return wrapErr(err, op)
		}
		if err := fn(&v); err != nil {
			return err
		}
	}
	return wrapErr(rows.Err(), op)
}

// leading scans a row whose first columns go to first, and the rest to what Scan is given.
type leading struct {
	row   scanner
	first []any
}

func (l leading) Scan(dest ...any) error { return l.row.Scan(append(slices.Clip(l.first), dest...)...) }

// boundOf is a range bound in Unix microseconds: 0 (no bound) for the zero time.
func boundOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return remit.Micros(t)
}

// exportQuery completes an export's query, base with its args (its WHERE names the merchant
// account, $1), with the equal filters, the range [f.From, f.To) on column and the order.
func exportQuery(base string, args []any, f remit.ExportFilter, column, order string, filters ...Eq) (string, []any) {
	query, args := exportWhere(base, args, f, column, filters...)
	return query + " ORDER BY " + order, args
}

// exportWhere is exportQuery without the order.
func exportWhere(base string, args []any, f remit.ExportFilter, column string, filters ...Eq) (string, []any) {
	query, args := equalFilters(base, args, filters...)
	return rangeFilter(query, args, column, boundOf(f.From), boundOf(f.To))
}

// withCustomer begins an export's query over table (alias t): the name of the customer each row
// names in its customer_id ("" if none), then columns of t, for the merchant account $1. A join,
// not a subquery of each row: PostgreSQL then looks each customer up once (Memoize) instead of
// running a subplan for every row, seven times the export's cost.
func withCustomer(table, columns string) string {
	return `SELECT COALESCE(c.name, ''), ` + qualified("t", columns) + ` FROM ` + table + ` t ` +
		joinCustomer("t") + ` WHERE t.merchant_account_id = $1`
}

// joinCustomer joins the customer that the rows of alias name in their customer_id, as c.
func joinCustomer(alias string) string {
	return `LEFT JOIN customers c ON c.merchant_account_id = ` + alias + `.merchant_account_id AND c.id = ` + alias + `.customer_id`
}

// qualified prefixes each column of a column list with alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// invoiceExportColumns are what the invoices export writes of an invoice (ExportInvoices scans them).
const invoiceExportColumns = `id, number, status, customer_id, billing_account_id, subscription_id, quote_id, collection_method,
	currency, subtotal, discount_total, prepaid_applied, tax_total, total, amount_due, amount_paid, amount_remaining,
	credited_total, offset_total, refunded_total, period_start, period_end, finalized_at, paid_at, voided_at, created_at, metadata`

// ExportInvoices reads the invoices export: invoices without their lines, by creation. It reads
// only the columns the export writes, and the metadata as it is stored.
func (q Q) ExportInvoices(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.InvoiceRecord) error) error {
	query, args := exportQuery(withCustomer("invoices", invoiceExportColumns), []any{merchantAccountID}, f, "t.created_at", "t.created_at, t.id",
		Eq{"t.customer_id", f.CustomerID}, Eq{"t.billing_account_id", f.BillingAccountID}, Eq{"t.subscription_id", f.SubscriptionID},
		Eq{"t.status", f.Status}, Eq{"t.number", f.Number})
	return eachRow(ctx, q, "store.ExportInvoices", func(r scanner) (rec remit.InvoiceRecord, err error) {
		inv := &rec.Invoice
		var number, sub, quote sql.NullString
		var pStart, pEnd, fin, paid, voided sql.NullInt64
		var created int64
		err = r.Scan(&rec.CustomerName, &inv.InvoiceID, &number, &inv.Status, &inv.CustomerID, &inv.BillingAccountID, &sub, &quote,
			&inv.CollectionMethod, &inv.Currency, &inv.Subtotal, &inv.DiscountTotal, &inv.PrepaidApplied, &inv.TaxTotal, &inv.Total,
			&inv.AmountDue, &inv.AmountPaid, &inv.AmountRemaining, &inv.CreditedTotal, &inv.OffsetTotal, &inv.RefundedTotal,
			&pStart, &pEnd, &fin, &paid, &voided, &created, &rec.Metadata)
		inv.Object, inv.MerchantAccountID = "invoice", merchantAccountID
		inv.Number, inv.SubscriptionID, inv.QuoteID = textPtr(number), textPtr(sub), textPtr(quote)
		inv.PeriodStart, inv.PeriodEnd = timePtr(pStart), timePtr(pEnd)
		inv.FinalizedAt, inv.PaidAt, inv.VoidedAt, inv.CreatedAt = timePtr(fin), timePtr(paid), timePtr(voided), remit.FromMicros(created)
		return rec, err
	}, fn, query, args...)
}

// ExportInvoiceLines reads the invoice-lines export: the lines of the invoices the filter selects
// (the range is the invoice's creation), by invoice creation, then in the invoice's order. CROSS
// JOIN keeps SQLite's loops in that order (invoices outside, each invoice's lines inside), which
// would otherwise read the lines first and sort every row.
func (q Q) ExportInvoiceLines(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.InvoiceLineRecord) error) error {
	query, args := exportQuery(`SELECT i.id, i.number, i.status, i.customer_id, COALESCE(c.name, ''), i.billing_account_id,
		i.subscription_id, i.currency, i.created_at, l.position, l.id, l.line_type, l.price_id, l.price_type, l.meter_id,
		l.description, l.quantity, l.unit_amount, l.amount, l.discount_amount, l.prepaid_applied, l.tax_amount, l.credited_amount,
		l.period_start, l.period_end
		FROM invoices i CROSS JOIN invoice_lines l `+joinCustomer("i")+`
		WHERE i.merchant_account_id = $1 AND l.merchant_account_id = i.merchant_account_id AND l.invoice_id = i.id`,
		[]any{merchantAccountID}, f, "i.created_at", "i.created_at, i.id, l.position",
		Eq{"i.id", f.InvoiceID}, Eq{"i.customer_id", f.CustomerID}, Eq{"i.billing_account_id", f.BillingAccountID},
		Eq{"i.subscription_id", f.SubscriptionID}, Eq{"i.status", f.Status})
	return eachRow(ctx, q, "store.ExportInvoiceLines", func(r scanner) (rec remit.InvoiceLineRecord, err error) {
		var number, sub, meter sql.NullString
		var created int64
		var ps, pe sql.NullInt64
		l := &rec.Line
		err = r.Scan(&rec.InvoiceID, &number, &rec.InvoiceStatus, &rec.CustomerID, &rec.CustomerName, &rec.BillingAccountID, &sub,
			&rec.Currency, &created, &rec.Position, &l.InvoiceLineID, &l.LineType, &l.PriceID, &l.PriceType, &meter, &l.Description,
			&l.Quantity, &l.UnitAmount, &l.Amount, &l.DiscountAmount, &l.PrepaidApplied, &l.TaxAmount, &l.CreditedAmount, &ps, &pe)
		rec.InvoiceNumber, rec.SubscriptionID, rec.InvoiceCreatedAt = textPtr(number), textPtr(sub), remit.FromMicros(created)
		l.Object, l.MeterID, l.PeriodStart, l.PeriodEnd = "invoice_line", textPtr(meter), timePtr(ps), timePtr(pe)
		return rec, err
	}, fn, query, args...)
}

// ExportPayments reads the payments export: payment attempts, by creation.
func (q Q) ExportPayments(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.PaymentRecord) error) error {
	query, args := exportQuery(withCustomer("payments", paymentColumns), []any{merchantAccountID}, f, "t.created_at", "t.created_at, t.id",
		Eq{"t.invoice_id", f.InvoiceID}, Eq{"t.customer_id", f.CustomerID}, Eq{"t.status", f.Status})
	return eachRow(ctx, q, "store.ExportPayments", func(r scanner) (rec remit.PaymentRecord, err error) {
		rec.Payment, err = scanPayment(prefixed{r, &rec.CustomerName})
		rec.Payment.MerchantAccountID = merchantAccountID
		return rec, err
	}, fn, query, args...)
}

// ExportRefunds reads the refunds export: refunds with the customer of the payment each refunds,
// by creation.
func (q Q) ExportRefunds(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.RefundRecord) error) error {
	query, args := exportQuery(`SELECT COALESCE(p.customer_id, ''), COALESCE(c.name, ''), `+qualified("t", refundColumns)+`
		FROM refunds t LEFT JOIN payments p ON p.merchant_account_id = t.merchant_account_id AND p.id = t.payment_id `+joinCustomer("p")+`
		WHERE t.merchant_account_id = $1`, []any{merchantAccountID}, f, "t.created_at", "t.created_at, t.id",
		Eq{"t.payment_id", f.PaymentID}, Eq{"t.invoice_id", f.InvoiceID}, Eq{"t.credit_note_id", f.CreditNoteID}, Eq{"t.status", f.Status})
	return eachRow(ctx, q, "store.ExportRefunds", func(r scanner) (rec remit.RefundRecord, err error) {
		rec.Refund, err = scanRefund(leading{r, []any{&rec.CustomerID, &rec.CustomerName}})
		return rec, err
	}, fn, query, args...)
}

// ExportCreditNotes reads the credit-notes export: credit notes without their lines, by creation.
func (q Q) ExportCreditNotes(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.CreditNoteRecord) error) error {
	query, args := exportQuery(withCustomer("credit_notes", `id, number, invoice_id, customer_id, currency, reason, description,
		credit_amount, refund_amount, offset_amount, total, tax_total, balance_entry_id, usage_event_id, created_at, metadata`),
		[]any{merchantAccountID}, f, "t.created_at", "t.created_at, t.id", Eq{"t.invoice_id", f.InvoiceID}, Eq{"t.customer_id", f.CustomerID})
	return eachRow(ctx, q, "store.ExportCreditNotes", func(r scanner) (rec remit.CreditNoteRecord, err error) {
		c := &rec.CreditNote
		var desc, entry, usageEvent sql.NullString
		var created int64
		err = r.Scan(&rec.CustomerName, &c.CreditNoteID, &c.Number, &c.InvoiceID, &c.CustomerID, &c.Currency, &c.Reason, &desc,
			&c.CreditAmount, &c.RefundAmount, &c.OffsetAmount, &c.Total, &c.TaxTotal, &entry, &usageEvent, &created, &rec.Metadata)
		c.Object, c.Status, c.MerchantAccountID, c.CreatedAt = "credit_note", "issued", merchantAccountID, remit.FromMicros(created)
		c.Description, c.BalanceEntryID, c.UsageEventID = textPtr(desc), textPtr(entry), textPtr(usageEvent)
		return rec, err
	}, fn, query, args...)
}

// ExportBalanceEntries reads the balance-entries export: prepaid balance entries of every customer,
// by creation, then append order.
func (q Q) ExportBalanceEntries(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.BalanceEntryRecord) error) error {
	query, args := exportQuery(withCustomer("balance_entries", `id, customer_id, type, currency, amount, remaining, source_entry_id,
		invoice_id, credit_note_id, description, effective_at, expires_at, created_at, metadata`), []any{merchantAccountID}, f,
		"t.created_at", "t.created_at, t.seq", Eq{"t.customer_id", f.CustomerID}, Eq{"t.type", f.Type}, Eq{"t.currency", f.Currency})
	return eachRow(ctx, q, "store.ExportBalanceEntries", func(r scanner) (rec remit.BalanceEntryRecord, err error) {
		e := &rec.Entry
		var remaining, expires sql.NullInt64
		var source, invoice, creditNote, desc sql.NullString
		var effective, created int64
		err = r.Scan(&rec.CustomerName, &e.EntryID, &e.CustomerID, &e.Type, &e.Currency, &e.Amount, &remaining, &source, &invoice,
			&creditNote, &desc, &effective, &expires, &created, &rec.Metadata)
		e.Object, e.MerchantAccountID = "balance_entry", merchantAccountID
		e.Remaining, e.SourceEntryID, e.InvoiceID, e.CreditNoteID = intPtr(remaining), textPtr(source), textPtr(invoice), textPtr(creditNote)
		e.Description, e.EffectiveAt, e.ExpiresAt, e.CreatedAt = textPtr(desc), remit.FromMicros(effective), timePtr(expires), remit.FromMicros(created)
		return rec, err
	}, fn, query, args...)
}

// ExportUsageHours reads what usage-daily folds into days: the hourly pre-aggregates with live
// events (store/usage_agg.go) and, for unique_count meters, each hour's distinct values, merged in
// the order of customer, meter and hour (both tables are clustered on it: the merge sorts nothing),
// each with its meter's aggregation and its customer's name. The range bounds the hours.
func (q Q) ExportUsageHours(ctx context.Context, merchantAccountID string, f remit.ExportFilter, fn func(*remit.UsageHour) error) error {
	where, args := exportWhere("", []any{merchantAccountID}, f, "u.hour_start", Eq{"u.customer_id", f.CustomerID}, Eq{"u.meter_id", f.MeterID})
	// A unique_count hour's value row counts its value's live events as event_count, so that one
	// condition (event_count > 0) keeps the live rows of both.
	hourly := `SELECT merchant_account_id, customer_id, meter_id, hour_start, quantity, event_count, max_quantity, latest_ts,
		latest_seq, latest_quantity, CAST(NULL AS TEXT) AS value FROM usage_hourly`
	unique := `SELECT merchant_account_id, customer_id, meter_id, hour_start, CAST(0 AS BIGINT) AS quantity, events AS event_count,
		CAST(NULL AS BIGINT) AS max_quantity, CAST(NULL AS BIGINT) AS latest_ts, CAST(NULL AS BIGINT) AS latest_seq,
		CAST(NULL AS BIGINT) AS latest_quantity, value FROM usage_unique_hourly`
	named := func(from string) string {
		return `SELECT u.customer_id, COALESCE(c.name, ''), u.meter_id, COALESCE(m.aggregation, '` + remit.AggSum + `'), u.hour_start,
			u.quantity, u.event_count, u.max_quantity, u.latest_ts, u.latest_seq, u.latest_quantity, u.value
			FROM ` + from + ` ` + joinCustomer("u") + ` LEFT JOIN meters m ON m.merchant_account_id = u.merchant_account_id AND m.id = u.meter_id
			WHERE u.merchant_account_id = $1 AND u.event_count > 0` + where
	}
	// Each dialect merges the two ordered ranges from one shape of the query only: SQLite a
	// compound SELECT whose arms each read their range; PostgreSQL (Merge Append) a UNION ALL of
	// bare arms in FROM with every condition outside, so that it sees the merchant account
	// constant in both.
	query := named("("+hourly+") u") + ` UNION ALL ` + named("("+unique+") u") + ` ORDER BY 1, 3, 5`
	if q.d == Postgres {
		query = named("("+hourly+" UNION ALL "+unique+") u") + ` ORDER BY u.merchant_account_id, u.customer_id, u.meter_id, u.hour_start`
	}
	return eachRow(ctx, q, "store.ExportUsageHours", func(r scanner) (h remit.UsageHour, err error) {
		var hour int64
		var max, lts, lseq, lq sql.NullInt64
		var value sql.NullString
		err = r.Scan(&h.CustomerID, &h.CustomerName, &h.MeterID, &h.Aggregation, &hour, &h.Quantity, &h.Events, &max, &lts, &lseq, &lq, &value)
		h.HourStart, h.Max, h.Value = remit.FromMicros(hour), intPtr(max), textPtr(value)
		if lts.Valid {
			h.Latest = &remit.UsageLatest{TS: lts.Int64, Seq: lseq.Int64, Quantity: lq.Int64}
		}
		return h, err
	}, fn, query, args...)
}
