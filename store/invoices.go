package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"

	"github.com/remit-billing/remit"
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonList is the JSON array of s for a column that is never null: "[]" when s is nil.
func jsonList[T any](s []T) string {
	if s == nil {
		return "[]"
	}
	return mustJSON(s)
}

const invoiceColumns = `id, number, customer_id, billing_account_id, currency, status, collection_method, subscription_id,
	quote_id, period_start, period_end, coupon_ids, subtotal, discount_total, prepaid_applied, tax_total, total, amount_due,
	amount_paid, amount_remaining, credited_total, offset_total, refunded_total, tax_transaction_id, payment_url,
	auto_finalize_at, last_payment_error, finalized_by_ref, finalized_at, paid_at, voided_at, metadata, created_at, updated_at,
	latest_payment_id, attempt_count, next_payment_attempt_at, dunning_status, dunning_started_at, dunning_retries,
	hosted_invoice_url, days_until_due, due_date, memo, tax_stale`

func invoiceArgs(inv remit.Invoice) []any {
	dunningStatus := inv.DunningStatus
	if dunningStatus == "" {
		dunningStatus = remit.DunningNone
	}
	return []any{inv.InvoiceID, optText(inv.Number), inv.CustomerID, inv.BillingAccountID, inv.Currency, inv.Status,
		inv.CollectionMethod, optText(inv.SubscriptionID), optText(inv.QuoteID), optMicros(inv.PeriodStart), optMicros(inv.PeriodEnd),
		jsonList(inv.CouponIDs), inv.Subtotal, inv.DiscountTotal, inv.PrepaidApplied, inv.TaxTotal, inv.Total, inv.AmountDue,
		inv.AmountPaid, inv.AmountRemaining, inv.CreditedTotal, inv.OffsetTotal, inv.RefundedTotal, optText(inv.TaxTransactionID),
		optText(inv.PaymentURL), optMicros(inv.AutoFinalizeAt), jsonText(inv.LastPaymentError), optText(inv.FinalizedByRef),
		optMicros(inv.FinalizedAt), optMicros(inv.PaidAt), optMicros(inv.VoidedAt), metadataText(inv.Metadata),
		remit.Micros(inv.CreatedAt), remit.Micros(inv.UpdatedAt), optText(inv.LatestPaymentID), inv.AttemptCount,
		optMicros(inv.NextPaymentAttemptAt), string(dunningStatus), optMicros(inv.DunningStartedAt), inv.DunningRetries,
		optText(inv.HostedInvoiceURL), optInt(inv.DaysUntilDue), optMicros(inv.DueDate), optText(inv.Memo), inv.TaxStale}
}

// InsertInvoice inserts an invoice and its lines: the invoice_lines rows and, in the invoice's
// row, the same lines as its lines_doc (invoice_lines.go). A duplicate caller-chosen ID is a conflict.
func (q Q) InsertInvoice(ctx context.Context, inv remit.Invoice) error {
	rows := lineRowsOf(inv.Lines)
	args := append(append([]any{inv.MerchantAccountID}, invoiceArgs(inv)...), linesDoc(rows))
	_, err := q.exec(ctx, `INSERT INTO invoices (merchant_account_id, `+invoiceColumns+`, lines_doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
		$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36,
		$37, $38, $39, $40, $41, $42, $43, $44, $45, $46, $47)`, args...)
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	if err != nil {
		return wrapErr(err, "store.InsertInvoice")
	}
	return q.insertInvoiceLines(ctx, inv.MerchantAccountID, inv.InvoiceID, rows)
}

// unmarshalIf decodes a JSON column into v unless it is NULL.
func unmarshalIf(s sql.NullString, v any) error {
	if !s.Valid {
		return nil
	}
	return json.Unmarshal([]byte(s.String), v)
}

// AddLineUsageCorrection appends a usage correction to a finalized invoice line's trail, in its
// invoice_lines row and in the invoice's lines_doc.
func (q Q) AddLineUsageCorrection(ctx context.Context, merchantAccountID, invoiceID string, l remit.InvoiceLine, c remit.UsageCorrection) error {
	all := append(append([]remit.UsageCorrection(nil), l.UsageCorrections...), c)
	_, err := q.exec(ctx, `UPDATE invoice_lines SET usage_corrections = $4 WHERE merchant_account_id = $1 AND invoice_id = $2 AND id = $3`,
		merchantAccountID, invoiceID, l.InvoiceLineID, mustJSON(all))
	if err == nil {
		err = q.rewriteLinesDoc(ctx, merchantAccountID, invoiceID)
	}
	return wrapErr(err, "store.AddLineUsageCorrection")
}

