package store

import (
	"context"
)

// accountTable is a table of merchant accounts' rows, said once for its reads: where the rows are
// (from: the table, with an alias if its queries use one), which columns a read selects, how a row
// of them becomes an item of a merchant account (scan), and what a missing row is
// (remit.NotFound of kind). get reads one row by ID and list a page of rows (list.go), both in
// the one query every such read of the package makes.
type accountTable[T any] struct {
	from, columns, kind string
	scan                func(row scanner, merchantAccountID string) (T, error)
}

// owning makes a scan that leaves the item's merchant account unset a scan of an accountTable:
// field names where the item keeps its merchant account, which the scan sets.
func owning[T any](scan func(scanner) (T, error), field func(*T) *string) func(scanner, string) (T, error) {
	return func(row scanner, merchantAccountID string) (T, error) {
		v, err := scan(row)
		*field(&v) = merchantAccountID
		return v, err
	}
}

// scanning makes a scan that reads the merchant account from the row itself a scan of an
// accountTable.
func scanning[T any](scan func(scanner) (T, error)) func(scanner, string) (T, error) {
	return func(row scanner, _ string) (T, error) { return scan(row) }
}

// selectAll is the query of every row of the merchant account ($1) in t, to which the caller
// appends more conditions ("AND ...").
func (t accountTable[T]) selectAll() string {
	return `SELECT ` + t.columns + ` FROM ` + t.from + ` WHERE merchant_account_id = $1`
}

// get reads the merchant account's row of t with that ID, its lock taken as read asks; no row is
// remit.NotFound of t's kind and the ID. op names the caller in errors.
func (t accountTable[T]) get(ctx context.Context, q Q, op, merchantAccountID, id string, read Read) (T, error) {
	return t.getWhere(ctx, q, op, merchantAccountID, `id = $2`, id, read)
}

// getWhere is get of the row that cond names instead of its ID: a condition of key, $2 (a
// payment's receipt: payment_id = $2), with any more of the row's conditions.
func (t accountTable[T]) getWhere(ctx context.Context, q Q, op, merchantAccountID, cond, key string, read Read) (T, error) {
	row := q.QueryRow(ctx, t.selectAll()+` AND `+cond+q.lockFor(read), merchantAccountID, key)
	v, err := t.scan(row, merchantAccountID)
	return v, notFoundOr(err, t.kind, key, op)
}

// list reads a page of the merchant account's rows of t (pageQuery), with the equal filters.
func (t accountTable[T]) list(ctx context.Context, q Q, op, merchantAccountID string, p ListPage, filters ...Eq) ([]T, error) {
	return t.listFrom(ctx, q, op, merchantAccountID, t.selectAll(), []any{merchantAccountID}, p, filters...)
}

// listFrom is list over base, t.selectAll() with more conditions, and its args (the merchant
// account first).
func (t accountTable[T]) listFrom(ctx context.Context, q Q, op, merchantAccountID, base string, args []any, p ListPage, filters ...Eq) ([]T, error) {
	query, args := pageQuery(base, args, p, filters...)
	return t.all(ctx, q, op, merchantAccountID, query, args...)
}

// all runs a query of t's columns (a read or a RETURNING) and scans every row it returns as an
// item of the merchant account (queryAll).
func (t accountTable[T]) all(ctx context.Context, q Q, op, merchantAccountID, query string, args ...any) ([]T, error) {
	return queryAll(ctx, q, op, t.scanOf(merchantAccountID), nil, query, args...)
}

// scanOf is t's scan of a row of the merchant account.
func (t accountTable[T]) scanOf(merchantAccountID string) func(scanner) (T, error) {
	return func(row scanner) (T, error) { return t.scan(row, merchantAccountID) }
}

// byIDs reads the merchant account's rows of t among ids in one query (eachAmong), by key, each
// item's ID. IDs that name no row are absent from the map; on an error the map is nil.
func (t accountTable[T]) byIDs(ctx context.Context, q Q, op, merchantAccountID string, ids []string, key func(T) string) (map[string]T, error) {
	out := make(map[string]T, len(ids))
	err := eachAmong(ctx, q, op, merchantAccountID, ids, func(in string) string { return t.selectAll() + ` AND id IN (` + in + `)` },
		t.scanOf(merchantAccountID), func(v T) { out[key(v)] = v })
	if err != nil {
		return nil, err
	}
	return out, nil
}
