package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// MigrateTo brings the schema up to version only (for tests of a migration over older data).
func (db *DB) MigrateTo(ctx context.Context, version int64) error {
	p, err := db.migrations(ctx)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// InvoiceLinesBothWays reads an invoice's lines from its lines_doc and from its invoice_lines rows
// (for tests that the two say the same). kept is false when the doc is not kept (NULL).
func (q Q) InvoiceLinesBothWays(ctx context.Context, merchantAccountID, invoiceID string) (fromDoc, fromTable []remit.InvoiceLine, kept bool, err error) {
	var doc sql.NullString
	if err := q.QueryRow(ctx, `SELECT lines_doc FROM invoices WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, invoiceID).Scan(&doc); err != nil {
		return nil, nil, false, err
	}
	if doc.Valid {
		if fromDoc, err = linesOfDoc(doc.String); err != nil {
			return nil, nil, false, err
		}
	}
	rows, err := q.tableLineRows(ctx, merchantAccountID, invoiceID)
	return fromDoc, linesOf(rows), doc.Valid, err
}

// AuthListenerSays stands in for the PostgreSQL auth listener (which is never started after
// this): it holds version as just confirmed when confirmed is true, and nothing otherwise.
func (db *DB) AuthListenerSays(version int64, confirmed bool) {
	db.auth.start.Do(func() {})
	db.auth.version.Store(version)
	db.auth.confirmed.Store(0)
	if confirmed {
		db.auth.confirmed.Store(time.Now().UnixNano())
	}
}