// UpdateInvoice writes every field of the invoice's header. With lines, the lines are replaced
// too, in invoice_lines and in the same UPDATE's lines_doc (drafts only: a finalized invoice's
// lines change only through UpdateInvoiceLineFigures and AddLineUsageCorrection).
func (q Q) UpdateInvoice(ctx context.Context, inv remit.Invoice, lines bool) error {
	args := append([]any{inv.MerchantAccountID}, invoiceArgs(inv)...)
	var rows []lineRow
	setDoc := ""
	if lines {
		rows = lineRowsOf(inv.Lines)
		args = append(args, linesDoc(rows))
		setDoc = ", lines_doc = $47"
	}
	_, err := q.exec(ctx, `UPDATE invoices SET number = $3, customer_id = $4, billing_account_id = $5, currency = $6, status = $7,
		collection_method = $8, subscription_id = $9, quote_id = $10, period_start = $11, period_end = $12, coupon_ids = $13,
		subtotal = $14, discount_total = $15, prepaid_applied = $16, tax_total = $17, total = $18, amount_due = $19,
		amount_paid = $20, amount_remaining = $21, credited_total = $22, offset_total = $23, refunded_total = $24,
		tax_transaction_id = $25, payment_url = $26, auto_finalize_at = $27, last_payment_error = $28, finalized_by_ref = $29,
		finalized_at = $30, paid_at = $31, voided_at = $32, metadata = $33, created_at = $34, updated_at = $35,
		latest_payment_id = $36, attempt_count = $37, next_payment_attempt_at = $38, dunning_status = $39,
		dunning_started_at = $40, dunning_retries = $41, hosted_invoice_url = $42, days_until_due = $43, due_date = $44,
		memo = $45, tax_stale = $46`+setDoc+` WHERE merchant_account_id = $1 AND id = $2`, args...)
	if err != nil {
		return wrapErr(err, "store.UpdateInvoice")
	}
	if !lines {
		return nil
	}
	if _, err := q.exec(ctx, `DELETE FROM invoice_lines WHERE merchant_account_id = $1 AND invoice_id = $2`, inv.MerchantAccountID, inv.InvoiceID); err != nil {
		return wrapErr(err, "store.UpdateInvoice: lines")
	}
	return q.insertInvoiceLines(ctx, inv.MerchantAccountID, inv.InvoiceID, rows)
}

