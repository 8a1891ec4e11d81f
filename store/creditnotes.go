package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/remit-billing/remit"
)

// InsertCreditNote stores an issued credit note. A duplicate caller-chosen ID is a conflict.
func (q Q) InsertCreditNote(ctx context.Context, c remit.CreditNote) error {
	_, err := q.exec(ctx, `INSERT INTO credit_notes (merchant_account_id, id, number, invoice_id, customer_id, currency, reason,
		description, lines, credit_amount, refund_amount, offset_amount, total, tax_total, tax_transaction_id, balance_entry_id,
		refund_ids, metadata, created_at, usage_event_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
		$17, $18, $19, $20)`,
		c.MerchantAccountID, c.CreditNoteID, c.Number, c.InvoiceID, c.CustomerID, c.Currency, c.Reason, optText(c.Description),
		mustJSON(c.Lines), c.CreditAmount, c.RefundAmount, c.OffsetAmount, c.Total, c.TaxTotal, optText(c.TaxTransactionID),
		optText(c.BalanceEntryID), jsonList(c.RefundIDs), metadataText(c.Metadata), remit.Micros(c.CreatedAt), optText(c.UsageEventID))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.InsertCreditNote")
}

// CreditNoteExists reports whether the caller-chosen ID is taken.
func (q Q) CreditNoteExists(ctx context.Context, merchantAccountID, id string) (bool, error) {
	return q.exists(ctx, "store.CreditNoteExists", `SELECT 1 FROM credit_notes WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, id)
}

const creditNoteColumns = `id, number, invoice_id, customer_id, currency, reason, description, lines, credit_amount,
	refund_amount, offset_amount, total, tax_total, tax_transaction_id, balance_entry_id, refund_ids, metadata, created_at, usage_event_id`

// creditNoteTable is the credit_notes table's reads.
var creditNoteTable = accountTable[remit.CreditNote]{from: "credit_notes", columns: creditNoteColumns, kind: "credit note", scan: scanCreditNote}

func scanCreditNote(row interface{ Scan(...any) error }, merchantAccountID string) (c remit.CreditNote, err error) {
	var desc, taxTxn, entry, usageEvent sql.NullString
	var lines, refunds, md string
	var created int64
	err = row.Scan(&c.CreditNoteID, &c.Number, &c.InvoiceID, &c.CustomerID, &c.Currency, &c.Reason, &desc, &lines, &c.CreditAmount,
		&c.RefundAmount, &c.OffsetAmount, &c.Total, &c.TaxTotal, &taxTxn, &entry, &refunds, &md, &created, &usageEvent)
	if err != nil {
		return c, err
	}
	c.Object, c.Status, c.MerchantAccountID, c.CreatedAt = "credit_note", "issued", merchantAccountID, remit.FromMicros(created)
	c.Description, c.TaxTransactionID, c.BalanceEntryID, c.UsageEventID = textPtr(desc), textPtr(taxTxn), textPtr(entry), textPtr(usageEvent)
	err = errors.Join(json.Unmarshal([]byte(lines), &c.Lines), json.Unmarshal([]byte(refunds), &c.RefundIDs),
		json.Unmarshal([]byte(md), &c.Metadata))
	return c, err
}

// GetCreditNote returns a credit note or not_found.
func (q Q) GetCreditNote(ctx context.Context, merchantAccountID, id string) (remit.CreditNote, error) {
	return creditNoteTable.get(ctx, q, "store.GetCreditNote", merchantAccountID, id, Unlocked)
}

// CreditNoteFilter narrows a list of credit notes: equal filters, empty ones left out.
type CreditNoteFilter struct {
	InvoiceID, CustomerID string
	ListPage
}

// ListCreditNotes lists a merchant account's credit notes newest first, over credit_notes_list,
// credit_notes_invoice_list or credit_notes_customer_list.
func (q Q) ListCreditNotes(ctx context.Context, merchantAccountID string, f CreditNoteFilter) ([]remit.CreditNote, error) {
	return creditNoteTable.list(ctx, q, "store.ListCreditNotes", merchantAccountID, f.ListPage,
		Eq{"invoice_id", f.InvoiceID}, Eq{"customer_id", f.CustomerID})
}

// ListInvoiceCreditNotes returns an invoice's credit notes in the order they were issued.
func (q Q) ListInvoiceCreditNotes(ctx context.Context, merchantAccountID, invoiceID string) ([]remit.CreditNote, error) {
	return creditNoteTable.all(ctx, q, "store.ListInvoiceCreditNotes", merchantAccountID,
		creditNoteTable.selectAll()+` AND invoice_id = $2 ORDER BY created_at, number`, merchantAccountID, invoiceID)
}

// InsertRefund records a refund.
func (q Q) InsertRefund(ctx context.Context, r remit.Refund) error {
	_, err := q.exec(ctx, `INSERT INTO refunds (merchant_account_id, id, payment_id, invoice_id, credit_note_id, amount, currency,
		status, processor_reference, created_at, processor, charge_reference, updated_at, reconcile_after)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		r.MerchantAccountID, r.RefundID, r.PaymentID, r.InvoiceID, r.CreditNoteID, r.Amount, r.Currency, r.Status,
		optText(r.ProcessorReference), remit.Micros(r.CreatedAt), optText(r.Processor), nullIfEmpty(r.ChargeReference),
		remit.Micros(r.UpdatedAt), optMicros(r.ReconcileAfter))
	return wrapErr(err, "store.InsertRefund")
}

