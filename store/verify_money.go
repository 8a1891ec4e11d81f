package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/remit-billing/remit"
)

// Reads for the money checks of verification (docs/verification.md): each streams the facts of one
// kind of record of a merchant account in keyset pages of verifyPage rows, with what other tables
// say about each row read and aggregated in SQL for that page only. Memory stays flat however large
// the store, and time grows with it linearly.
//
// What other tables say is always a scalar subquery per row (lookup), never a join: each is an
// index probe in both dialects (the indexes of migration 00020 serve the ones the engine's own
// reads do not need), whereas PostgreSQL plans a join of a page against a large table as a hash
// join over the whole table, once per page.

type rowScanner = interface{ Scan(...any) error }

// pages runs query page after page: its parameters are lead, then the keyset position (start,
// then key of the last row of the previous page); it must return at most verifyPage rows in
// keyset order. Each page is read whole before fn sees its rows.
func pages[T any](ctx context.Context, q Q, op, query string, lead, start []any, scan func(rowScanner) (T, error),
	key func(T) []any, fn func(T) error) error {
	after := start
	for {
		page, err := queryAll(ctx, q, op, scan, nil, query, append(append([]any{}, lead...), after...)...)
		if err != nil {
			return err
		}
		for _, v := range page {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(page) < verifyPage {
			return nil
		}
		after = key(page[len(page)-1])
	}
}

// pagesByID is pages over the rows of the merchant account ($1) in the order of one text key (the
// parameter $2 is the key of the last row of the previous page, "" before the first): id is the
// key of a row read.
func pagesByID[T any](ctx context.Context, q Q, op, query, account string, scan func(rowScanner) (T, error), id func(T) string,
	fn func(T) error) error {
	return pages(ctx, q, op, query, []any{account}, []any{""}, scan, func(v T) []any { return []any{id(v)} }, fn)
}

// lookup is a scalar subquery: expr over the rows of from that match where, which names columns
// of the outer row.
func lookup(expr, from, where string) string {
	return `(SELECT ` + expr + ` FROM ` + from + ` WHERE ` + where + `)`
}

// money is a sum of a BIGINT column as BIGINT in both dialects (0 over no rows).
func money(expr string) string { return `CAST(COALESCE(SUM(` + expr + `), 0) AS BIGINT)` }

// linesTax sums the taxAmount of a tax transaction's stored lines; ok is false when they are not
// valid JSON.
func linesTax(raw sql.NullString) (sum int64, ok bool) {
	if !raw.Valid {
		return 0, true
	}
	var lines []remit.TaxTransactionLine
	if json.Unmarshal([]byte(raw.String), &lines) != nil {
		return 0, false
	}
	for _, l := range lines {
		sum += l.TaxAmount
	}
	return sum, true
}

// LedgerEntryFacts calls fn with every balance entry of the merchant account, by customer then
// entry ID: for a debit the entry it names, for an entry that names none what was taken from it.
func (q Q) LedgerEntryFacts(ctx context.Context, account string, fn func(remit.LedgerEntryFacts) error) error {
	source := func(col string) string { // debits only: lots (half the ledger) name no source
		return `CASE WHEN e.source_entry_id IS NOT NULL THEN ` + lookup(`s.`+col, `balance_entries s`,
			`s.merchant_account_id = e.merchant_account_id AND s.customer_id = e.customer_id AND s.id = e.source_entry_id`) + ` END`
	}
	query := `SELECT e.customer_id, e.id, e.type, e.currency, e.amount, e.remaining, e.source_entry_id, e.invoice_id,
		e.credit_note_id, ` + source(`type`) + `, ` + source(`currency`) + `,
		CASE WHEN e.source_entry_id IS NULL THEN ` + lookup(money(`-d.amount`), `balance_entries d`, `d.merchant_account_id =
			e.merchant_account_id AND d.customer_id = e.customer_id AND d.source_entry_id = e.id`) + ` ELSE 0 END
		FROM (SELECT merchant_account_id, customer_id, id, type, currency, amount, remaining, source_entry_id, invoice_id,
			credit_note_id FROM balance_entries WHERE merchant_account_id = $1 AND (customer_id, id) > ($2, $3)
			ORDER BY customer_id, id LIMIT ` + itoa(verifyPage) + `) e
		ORDER BY e.customer_id, e.id`
	scan := func(r rowScanner) (remit.LedgerEntryFacts, error) {
		var f remit.LedgerEntryFacts
		var remaining sql.NullInt64
		var source, invoice, note, sType, sCurrency sql.NullString
		err := r.Scan(&f.CustomerID, &f.EntryID, &f.Type, &f.Currency, &f.Amount, &remaining, &source, &invoice, &note,
			&sType, &sCurrency, &f.Taken)
		f.Remaining, f.SourceEntryID, f.InvoiceID, f.CreditNoteID = intPtr(remaining), textPtr(source), textPtr(invoice), textPtr(note)
		f.SourceFound, f.SourceType, f.SourceCurrency = sType.Valid, sType.String, sCurrency.String
		return f, err
	}
	key := func(f remit.LedgerEntryFacts) []any { return []any{f.CustomerID, f.EntryID} }
	return pages(ctx, q, "store.LedgerEntryFacts", query, []any{account}, []any{"", ""}, scan, key, fn)
}

// invoicePage is the derived table of one page of the account's invoices by ID ($1, after $2).
var invoicePage = `(SELECT * FROM invoices WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) i`

// invoiceLines is a sum over the lines of the invoice i.
func invoiceLines(expr string) string {
	return lookup(money(expr), `invoice_lines l`, `l.merchant_account_id = i.merchant_account_id AND l.invoice_id = i.id`)
}

// InvoicePaymentFacts calls fn with every invoice of the merchant account, by ID, with the sums of
// its lines, of its succeeded payments and of its prepaid balance applications.
func (q Q) InvoicePaymentFacts(ctx context.Context, account string, fn func(remit.InvoicePaymentFacts) error) error {
	succeeded := func(col string) string {
		return lookup(money(`p.`+col), `payments p`, `p.merchant_account_id = i.merchant_account_id AND p.invoice_id = i.id
			AND p.status = 'succeeded'`)
	}
	query := `SELECT i.id, i.status, i.subtotal, i.discount_total, i.prepaid_applied, i.tax_total, i.total, i.amount_due,
		i.amount_paid, i.amount_remaining, i.offset_total, i.refunded_total, ` + invoiceLines(`l.amount`) + `,
		` + invoiceLines(`l.discount_amount`) + `, ` + invoiceLines(`l.prepaid_applied`) + `, ` + invoiceLines(`l.tax_amount`) + `,
		` + succeeded(`amount`) + `, ` + succeeded(`amount_refunded`) + `,
		` + lookup(money(`-b.amount`), `balance_entries b`, `b.merchant_account_id = i.merchant_account_id AND b.invoice_id = i.id
			AND b.type = 'application'`) + `
		FROM ` + invoicePage + ` ORDER BY i.id`
	scan := func(r rowScanner) (remit.InvoicePaymentFacts, error) {
		var f remit.InvoicePaymentFacts
		err := r.Scan(&f.InvoiceID, &f.Status, &f.Subtotal, &f.DiscountTotal, &f.PrepaidApplied, &f.TaxTotal, &f.Total,
			&f.AmountDue, &f.AmountPaid, &f.AmountRemaining, &f.OffsetTotal, &f.RefundedTotal, &f.Lines.Amount, &f.Lines.Discount,
			&f.Lines.Prepaid, &f.Lines.Tax, &f.Paid, &f.Refunded, &f.Applied)
		return f, err
	}
	id := func(f remit.InvoicePaymentFacts) string { return f.InvoiceID }
	return pagesByID(ctx, q, "store.InvoicePaymentFacts", query, account, scan, id, fn)
}

// PaymentReceiptFacts calls fn with every payment of the merchant account, by ID, with its receipt
// and the sums of its refunds.
func (q Q) PaymentReceiptFacts(ctx context.Context, account string, fn func(remit.PaymentReceiptFacts) error) error {
	refunds := func(expr string) string {
		return lookup(expr, `refunds r`, `r.merchant_account_id = p.merchant_account_id AND r.payment_id = p.id`)
	}
	receipt := func(col string) string {
		return lookup(`rc.`+col, `payment_receipts rc`, `rc.merchant_account_id = p.merchant_account_id AND rc.payment_id = p.id`)
	}
	query := `SELECT p.id, p.invoice_id, p.status, p.method, p.currency, p.amount, p.amount_refunded,
		` + refunds(money(`CASE WHEN r.status <> 'failed' THEN r.amount ELSE 0 END`)) + `, ` + refunds(`COUNT(*)`) + `,
		` + receipt(`id`) + `, ` + receipt(`invoice_id`) + `, ` + receipt(`currency`) + `, ` + receipt(`method`) + `,
		` + receipt(`status`) + `, ` + receipt(`amount`) + `, ` + receipt(`amount_refunded`) + `
		FROM (SELECT merchant_account_id, id, invoice_id, status, method, currency, amount, amount_refunded FROM payments
			WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) p
		ORDER BY p.id`
	scan := func(r rowScanner) (remit.PaymentReceiptFacts, error) {
		var f remit.PaymentReceiptFacts
		var id, invoice, currency, method, status sql.NullString
		var amount, refunded sql.NullInt64
		err := r.Scan(&f.PaymentID, &f.InvoiceID, &f.Status, &f.Method, &f.Currency, &f.Amount, &f.AmountRefunded, &f.Refunds,
			&f.RefundCount, &id, &invoice, &currency, &method, &status, &amount, &refunded)
		if id.Valid {
			f.Receipt = &remit.ReceiptFacts{ReceiptID: id.String, InvoiceID: invoice.String, Currency: currency.String,
				Method: method.String, Status: remit.ReceiptStatus(status.String), Amount: amount.Int64, AmountRefunded: refunded.Int64}
		}
		return f, err
	}
	id := func(f remit.PaymentReceiptFacts) string { return f.PaymentID }
	return pagesByID(ctx, q, "store.PaymentReceiptFacts", query, account, scan, id, fn)
}

// ReceiptPaymentFacts calls fn with every receipt of the merchant account, by ID, with whether its
// payment exists.
func (q Q) ReceiptPaymentFacts(ctx context.Context, account string, fn func(remit.ReceiptPaymentFacts) error) error {
	query := `SELECT r.id, r.payment_id, ` + lookup(`p.id`, `payments p`, `p.merchant_account_id = r.merchant_account_id
		AND p.id = r.payment_id`) + ` FROM (SELECT merchant_account_id, id, payment_id FROM payment_receipts
			WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) r ORDER BY r.id`
	scan := func(r rowScanner) (remit.ReceiptPaymentFacts, error) {
		var f remit.ReceiptPaymentFacts
		var payment sql.NullString
		err := r.Scan(&f.ReceiptID, &f.PaymentID, &payment)
		f.PaymentFound = payment.Valid
		return f, err
	}
	id := func(f remit.ReceiptPaymentFacts) string { return f.ReceiptID }
	return pagesByID(ctx, q, "store.ReceiptPaymentFacts", query, account, scan, id, fn)
}

// CreditNoteFacts calls fn with every credit note of the merchant account, by ID, with its
// invoice, the sums of its refunds and of the credit_note balance entries that name it.
func (q Q) CreditNoteFacts(ctx context.Context, account string, fn func(remit.CreditNoteFacts) error) error {
	refunds := func(cond string) string {
		return lookup(money(`r.amount`), `refunds r`, `r.merchant_account_id = c.merchant_account_id AND r.credit_note_id = c.id`+cond)
	}
	invoice := func(col string) string {
		return lookup(`i.`+col, `invoices i`, `i.merchant_account_id = c.merchant_account_id AND i.id = c.invoice_id`)
	}
	query := `SELECT c.id, c.invoice_id, c.currency, c.total, c.credit_amount, c.refund_amount, c.offset_amount, c.tax_total,
		c.lines, c.balance_entry_id, ` + invoice(`status`) + `, ` + invoice(`currency`) + `,
		` + refunds(``) + `, ` + refunds(` AND r.status = 'failed'`) + `,
		` + lookup(money(`b.amount`), `balance_entries b`, `b.merchant_account_id = c.merchant_account_id
			AND b.credit_note_id = c.id AND b.type = 'credit_note'`) + `
		FROM (SELECT * FROM credit_notes WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) c
		ORDER BY c.id`
	scan := func(r rowScanner) (remit.CreditNoteFacts, error) {
		var f remit.CreditNoteFacts
		var lines string
		var entry, status, currency sql.NullString
		err := r.Scan(&f.CreditNoteID, &f.InvoiceID, &f.Currency, &f.Total, &f.CreditAmount, &f.RefundAmount, &f.OffsetAmount,
			&f.TaxTotal, &lines, &entry, &status, &currency, &f.Refunds, &f.FailedRefunds, &f.Credited)
		f.BalanceEntryID, f.InvoiceFound = textPtr(entry), status.Valid
		f.InvoiceStatus, f.InvoiceCurrency = remit.InvoiceStatus(status.String), currency.String
		f.LinesUnread = err == nil && json.Unmarshal([]byte(lines), &f.Lines) != nil
		return f, err
	}
	id := func(f remit.CreditNoteFacts) string { return f.CreditNoteID }
	return pagesByID(ctx, q, "store.CreditNoteFacts", query, account, scan, id, fn)
}

// InvoiceCreditFacts calls fn with every invoice of the merchant account, by ID, with the sums of
// its credit notes and of its lines' credited amounts.
func (q Q) InvoiceCreditFacts(ctx context.Context, account string, fn func(remit.InvoiceCreditFacts) error) error {
	notes := func(agg string) string {
		return lookup(agg, `credit_notes c`, `c.merchant_account_id = i.merchant_account_id AND c.invoice_id = i.id`)
	}
	query := `SELECT i.id, i.status, i.total, i.credited_total, i.offset_total, ` + notes(`COUNT(*)`) + `,
		` + notes(money(`c.total`)) + `, ` + notes(money(`c.offset_amount`)) + `, ` + invoiceLines(`l.credited_amount`) + `,
		` + invoiceLines(`CASE WHEN l.credited_amount > l.amount - l.discount_amount - l.prepaid_applied + l.tax_amount
			THEN 1 ELSE 0 END`) + `
		FROM ` + invoicePage + ` ORDER BY i.id`
	scan := func(r rowScanner) (remit.InvoiceCreditFacts, error) {
		var f remit.InvoiceCreditFacts
		err := r.Scan(&f.InvoiceID, &f.Status, &f.Total, &f.CreditedTotal, &f.OffsetTotal, &f.Notes, &f.NotesTotal,
			&f.NotesOffset, &f.LinesCredited, &f.OverCreditedLines)
		return f, err
	}
	id := func(f remit.InvoiceCreditFacts) string { return f.InvoiceID }
	return pagesByID(ctx, q, "store.InvoiceCreditFacts", query, account, scan, id, fn)
}

// InvoiceTaxFacts calls fn with every invoice of the merchant account, by ID, with its sale tax
// transaction, the tax its credit notes and their reversals reversed, its lines' credited tax and
// the reversals of the invoice itself (a void).
func (q Q) InvoiceTaxFacts(ctx context.Context, account string, fn func(remit.InvoiceTaxFacts) error) error {
	sale := func(col string) string {
		return lookup(`s.`+col, `tax_transactions s`, `s.merchant_account_id = i.merchant_account_id AND s.id = i.tax_transaction_id`)
	}
	voids := func(agg string) string {
		return lookup(agg, `tax_transactions t`, `t.merchant_account_id = i.merchant_account_id AND t.source_document_id = i.id
			AND t.type = 'reversal'`)
	}
	query := `SELECT i.id, i.status, i.tax_total, i.tax_transaction_id, ` + sale(`type`) + `, ` + sale(`status`) + `,
		` + sale(`source_document_id`) + `, ` + sale(`total_tax`) + `, ` + sale(`lines`) + `, ` + invoiceLines(`l.credited_tax`) + `,
		` + invoiceLines(`CASE WHEN l.credited_tax > l.tax_amount THEN 1 ELSE 0 END`) + `,
		` + lookup(money(`c.tax_total`), `credit_notes c`, `c.merchant_account_id = i.merchant_account_id AND c.invoice_id = i.id`) + `,
		` + lookup(money(`-t.total_tax`), `credit_notes c JOIN tax_transactions t ON t.merchant_account_id = c.merchant_account_id
			AND t.id = c.tax_transaction_id`, `c.merchant_account_id = i.merchant_account_id AND c.invoice_id = i.id
			AND t.type = 'reversal'`) + `, ` + voids(`COUNT(*)`) + `, ` + voids(money(`-t.total_tax`)) + `
		FROM ` + invoicePage + ` ORDER BY i.id`
	scan := func(r rowScanner) (remit.InvoiceTaxFacts, error) {
		var f remit.InvoiceTaxFacts
		var txn, sType, sStatus, sSource, sLines sql.NullString
		var sTotal sql.NullInt64
		err := r.Scan(&f.InvoiceID, &f.Status, &f.TaxTotal, &txn, &sType, &sStatus, &sSource, &sTotal, &sLines,
			&f.LinesCreditedTax, &f.OverReversedLines, &f.NotesTax, &f.NotesReversed, &f.VoidReversals, &f.VoidReversed)
		if txn.Valid {
			sum, ok := linesTax(sLines)
			f.Sale = &remit.SaleTaxFacts{TaxTransactionID: txn.String, Found: sType.Valid, Type: sType.String,
				Status: remit.TaxStatus(sStatus.String), SourceDocumentID: sSource.String, TotalTax: sTotal.Int64, LinesTax: sum, LinesUnread: !ok}
		}
		return f, err
	}
	id := func(f remit.InvoiceTaxFacts) string { return f.InvoiceID }
	return pagesByID(ctx, q, "store.InvoiceTaxFacts", query, account, scan, id, fn)
}

// TaxReversalFacts calls fn with every reversal tax transaction of the merchant account, by ID,
// with the credit note or invoice it reverses.
func (q Q) TaxReversalFacts(ctx context.Context, account string, fn func(remit.TaxReversalFacts) error) error {
	note := func(col string) string {
		return lookup(`c.`+col, `credit_notes c`, `c.merchant_account_id = t.merchant_account_id AND c.id = t.source_document_id`)
	}
	query := `SELECT t.id, t.status, t.total_tax, t.lines, t.source_document_id, ` + note(`tax_total`) + `,
		` + note(`tax_transaction_id`) + `, ` + lookup(`i.status`, `invoices i`, `i.merchant_account_id = t.merchant_account_id
			AND i.id = t.source_document_id`) + `
		FROM (SELECT merchant_account_id, id, status, total_tax, lines, source_document_id FROM tax_transactions
			WHERE merchant_account_id = $1 AND type = 'reversal' AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) t
		ORDER BY t.id`
	scan := func(r rowScanner) (remit.TaxReversalFacts, error) {
		var f remit.TaxReversalFacts
		var lines, noteTxn, status sql.NullString
		var noteTax sql.NullInt64
		err := r.Scan(&f.TaxTransactionID, &f.Status, &f.TotalTax, &lines, &f.SourceDocumentID, &noteTax, &noteTxn, &status)
		sum, ok := linesTax(lines)
		f.LinesTax, f.LinesUnread = sum, !ok
		f.NoteFound, f.NoteTaxTotal, f.NoteTaxTransactionID = noteTax.Valid, noteTax.Int64, textPtr(noteTxn)
		f.InvoiceFound, f.InvoiceStatus = status.Valid, remit.InvoiceStatus(status.String)
		return f, err
	}
	id := func(f remit.TaxReversalFacts) string { return f.TaxTransactionID }
	return pagesByID(ctx, q, "store.TaxReversalFacts", query, account, scan, id, fn)
}

// SettlementFacts calls fn with every settlement of the merchant account, by ID, with its payout
// and the sums of the payments that name it.
func (q Q) SettlementFacts(ctx context.Context, account string, fn func(remit.SettlementFacts) error) error {
	payments := func(agg string) string {
		return lookup(agg, `payments p`, `p.merchant_account_id = s.merchant_account_id AND p.settlement_id = s.id`)
	}
	payout := func(col string) string {
		return lookup(`po.`+col, `payouts po`, `po.merchant_account_id = s.merchant_account_id AND po.id = s.payout_id`)
	}
	query := `SELECT s.id, s.currency, s.status, s.gross_amount, s.refund_amount, s.fee_amount, s.payment_count, s.closed_at,
		s.paid_at, s.payout_id, ` + payout(`settlement_id`) + `, ` + payout(`currency`) + `, ` + payout(`amount`) + `,
		` + payments(`COUNT(*)`) + `, ` + payments(money(`p.amount`)) + `, ` + payments(money(`p.fee_amount`)) + `,
		` + payments(money(`CASE WHEN p.status = 'succeeded' AND p.method = 'card' AND p.currency = s.currency THEN 0 ELSE 1 END`)) + `
		FROM (SELECT * FROM settlements WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) s
		ORDER BY s.id`
	scan := func(r rowScanner) (remit.SettlementFacts, error) {
		var f remit.SettlementFacts
		var closed, paid, amount sql.NullInt64
		var payoutID, poSettlement, poCurrency sql.NullString
		err := r.Scan(&f.SettlementID, &f.Currency, &f.Status, &f.Gross, &f.Refunds, &f.Fees, &f.PaymentCount, &closed, &paid,
			&payoutID, &poSettlement, &poCurrency, &amount, &f.Payments, &f.PaymentsAmount, &f.PaymentsFees, &f.Foreign)
		f.Closed, f.Paid = closed.Valid, paid.Valid
		if payoutID.Valid {
			f.Payout = &remit.PayoutFacts{PayoutID: payoutID.String, Found: poSettlement.Valid, SettlementID: poSettlement.String,
				Currency: poCurrency.String, Amount: amount.Int64}
		}
		return f, err
	}
	id := func(f remit.SettlementFacts) string { return f.SettlementID }
	return pagesByID(ctx, q, "store.SettlementFacts", query, account, scan, id, fn)
}

// SettledPaymentFacts calls fn with every payment of the merchant account, by ID, with the
// settlement it names.
func (q Q) SettledPaymentFacts(ctx context.Context, account string, fn func(remit.SettledPaymentFacts) error) error {
	query := `SELECT p.id, p.status, p.method, p.currency, p.settlement_id, ` + lookup(`s.currency`, `settlements s`,
		`s.merchant_account_id = p.merchant_account_id AND s.id = p.settlement_id`) + `
		FROM (SELECT merchant_account_id, id, status, method, currency, settlement_id FROM payments
			WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) p
		ORDER BY p.id`
	scan := func(r rowScanner) (remit.SettledPaymentFacts, error) {
		var f remit.SettledPaymentFacts
		var settlement, sCurrency sql.NullString
		err := r.Scan(&f.PaymentID, &f.Status, &f.Method, &f.Currency, &settlement, &sCurrency)
		f.SettlementID, f.SettlementFound, f.SettlementCurrency = textPtr(settlement), sCurrency.Valid, sCurrency.String
		return f, err
	}
	id := func(f remit.SettledPaymentFacts) string { return f.PaymentID }
	return pagesByID(ctx, q, "store.SettledPaymentFacts", query, account, scan, id, fn)
}

// SettlementRefundFacts returns, per currency, the refunds the merchant account's settlements hold
// and those made of its card payments that did not fail (one row per currency either has).
func (q Q) SettlementRefundFacts(ctx context.Context, account string) ([]remit.SettlementRefundFacts, error) {
	type sums struct {
		currency      string
		amount, count int64
	}
	scan := func(r rowScanner) (sums, error) {
		var s sums
		return s, r.Scan(&s.currency, &s.amount, &s.count)
	}
	settled, err := queryAll(ctx, q, "store.SettlementRefundFacts", scan, nil, `SELECT currency, `+money(`refund_amount`)+`,
		`+money(`refund_count`)+` FROM settlements WHERE merchant_account_id = $1 GROUP BY currency ORDER BY currency`, account)
	if err != nil {
		return nil, err
	}
	refunded, err := queryAll(ctx, q, "store.SettlementRefundFacts", scan, nil, `SELECT r.currency, `+money(`r.amount`)+`, COUNT(*)
		FROM refunds r JOIN payments p ON p.merchant_account_id = r.merchant_account_id AND p.id = r.payment_id
		WHERE r.merchant_account_id = $1 AND r.status <> 'failed' AND p.status = 'succeeded' AND p.method = 'card'
		GROUP BY r.currency ORDER BY r.currency`, account)
	if err != nil {
		return nil, err
	}
	var out []remit.SettlementRefundFacts
	at := map[string]int{}
	row := func(currency string) *remit.SettlementRefundFacts {
		if i, ok := at[currency]; ok {
			return &out[i]
		}
		at[currency] = len(out)
		out = append(out, remit.SettlementRefundFacts{Currency: currency})
		return &out[len(out)-1]
	}
	for _, s := range settled {
		f := row(s.currency)
		f.Settled, f.SettledCount = s.amount, s.count
	}
	for _, s := range refunded {
		f := row(s.currency)
		f.Refunds, f.RefundCount = s.amount, s.count
	}
	return out, nil
}

// numbered are the tables of the numbered documents, by counter name (store.Q.NextNumber).
var numbered = map[string]string{"invoice": "invoices", "receipt": "payment_receipts", "credit_note": "credit_notes"}

// DocumentCounter returns the merchant account's counter of kind (invoice, receipt, credit_note;
// 0 when it has none) and how many of its documents of that kind carry a number.
func (q Q) DocumentCounter(ctx context.Context, account, kind string) (counter, documents int64, err error) {
	err = q.QueryRow(ctx, `SELECT COALESCE((SELECT value FROM counters WHERE scope = $1 AND name = $2), 0),
		(SELECT COUNT(number) FROM `+numbered[kind]+` WHERE merchant_account_id = $1)`, account, kind).Scan(&counter, &documents)
	return counter, documents, wrapErr(err, "store.DocumentCounter")
}

// DocumentNumbers calls fn with the ID and number of every document of kind of the merchant
// account that carries a number, by number (unique within the account: the tables' unique
// indexes, which the pages follow).
func (q Q) DocumentNumbers(ctx context.Context, account, kind string, fn func(id, number string) error) error {
	type doc struct{ id, number string }
	query := `SELECT id, number FROM ` + numbered[kind] + ` WHERE merchant_account_id = $1 AND number > $2
		ORDER BY number LIMIT ` + itoa(verifyPage)
	scan := func(r rowScanner) (doc, error) {
		var d doc
		return d, r.Scan(&d.id, &d.number)
	}
	number := func(d doc) string { return d.number }
	return pagesByID(ctx, q, "store.DocumentNumbers", query, account, scan, number, func(d doc) error { return fn(d.id, d.number) })
}

// InvoiceNumberFacts calls fn with every invoice of the merchant account, by ID, with its state
// and number.
func (q Q) InvoiceNumberFacts(ctx context.Context, account string, fn func(remit.InvoiceNumberFacts) error) error {
	query := `SELECT id, status, number FROM invoices WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage)
	scan := func(r rowScanner) (remit.InvoiceNumberFacts, error) {
		var f remit.InvoiceNumberFacts
		var number sql.NullString
		err := r.Scan(&f.InvoiceID, &f.Status, &number)
		f.Number = textPtr(number)
		return f, err
	}
	id := func(f remit.InvoiceNumberFacts) string { return f.InvoiceID }
	return pagesByID(ctx, q, "store.InvoiceNumberFacts", query, account, scan, id, fn)
}

const chargeColumns = `sc.idempotency_ref, sc.reference, sc.status, sc.currency, sc.amount, sc.fee`

// ProcessorPaymentFacts calls fn with every payment of the merchant account, by ID, with the
// sandbox processor's charge made for it (idempotency reference: the payment's ID), if any.
func (q Q) ProcessorPaymentFacts(ctx context.Context, account string, fn func(remit.ProcessorPaymentFacts) error) error {
	charge := func(col string) string { return lookup(`sc.`+col, `sandbox_charges sc`, `sc.idempotency_ref = p.id`) }
	query := `SELECT p.id, p.status, p.method, p.processor, p.currency, p.amount, p.fee_amount, p.idempotency_ref,
		p.processor_reference, ` + charge(`reference`) + `, ` + charge(`status`) + `, ` + charge(`currency`) + `,
		` + charge(`amount`) + `, ` + charge(`fee`) + `
		FROM (SELECT id, status, method, processor, currency, amount, fee_amount, idempotency_ref, processor_reference FROM payments
			WHERE merchant_account_id = $1 AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) p
		ORDER BY p.id`
	scan := func(r rowScanner) (remit.ProcessorPaymentFacts, error) {
		var f remit.ProcessorPaymentFacts
		var ref, reference, cReference, cStatus, cCurrency sql.NullString
		var cAmount, cFee sql.NullInt64
		err := r.Scan(&f.PaymentID, &f.Status, &f.Method, &f.Processor, &f.Currency, &f.Amount, &f.Fee, &ref, &reference,
			&cReference, &cStatus, &cCurrency, &cAmount, &cFee)
		f.IdempotencyRef, f.ProcessorReference = textPtr(ref), textPtr(reference)
		if cReference.Valid {
			f.Charge = &remit.ProcessorChargeFacts{IdempotencyRef: f.PaymentID, Reference: cReference.String, Status: cStatus.String,
				Currency: cCurrency.String, Amount: cAmount.Int64, Fee: cFee.Int64}
		}
		return f, err
	}
	id := func(f remit.ProcessorPaymentFacts) string { return f.PaymentID }
	return pagesByID(ctx, q, "store.ProcessorPaymentFacts", query, account, scan, id, fn)
}

// UnclaimedCharges calls fn with every succeeded sandbox charge whose idempotency reference is the
// ID of no payment of any merchant account (the sandbox processor's records name no account).
func (q Q) UnclaimedCharges(ctx context.Context, fn func(remit.ProcessorChargeFacts) error) error {
	query := `SELECT ` + chargeColumns + ` FROM sandbox_charges sc WHERE sc.idempotency_ref > $1 AND sc.status = 'succeeded'
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id = sc.idempotency_ref)
		ORDER BY sc.idempotency_ref LIMIT ` + itoa(verifyPage)
	scan := func(r rowScanner) (remit.ProcessorChargeFacts, error) {
		var c remit.ProcessorChargeFacts
		return c, r.Scan(&c.IdempotencyRef, &c.Reference, &c.Status, &c.Currency, &c.Amount, &c.Fee)
	}
	key := func(c remit.ProcessorChargeFacts) []any { return []any{c.IdempotencyRef} }
	return pages(ctx, q, "store.UnclaimedCharges", query, nil, []any{""}, scan, key, fn)
}

// ProcessorRefundFacts calls fn with every refund of the merchant account through the sandbox
// processor, by ID, with the processor's record of it (idempotency reference: the refund's ID).
func (q Q) ProcessorRefundFacts(ctx context.Context, account string, fn func(remit.ProcessorRefundFacts) error) error {
	record := func(col string) string { return lookup(`sr.`+col, `sandbox_refunds sr`, `sr.idempotency_ref = r.id`) }
	query := `SELECT r.id, r.status, r.currency, r.amount, COALESCE(r.charge_reference, ''), ` + record(`amount`) + `,
		` + record(`currency`) + `, ` + record(`charge_reference`) + `
		FROM (SELECT id, status, currency, amount, charge_reference FROM refunds WHERE merchant_account_id = $1
			AND processor = 'sandbox' AND id > $2 ORDER BY id LIMIT ` + itoa(verifyPage) + `) r
		ORDER BY r.id`
	scan := func(r rowScanner) (remit.ProcessorRefundFacts, error) {
		var f remit.ProcessorRefundFacts
		var currency, charge sql.NullString
		var amount sql.NullInt64
		err := r.Scan(&f.RefundID, &f.Status, &f.Currency, &f.Amount, &f.ChargeReference, &amount, &currency, &charge)
		f.Recorded, f.RecordedAmount, f.RecordedCurrency, f.RecordedChargeReference = amount.Valid, amount.Int64, currency.String, charge.String
		return f, err
	}
	id := func(f remit.ProcessorRefundFacts) string { return f.RefundID }
	return pagesByID(ctx, q, "store.ProcessorRefundFacts", query, account, scan, id, fn)
}