// SetInvoiceNumber writes a finalized invoice's number, and nothing else: finalization writes the
// rest first and takes the number last, so the merchant account's counter row stays locked for
// this one statement and the commit (app.Invoicing.finalizeInTx).
func (q Q) SetInvoiceNumber(ctx context.Context, merchantAccountID, invoiceID, number string) error {
	_, err := q.exec(ctx, `UPDATE invoices SET number = $3 WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, invoiceID, number)
	return wrapErr(err, "store.SetInvoiceNumber")
}

// UpdateInvoiceLineFigures writes a finalized line's discount, prepaid, tax and credited figures,
// in its invoice_lines row and in the invoice's lines_doc.
func (q Q) UpdateInvoiceLineFigures(ctx context.Context, merchantAccountID, invoiceID string, l remit.InvoiceLine) error {
	r := lineRowsOf([]remit.InvoiceLine{l})[0]
	_, err := q.exec(ctx, `UPDATE invoice_lines SET discount_amount = $4, prepaid_applied = $5, tax_amount = $6,
		credited_amount = $7, taxes = $8, credited_tax = $9 WHERE merchant_account_id = $1 AND invoice_id = $2 AND id = $3`,
		merchantAccountID, invoiceID, r.ID, r.DiscountAmount, r.PrepaidApplied, r.TaxAmount, r.CreditedAmount,
		mustJSON(r.Taxes), r.CreditedTax)
	if err == nil {
		err = q.rewriteLinesDoc(ctx, merchantAccountID, invoiceID)
	}
	return wrapErr(err, "store.UpdateInvoiceLineFigures")
}

// scanInvoice scans a row of invoiceColumns.
func scanInvoice(row interface{ Scan(...any) error }) (remit.Invoice, error) {
	return scanInvoiceAnd(row)
}

// scanInvoiceAnd scans a row of invoiceColumns followed by more columns, into more.
func scanInvoiceAnd(row interface{ Scan(...any) error }, more ...any) (inv remit.Invoice, err error) {
	var number, sub, quote, taxTxn, payURL, lastErr, byRef, latest, hosted, memo sql.NullString
	var pStart, pEnd, autoFin, fin, paid, voided, nextAttempt, dunStart, days, due sql.NullInt64
	var coupons, md string
	var created, updated int64
	err = row.Scan(append([]any{&inv.InvoiceID, &number, &inv.CustomerID, &inv.BillingAccountID, &inv.Currency, &inv.Status,
		&inv.CollectionMethod, &sub, &quote, &pStart, &pEnd, &coupons, &inv.Subtotal, &inv.DiscountTotal, &inv.PrepaidApplied,
		&inv.TaxTotal, &inv.Total, &inv.AmountDue, &inv.AmountPaid, &inv.AmountRemaining, &inv.CreditedTotal, &inv.OffsetTotal,
		&inv.RefundedTotal, &taxTxn, &payURL, &autoFin, &lastErr, &byRef, &fin, &paid, &voided, &md, &created, &updated, &latest,
		&inv.AttemptCount, &nextAttempt, &inv.DunningStatus, &dunStart, &inv.DunningRetries, &hosted, &days, &due, &memo, &inv.TaxStale}, more...)...)
	if err != nil {
		return inv, err
	}
	inv.NextPaymentAttemptAt, inv.DunningStartedAt = timePtr(nextAttempt), timePtr(dunStart)
	inv.DaysUntilDue, inv.DueDate, inv.Memo = intPtr(days), timePtr(due), textPtr(memo)
	inv.Object = "invoice"
	inv.LatestPaymentID = textPtr(latest)
	inv.Number, inv.SubscriptionID, inv.QuoteID = textPtr(number), textPtr(sub), textPtr(quote)
	inv.TaxTransactionID, inv.PaymentURL, inv.FinalizedByRef = textPtr(taxTxn), textPtr(payURL), textPtr(byRef)
	inv.HostedInvoiceURL = textPtr(hosted)
	if lastErr.Valid {
		inv.LastPaymentError = &remit.PaymentError{}
		if err := json.Unmarshal([]byte(lastErr.String), inv.LastPaymentError); err != nil {
			return inv, err
		}
	}
	inv.PeriodStart, inv.PeriodEnd, inv.AutoFinalizeAt = timePtr(pStart), timePtr(pEnd), timePtr(autoFin)
	inv.FinalizedAt, inv.PaidAt, inv.VoidedAt = timePtr(fin), timePtr(paid), timePtr(voided)
	inv.CreatedAt, inv.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	if coupons == "[]" { // most invoices: no JSON decoding
		inv.CouponIDs = []string{}
	} else if err := json.Unmarshal([]byte(coupons), &inv.CouponIDs); err != nil {
		return inv, err
	}
	if md == "{}" {
		inv.Metadata = map[string]string{}
	} else if err := json.Unmarshal([]byte(md), &inv.Metadata); err != nil {
		return inv, err
	}
	return inv, nil
}

// GetInvoice returns an invoice with its lines, or not_found: one row, the lines coming from its
// lines_doc (invoice_lines.go), or from invoice_lines when the doc is not kept. Locked, the
// invoice row is locked (PostgreSQL) until the transaction ends: every change to an invoice takes
// this lock first.
func (q Q) GetInvoice(ctx context.Context, merchantAccountID, invoiceID string, read Read) (remit.Invoice, error) {
	query := `SELECT ` + invoiceColumns + `, lines_doc FROM invoices WHERE merchant_account_id = $1 AND id = $2` + q.lockFor(read)
	var doc sql.NullString
	inv, err := scanInvoiceAnd(q.QueryRow(ctx, query, merchantAccountID, invoiceID), &doc)
	if err = notFoundOr(err, "invoice", invoiceID, "store.GetInvoice"); err != nil {
		return inv, err
	}
	inv.MerchantAccountID = merchantAccountID
	return inv, wrapErr(q.fillLines(ctx, &inv, doc), "store.GetInvoice")
}

// fillLines sets an invoice's lines from its lines_doc, or from invoice_lines when the doc is not
// kept (NULL).
func (q Q) fillLines(ctx context.Context, inv *remit.Invoice, doc sql.NullString) (err error) {
	if doc.Valid {
		inv.Lines, err = linesOfDoc(doc.String)
		return wrapErr(err, "lines_doc")
	}
	rows, err := q.tableLineRows(ctx, inv.MerchantAccountID, inv.InvoiceID)
	inv.Lines = linesOf(rows)
	return wrapErr(err, "lines")
}

// --- tax transactions ---

const taxColumns = `id, status, type, source_document_id, customer_id, currency, lines, total_tax, tax_exempt, committed_at, created_at, updated_at,
	provider, provider_calculation_id, provider_transaction_id`

// taxTable is the tax_transactions table's reads.
var taxTable = accountTable[remit.TaxTransaction]{from: "tax_transactions", columns: taxColumns, kind: "tax transaction",
	scan: owning(scanTax, func(t *remit.TaxTransaction) *string { return &t.MerchantAccountID })}

// UpsertTaxTransaction inserts or rewrites a tax transaction.
func (q Q) UpsertTaxTransaction(ctx context.Context, t remit.TaxTransaction) error {
	_, err := q.exec(ctx, `INSERT INTO tax_transactions (merchant_account_id, `+taxColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (merchant_account_id, id) DO UPDATE SET status = excluded.status, lines = excluded.lines,
		total_tax = excluded.total_tax, tax_exempt = excluded.tax_exempt, committed_at = excluded.committed_at, updated_at = excluded.updated_at,
		provider = excluded.provider, provider_calculation_id = excluded.provider_calculation_id,
		provider_transaction_id = excluded.provider_transaction_id`,
		t.MerchantAccountID, t.TaxTransactionID, t.Status, t.Type, t.SourceDocumentID, t.CustomerID, t.Currency, jsonList(t.Lines),
		t.TotalTax, t.TaxExempt, optMicros(t.CommittedAt), remit.Micros(t.CreatedAt), remit.Micros(t.UpdatedAt),
		cmp.Or(t.Provider, "builtin"), optText(t.ProviderCalculationID), optText(t.ProviderTransactionID))
	return wrapErr(err, "store.UpsertTaxTransaction")
}

func scanTax(row interface{ Scan(...any) error }) (t remit.TaxTransaction, err error) {
	var lines string
	var committed sql.NullInt64
	var created, updated int64
	var calc, txn sql.NullString
	err = row.Scan(&t.TaxTransactionID, &t.Status, &t.Type, &t.SourceDocumentID, &t.CustomerID, &t.Currency, &lines,
		&t.TotalTax, &t.TaxExempt, &committed, &created, &updated, &t.Provider, &calc, &txn)
	if err != nil {
		return t, err
	}
	t.ProviderCalculationID, t.ProviderTransactionID = textPtr(calc), textPtr(txn)
	t.Object, t.CommittedAt = "tax_transaction", timePtr(committed)
	t.CreatedAt, t.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	return t, json.Unmarshal([]byte(lines), &t.Lines)
}

// GetTaxTransaction returns a tax transaction or not_found; locked, locked until tx ends.
func (q Q) GetTaxTransaction(ctx context.Context, merchantAccountID, id string, read Read) (remit.TaxTransaction, error) {
	return taxTable.get(ctx, q, "store.GetTaxTransaction", merchantAccountID, id, read)
}

// TaxFilter filters the tax-transaction list.
type TaxFilter struct {
	Status           string
	SourceDocumentID string
	ListPage
}

// ListTaxTransactions returns up to f.Limit+1 transactions newest first after the keyset position
// (the extra one tells the caller there is a next page).
func (q Q) ListTaxTransactions(ctx context.Context, merchantAccountID string, f TaxFilter) ([]remit.TaxTransaction, error) {
	return taxTable.list(ctx, q, "store.ListTaxTransactions", merchantAccountID, f.ListPage,
		Eq{"status", f.Status}, Eq{"source_document_id", f.SourceDocumentID})
}

// ListDunningInvoices returns the IDs of a billing account's open invoices with something left to
// pay, oldest first (a new default payment method retries them).
func (q Q) ListDunningInvoices(ctx context.Context, merchantAccountID, billingAccountID string) ([]string, error) {
	return queryStrings(ctx, q, "store.ListDunningInvoices", `SELECT id FROM invoices WHERE merchant_account_id = $1 AND billing_account_id = $2 AND status = 'open'
		AND amount_remaining > 0 ORDER BY created_at, id`, merchantAccountID, billingAccountID)
}

// InvoiceFilter narrows a list of invoices: equal filters (empty: any), a page size and a
// keyset position (AfterID empty: the first page). One more than Limit is returned. Lines reads
// each invoice's lines too (the API's list; the dashboard's goes without).
type InvoiceFilter struct {
	CustomerID, Status, BillingAccountID, SubscriptionID, Number string
	Lines                                                        bool
	ListPage
}

// ListInvoices lists a merchant account's invoices newest first. A page is one range of an index:
// invoices_customer_list with a customer, invoices_status_list, invoices_billing_account_list or
// invoices_subscription_list with those, else invoices_list; a number names one invoice
// (invoices_number). With Lines, each invoice's lines come from its lines_doc, in the same row.
func (q Q) ListInvoices(ctx context.Context, merchantAccountID string, f InvoiceFilter) ([]remit.Invoice, error) {
	type row struct {
		inv remit.Invoice
		doc sql.NullString
	}
	columns := invoiceColumns
	if f.Lines {
		columns += `, lines_doc`
	}
	query, args := pageQuery(`SELECT `+columns+` FROM invoices WHERE merchant_account_id = $1`, []any{merchantAccountID}, f.ListPage,
		Eq{"customer_id", f.CustomerID}, Eq{"status", f.Status}, Eq{"billing_account_id", f.BillingAccountID},
		Eq{"subscription_id", f.SubscriptionID}, Eq{"number", f.Number})
	rows, err := queryAll(ctx, q, "store.ListInvoices", func(sc interface{ Scan(...any) error }) (r row, err error) {
		if !f.Lines {
			r.inv, err = scanInvoice(sc)
			return r, err
		}
		r.inv, err = scanInvoiceAnd(sc, &r.doc)
		return r, err
	}, func(r *row) { r.inv.MerchantAccountID = merchantAccountID }, query, args...)
	if err != nil {
		return nil, err
	}
	out := make([]remit.Invoice, len(rows))
	for i, r := range rows {
		if f.Lines {
			if err := q.fillLines(ctx, &r.inv, r.doc); err != nil {
				return nil, wrapErr(err, "store.ListInvoices")
			}
		}
		out[i] = r.inv
	}
	return out, nil
}

// --- the parties of finalized invoices ---

// SetInvoiceParties stores the parties a finalized invoice was issued to.
func (q Q) SetInvoiceParties(ctx context.Context, merchantAccountID, invoiceID string, c remit.CustomerParty, m remit.MerchantParty) error {
	_, err := q.exec(ctx, `UPDATE invoices SET customer_party = $3, merchant_party = $4 WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, invoiceID, mustJSON(c), mustJSON(m))
	return wrapErr(err, "store.SetInvoiceParties")
}

// GetInvoiceParties returns the parties stored with an invoice (nil for a part not stored: a draft,
// or an invoice finalized before they were kept).
func (q Q) GetInvoiceParties(ctx context.Context, merchantAccountID, invoiceID string) (*remit.CustomerParty, *remit.MerchantParty, error) {
	var c, m sql.NullString
	err := q.QueryRow(ctx, `SELECT customer_party, merchant_party FROM invoices WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, invoiceID).Scan(&c, &m)
	if err = notFoundOr(err, "invoice", invoiceID, "store.GetInvoiceParties"); err != nil {
		return nil, nil, err
	}
	return jsonOf[remit.CustomerParty](c), jsonOf[remit.MerchantParty](m), nil
}

// FreezeCustomerParties stores c as the customer party of the customer's finalized invoices that
// have none (finalized before parties were kept), before an update changes the customer.
func (q Q) FreezeCustomerParties(ctx context.Context, merchantAccountID, customerID string, c remit.CustomerParty) error {
	_, err := q.exec(ctx, `UPDATE invoices SET customer_party = $3
		WHERE merchant_account_id = $1 AND customer_id = $2 AND customer_party IS NULL AND status <> 'draft'`,
		merchantAccountID, customerID, mustJSON(c))
	return wrapErr(err, "store.FreezeCustomerParties")
}

// FreezeMerchantParties stores m as the merchant party of the merchant account's finalized
// invoices that have none, before an update changes the merchant account.
func (q Q) FreezeMerchantParties(ctx context.Context, merchantAccountID string, m remit.MerchantParty) error {
	_, err := q.exec(ctx, `UPDATE invoices SET merchant_party = $2
		WHERE merchant_account_id = $1 AND merchant_party IS NULL AND status <> 'draft'`, merchantAccountID, mustJSON(m))
	return wrapErr(err, "store.FreezeMerchantParties")
}