const refundColumns = `merchant_account_id, id, payment_id, invoice_id, credit_note_id, amount, currency, status, processor,
	processor_reference, failure_code, failure_message, charge_reference, created_at, updated_at`

// refundTable is the refunds table's reads.
var refundTable = accountTable[remit.Refund]{from: "refunds", columns: refundColumns, kind: "refund", scan: scanning(scanRefund)}

func scanRefund(row interface{ Scan(...any) error }) (remit.Refund, error) {
	r := remit.Refund{Object: "refund"}
	var proc, ref, code, msg, charge sql.NullString
	var created, updated int64
	err := row.Scan(&r.MerchantAccountID, &r.RefundID, &r.PaymentID, &r.InvoiceID, &r.CreditNoteID, &r.Amount, &r.Currency, &r.Status,
		&proc, &ref, &code, &msg, &charge, &created, &updated)
	r.Processor, r.ProcessorReference, r.FailureCode, r.FailureMessage = textPtr(proc), textPtr(ref), textPtr(code), textPtr(msg)
	r.ChargeReference, r.CreatedAt, r.UpdatedAt = charge.String, remit.FromMicros(created), remit.FromMicros(updated)
	return r, err
}

// GetRefund returns a refund of the merchant account, or not_found; Locked takes its row lock.
func (q Q) GetRefund(ctx context.Context, merchantAccountID, refundID string, read Read) (remit.Refund, error) {
	return refundTable.get(ctx, q, "store.GetRefund", merchantAccountID, refundID, read)
}

// SettleRefund records a pending refund's outcome: its status, the processor's reference and the
// failure. It reports false when the refund was no longer pending.
func (q Q) SettleRefund(ctx context.Context, r remit.Refund) (bool, error) {
	n, err := q.exec(ctx, `UPDATE refunds SET status = $3, processor_reference = $4, failure_code = $5, failure_message = $6,
		updated_at = $7, reconcile_after = NULL WHERE merchant_account_id = $1 AND id = $2 AND status = 'pending'`,
		r.MerchantAccountID, r.RefundID, r.Status, optText(r.ProcessorReference), optText(r.FailureCode), optText(r.FailureMessage),
		remit.Micros(r.UpdatedAt))
	return n == 1, wrapErr(err, "store.SettleRefund")
}

// ClaimPendingRefunds returns up to limit refunds left pending whose reconcile_after (real time)
// is before now, and moves their reconcile_after to lease, so that one process sends each (SKIP
// LOCKED on PostgreSQL; SQLite has one writer).
func (q Q) ClaimPendingRefunds(ctx context.Context, now, lease time.Time, limit int) ([]remit.Refund, error) {
	query := `SELECT ` + refundColumns + ` FROM refunds WHERE status = 'pending' AND reconcile_after < $1 ORDER BY reconcile_after LIMIT $2`
	if q.d == Postgres {
		query += ` FOR UPDATE SKIP LOCKED`
	}
	out, err := queryAll(ctx, q, "store.ClaimPendingRefunds", scanRefund, nil, query, remit.Micros(now), limit)
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		if _, err := q.exec(ctx, `UPDATE refunds SET reconcile_after = $3 WHERE merchant_account_id = $1 AND id = $2`,
			r.MerchantAccountID, r.RefundID, remit.Micros(lease)); err != nil {
			return nil, wrapErr(err, "store.ClaimPendingRefunds")
		}
	}
	return out, nil
}
