package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"reflect"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/remit-billing/remit"
)

// An invoice's lines are kept twice, in the same transaction: as rows of invoice_lines (which the
// MRR chart, usage corrections and `remit verify` query line by line) and as one JSON document in
// the invoice's own row, invoices.lines_doc, so that reading an invoice with its lines
// (GetInvoice: every GET /v1/invoices/{id}, and every change to an invoice, which reads it first)
// is one row of one query instead of the invoice's row and then a range of invoice_lines. Lines
// change far less often than they are read; the doc is rewritten by every store function that
// writes invoice_lines, so it never says something the table does not.
//
// lines_doc NULL means the doc is not kept (a row written before migration 28 and not yet filled,
// or written by something that bypasses these functions, such as a bulk load): GetInvoice then
// reads the lines from invoice_lines as before, and FillInvoiceLinesDocs fills it.

// lineRow is one invoice line as the store keeps it: the columns of its invoice_lines row, and
// one element of its invoice's lines_doc. Both are written from a lineRow (lineRowOf) and read back
// by the same conversion (lineRow.line), so a line read from the doc is the line the table gives:
// times are the columns' Unix microseconds, and a nil slice (NULL column) stays apart from an empty
// one (omitzero omits nil, not empty).
type lineRow struct {
	ID               string                  `json:"id"`
	LineType         string                  `json:"line_type"`
	PriceID          string                  `json:"price_id"`
	PriceType        string                  `json:"price_type"`
	MeterID          *string                 `json:"meter_id,omitzero"`
	Description      string                  `json:"description"`
	Quantity         int64                   `json:"quantity"`
	UnitAmount       int64                   `json:"unit_amount"`
	UnitOverride     bool                    `json:"unit_override,omitzero"`
	Amount           int64                   `json:"amount"`
	DiscountAmount   int64                   `json:"discount_amount,omitzero"`
	PrepaidApplied   int64                   `json:"prepaid_applied,omitzero"`
	TaxAmount        int64                   `json:"tax_amount,omitzero"`
	CreditedAmount   int64                   `json:"credited_amount,omitzero"`
	Taxes            []remit.LineTax         `json:"taxes"` // never nil: the column's '[]'
	PeriodStart      *int64                  `json:"period_start,omitzero"`
	PeriodEnd        *int64                  `json:"period_end,omitzero"`
	CreditedTax      int64                   `json:"credited_tax,omitzero"`
	TierBreakdown    []remit.TierBreakdown   `json:"tier_breakdown,omitzero"`
	UsageQuantity    *int64                  `json:"usage_quantity,omitzero"`
	UsageCorrections []remit.UsageCorrection `json:"usage_corrections,omitzero"`
	UsageSeq         *int64                  `json:"usage_seq,omitzero"`
}

// lineRowsOf is the stored form of lines.
func lineRowsOf(lines []remit.InvoiceLine) []lineRow {
	rows := make([]lineRow, len(lines))
	for i, l := range lines {
		taxes := l.Taxes
		if taxes == nil {
			taxes = []remit.LineTax{}
		}
		rows[i] = lineRow{ID: l.InvoiceLineID, LineType: l.LineType, PriceID: l.PriceID, PriceType: l.PriceType,
			MeterID: l.MeterID, Description: l.Description, Quantity: l.Quantity, UnitAmount: l.UnitAmount,
			UnitOverride: l.UnitOverride, Amount: l.Amount, DiscountAmount: l.DiscountAmount, PrepaidApplied: l.PrepaidApplied,
			TaxAmount: l.TaxAmount, CreditedAmount: l.CreditedAmount, Taxes: taxes, PeriodStart: microsPtr(l.PeriodStart),
			PeriodEnd: microsPtr(l.PeriodEnd), CreditedTax: l.CreditedTax, TierBreakdown: l.TierBreakdown,
			UsageQuantity: l.UsageQuantity, UsageCorrections: l.UsageCorrections, UsageSeq: l.UsageSeq}
	}
	return rows
}

// line is the invoice line r stores.
func (r lineRow) line() remit.InvoiceLine {
	return remit.InvoiceLine{Object: "invoice_line", InvoiceLineID: r.ID, LineType: r.LineType, PriceID: r.PriceID,
		PriceType: r.PriceType, MeterID: r.MeterID, Description: r.Description, Quantity: r.Quantity, UnitAmount: r.UnitAmount,
		UnitOverride: r.UnitOverride, Amount: r.Amount, DiscountAmount: r.DiscountAmount, PrepaidApplied: r.PrepaidApplied,
		TaxAmount: r.TaxAmount, CreditedAmount: r.CreditedAmount, CreditedTax: r.CreditedTax, Taxes: r.Taxes,
		PeriodStart: microsTime(r.PeriodStart), PeriodEnd: microsTime(r.PeriodEnd), TierBreakdown: r.TierBreakdown,
		UsageCorrections: r.UsageCorrections, UsageQuantity: r.UsageQuantity, UsageSeq: r.UsageSeq}
}

func microsPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	m := remit.Micros(*t)
	return &m
}

func microsTime(m *int64) *time.Time {
	if m == nil {
		return nil
	}
	t := remit.FromMicros(*m)
	return &t
}

// linesDoc is the lines_doc of an invoice whose lines are rows, in order: the one place the doc is
// built.
func linesDoc(rows []lineRow) string {
	return jsonList(rows) // "[]" when there are none: kept, and empty (NULL is "not kept")
}

// linesOfDoc reads the lines back from a lines_doc.
func linesOfDoc(doc string) ([]remit.InvoiceLine, error) {
	var rows []lineRow
	if err := json.Unmarshal([]byte(doc), &rows); err != nil {
		return nil, err
	}
	return linesOf(rows), nil
}

// linesOf is the lines rows store (nil for none, from the doc as from the table).
func linesOf(rows []lineRow) []remit.InvoiceLine {
	var lines []remit.InvoiceLine
	for _, r := range rows {
		lines = append(lines, r.line())
	}
	return lines
}

// insertInvoiceLines writes an invoice's lines to invoice_lines, in order. The caller writes the
// same rows' lines_doc in the same transaction.
func (q Q) insertInvoiceLines(ctx context.Context, merchantAccountID, invoiceID string, rows []lineRow) error {
	for i, r := range rows {
		_, err := q.exec(ctx, `INSERT INTO invoice_lines (merchant_account_id, invoice_id, id, position, line_type, price_id,
			price_type, meter_id, description, quantity, unit_amount, unit_override, amount, discount_amount, prepaid_applied,
			tax_amount, credited_amount, taxes, period_start, period_end, credited_tax, tier_breakdown, usage_quantity, usage_corrections,
			usage_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)`,
			merchantAccountID, invoiceID, r.ID, i, r.LineType, r.PriceID, r.PriceType, optText(r.MeterID),
			r.Description, r.Quantity, r.UnitAmount, r.UnitOverride, r.Amount, r.DiscountAmount, r.PrepaidApplied, r.TaxAmount,
			r.CreditedAmount, mustJSON(r.Taxes), optInt(r.PeriodStart), optInt(r.PeriodEnd), r.CreditedTax,
			optJSON(r.TierBreakdown != nil, r.TierBreakdown), optInt(r.UsageQuantity), optJSON(r.UsageCorrections != nil, r.UsageCorrections),
			optInt(r.UsageSeq))
		if err != nil {
			return wrapErr(err, "store.InsertInvoice: line")
		}
	}
	return nil
}

// tableLineRows reads an invoice's lines from invoice_lines, in order: GetInvoice's fallback for
// an invoice whose doc is not kept, and the source of the doc after a change to one line.
func (q Q) tableLineRows(ctx context.Context, merchantAccountID, invoiceID string) ([]lineRow, error) {
	return queryAll(ctx, q, "store.tableLineRows", scanLineRow, nil, `SELECT id, line_type, price_id, price_type, meter_id, description, quantity, unit_amount,
		unit_override, amount, discount_amount, prepaid_applied, tax_amount, credited_amount, taxes, period_start, period_end,
		credited_tax, tier_breakdown, usage_quantity, usage_corrections, usage_seq FROM invoice_lines WHERE merchant_account_id = $1 AND invoice_id = $2
		ORDER BY position`, merchantAccountID, invoiceID)
}

// scanLineRow scans a row of invoice_lines as tableLineRows reads it.
func scanLineRow(row scanner) (r lineRow, err error) {
	var meter, tiers, corrections sql.NullString
	var taxes string
	var ps, pe, usage, seq sql.NullInt64
	if err := row.Scan(&r.ID, &r.LineType, &r.PriceID, &r.PriceType, &meter, &r.Description, &r.Quantity,
		&r.UnitAmount, &r.UnitOverride, &r.Amount, &r.DiscountAmount, &r.PrepaidApplied, &r.TaxAmount, &r.CreditedAmount,
		&taxes, &ps, &pe, &r.CreditedTax, &tiers, &usage, &corrections, &seq); err != nil {
		return r, err
	}
	r.MeterID, r.PeriodStart, r.PeriodEnd = textPtr(meter), intPtr(ps), intPtr(pe)
	r.UsageQuantity, r.UsageSeq = intPtr(usage), intPtr(seq)
	if err := json.Unmarshal([]byte(taxes), &r.Taxes); err != nil {
		return r, err
	}
	if err := unmarshalIf(tiers, &r.TierBreakdown); err != nil {
		return r, err
	}
	return r, unmarshalIf(corrections, &r.UsageCorrections)
}

