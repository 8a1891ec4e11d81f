package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// The prepaid balance ledger. Entries are only ever inserted; the one column that changes is a
// lot's remaining, and only through TakeFromLot, whose guard (and the table's CHECK) keeps it from
// going below zero.

const entryColumns = `id, customer_id, seq, type, currency, amount, remaining, source_entry_id, invoice_id, credit_note_id,
	targets, description, effective_at, expires_at, metadata, created_at, priority, category`

// entryTable is the balance_entries table's reads.
var entryTable = accountTable[remit.BalanceEntry]{from: "balance_entries", columns: entryColumns, kind: "balance entry", scan: scanEntry}

func scanEntry(row interface{ Scan(...any) error }, merchantAccountID string) (e remit.BalanceEntry, err error) {
	var remaining, expires sql.NullInt64
	var source, invoice, creditNote, targets, desc sql.NullString
	var md string
	var effective, created int64
	err = row.Scan(&e.EntryID, &e.CustomerID, &e.Seq, &e.Type, &e.Currency, &e.Amount, &remaining, &source, &invoice, &creditNote,
		&targets, &desc, &effective, &expires, &md, &created, &e.Priority, &e.Category)
	if err != nil {
		return e, err
	}
	e.Object, e.MerchantAccountID = "balance_entry", merchantAccountID
	e.Remaining, e.SourceEntryID, e.InvoiceID, e.CreditNoteID = intPtr(remaining), textPtr(source), textPtr(invoice), textPtr(creditNote)
	e.Targets, e.Description = jsonOf[remit.BalanceTargets](targets), textPtr(desc)
	e.EffectiveAt, e.ExpiresAt = remit.FromMicros(effective), timePtr(expires)
	e.Metadata, e.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return e, nil
}

// InsertBalanceEntry appends an entry. An entryId already used for the customer is a conflict; a
// customer that does not exist is not_found (the table's foreign key checks it, so a caller need
// not read the customer first).
func (q Q) InsertBalanceEntry(ctx context.Context, e remit.BalanceEntry) error {
	_, err := q.exec(ctx, `INSERT INTO balance_entries (merchant_account_id, customer_id, id, seq, type, currency, amount, remaining,
		source_entry_id, invoice_id, credit_note_id, targets, description, effective_at, expires_at, metadata, created_at, priority, category)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		e.MerchantAccountID, e.CustomerID, e.EntryID, e.Seq, e.Type, e.Currency, e.Amount, optInt(e.Remaining),
		optText(e.SourceEntryID), optText(e.InvoiceID), optText(e.CreditNoteID), jsonText(e.Targets), optText(e.Description),
		remit.Micros(e.EffectiveAt), optMicros(e.ExpiresAt), metadataText(e.Metadata), remit.Micros(e.CreatedAt), e.Priority, e.Category)
	switch {
	case IsUniqueViolation(err):
		return duplicate("id")
	case isForeignKeyViolation(err):
		return remit.NotFound("customer", e.CustomerID, "")
	}
	return wrapErr(err, "store.InsertBalanceEntry")
}

// GetBalanceEntry returns one entry of a customer, or not_found. Locked it takes the row lock (PostgreSQL): a rule about a lot's remaining must
// lock the lot before reading it.
func (q Q) GetBalanceEntry(ctx context.Context, merchantAccountID, customerID, entryID string, read Read) (remit.BalanceEntry, error) {
	query := entryTable.selectAll() + ` AND customer_id = $2 AND id = $3` + q.lockFor(read)
	e, err := scanEntry(q.QueryRow(ctx, query, merchantAccountID, customerID, entryID), merchantAccountID)
	return e, notFoundOr(err, "balance entry", entryID, "store.GetBalanceEntry")
}

// ListBalanceEntries returns every entry of a customer, newest first (creation time, then append
// order).
func (q Q) ListBalanceEntries(ctx context.Context, merchantAccountID, customerID string) ([]remit.BalanceEntry, error) {
	return q.PageBalanceEntries(ctx, merchantAccountID, customerID, "", ListPage{})
}

// PageBalanceEntries returns a page of a customer's entries (every entry when p.Limit is 0), in
// currency when it is not "", newest first by creation time then append order (seq): the keyset
// position of p is (created_at, seq). Each page reads one range of balance_entries_order, or with
// a currency of balance_entries_currency.
func (q Q) PageBalanceEntries(ctx context.Context, merchantAccountID, customerID, currency string, p ListPage) ([]remit.BalanceEntry, error) {
	p.Tie = "seq"
	query, args := pageQuery(entryTable.selectAll()+` AND customer_id = $2`, []any{merchantAccountID, customerID}, p, Eq{"currency", currency})
	return q.queryEntries(ctx, "store.PageBalanceEntries", query, merchantAccountID, args...)
}

// queryEntries runs a query of entryColumns and scans its rows ([] when there are none).
func (q Q) queryEntries(ctx context.Context, op, query, merchantAccountID string, args ...any) ([]remit.BalanceEntry, error) {
	out, err := entryTable.all(ctx, q, op, merchantAccountID, query, args...)
	if err == nil && out == nil {
		out = []remit.BalanceEntry{}
	}
	return out, err
}

// LockSpendableLots locks and returns a customer's lots in currency that have something left and
// are available at `at` (effective, not expired), in spending order (remit.SpendingOrder): lowest
// priority first, then earliest expiresAt (lots that never expire last), then earliest effective,
// then append order. Rows are locked in that
// order, so concurrent callers never deadlock on them.
func (q Q) LockSpendableLots(ctx context.Context, merchantAccountID, customerID, currency string, at time.Time) ([]remit.BalanceEntry, error) {
	return entryTable.all(ctx, q, "store.LockSpendableLots", merchantAccountID, entryTable.selectAll()+`
		  AND customer_id = $2 AND currency = $3 AND remaining > 0
		  AND effective_at <= $4 AND (expires_at IS NULL OR expires_at > $4)
		ORDER BY priority, CASE WHEN expires_at IS NULL THEN 1 ELSE 0 END, expires_at, effective_at, seq`+q.ForUpdate(),
		merchantAccountID, customerID, currency, remit.Micros(at))
}

// TakeFromLot lowers a lot's remaining by amount if at least amount remains, and reports whether
// it did. Call it with the lot's row locked (GetBalanceEntry, Locked).
func (q Q) TakeFromLot(ctx context.Context, merchantAccountID, customerID, lotID string, amount int64) (bool, error) {
	n, err := q.exec(ctx, `UPDATE balance_entries SET remaining = remaining - $4
		WHERE merchant_account_id = $1 AND customer_id = $2 AND id = $3 AND remaining >= $4`,
		merchantAccountID, customerID, lotID, amount)
	return n == 1, wrapErr(err, "store.TakeFromLot")
}