// rewriteLinesDoc sets an invoice's lines_doc from its invoice_lines rows: after a change to one
// line, the doc is what the table now says.
func (q Q) rewriteLinesDoc(ctx context.Context, merchantAccountID, invoiceID string) error {
	rows, err := q.tableLineRows(ctx, merchantAccountID, invoiceID)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `UPDATE invoices SET lines_doc = $3 WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, invoiceID, linesDoc(rows))
	return err
}

// InvoiceLinesFacts calls fn with every invoice of the merchant account whose lines document is
// kept, by ID, with whether the document says what its invoice_lines rows say (compared as lines,
// not as text). Verification reads it (the invoice_lines check): a document left behind by a
// writer that bypassed these functions would otherwise be answered by every invoice read.
func (q Q) InvoiceLinesFacts(ctx context.Context, account string, fn func(remit.InvoiceLinesFacts) error) (err error) {
	defer wrap(&err, "store.InvoiceLinesFacts")
	type kept struct{ id, doc string }
	after := ""
	for {
		page, err := queryAll(ctx, q, "page", func(row interface{ Scan(...any) error }) (k kept, err error) {
			return k, row.Scan(&k.id, &k.doc)
		}, nil, `SELECT id, lines_doc FROM invoices WHERE merchant_account_id = $1 AND id > $2 AND lines_doc IS NOT NULL
			ORDER BY id LIMIT $3`, account, after, verifyPage)
		if err != nil {
			return err
		}
		for _, k := range page {
			rows, err := q.tableLineRows(ctx, account, k.id)
			if err != nil {
				return err
			}
			fromDoc, docErr := linesOfDoc(k.doc) // a document that does not parse does not agree
			agree := docErr == nil && reflect.DeepEqual(fromDoc, linesOf(rows))
			if err := fn(remit.InvoiceLinesFacts{InvoiceID: k.id, Agree: agree}); err != nil {
				return err
			}
		}
		if len(page) < verifyPage {
			return nil
		}
		after = page[len(page)-1].id
	}
}

// fillPage is how many invoices FillInvoiceLinesDocs reads at a time.
const fillPage = 500

// FillInvoiceLinesDocs keeps the lines_doc of every invoice whose doc is not kept (NULL), from its
// invoice_lines rows, and returns how many it filled. Migration 28 runs it on the invoices written
// before it; a bulk load that writes invoice_lines directly (remit-load's seed) runs it after.
// It reads a page of invoices at a time, so memory stays flat on a store of any size.
func (q Q) FillInvoiceLinesDocs(ctx context.Context) (n int, err error) {
	defer wrap(&err, "store.FillInvoiceLinesDocs")
	type key struct{ merchant, id string }
	var after key
	for {
		page, err := queryAll(ctx, q, "page", func(row interface{ Scan(...any) error }) (k key, err error) {
			return k, row.Scan(&k.merchant, &k.id)
		}, nil, `SELECT merchant_account_id, id FROM invoices WHERE (merchant_account_id, id) > ($1, $2) AND lines_doc IS NULL
			ORDER BY merchant_account_id, id LIMIT $3`, after.merchant, after.id, fillPage)
		if err != nil {
			return n, err
		}
		for _, k := range page {
			if err := q.rewriteLinesDoc(ctx, k.merchant, k.id); err != nil {
				return n, err
			}
		}
		n += len(page)
		if len(page) < fillPage {
			return n, nil
		}
		after = page[len(page)-1]
	}
}

// linesDocMigration (version 28) adds invoices.lines_doc (NULL: not kept) and fills it for the
// invoices already stored. The column is the same in both dialects; the fill is Go because the doc
// is built by linesDoc, not by either dialect's JSON functions.
func linesDocMigration(d Dialect) *goose.Migration {
	up := func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE invoices ADD COLUMN lines_doc TEXT`); err != nil {
			return err
		}
		_, err := Q{q: tx, d: d}.FillInvoiceLinesDocs(ctx)
		return err
	}
	down := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `ALTER TABLE invoices DROP COLUMN lines_doc`)
		return err
	}
	return goose.NewGoMigration(28, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}
