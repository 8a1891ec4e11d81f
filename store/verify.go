package store

import (
	"context"
	"database/sql"

	"github.com/remit-billing/remit"
)

// Reads for verification (docs/verification.md): one consistent snapshot, read in pages so memory
// stays flat on a store of any size. Nothing here writes.

// Snapshot runs fn in a read-only transaction: every read fn makes sees the store as of one
// moment, however many writes commit meanwhile (SQLite: a read transaction on a WAL snapshot;
// PostgreSQL: REPEATABLE READ, READ ONLY).
func (db *DB) Snapshot(ctx context.Context, fn func(ctx context.Context, q Q) error) (err error) {
	defer wrap(&err, "store.Snapshot")
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil // the read pool's connections are query_only already
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(ctx, Q{q: tx, d: db.dialect})
}

// VerifyLock takes the store-wide lock of the periodic verification for the rest of the snapshot
// q (PostgreSQL: a transaction-level advisory lock) and reports whether it got it; another process
// holding it is running the same checks. SQLite has one process: always true.
func (q Q) VerifyLock(ctx context.Context) (bool, error) {
	if q.d != Postgres {
		return true, nil
	}
	var ok bool
	err := q.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended('remit_verify', 0))`).Scan(&ok)
	return ok, wrapErr(err, "store.VerifyLock")
}

// VerifiedAccounts returns the IDs of the merchant accounts, or only id when it is not "", in ID
// order, with their environment.
func (q Q) VerifiedAccounts(ctx context.Context, id string) ([]remit.Scope, error) {
	query, args := `SELECT id, environment FROM merchant_accounts`, []any{}
	if id != "" {
		query, args = query+` WHERE id = $1`, append(args, id)
	}
	return queryAll(ctx, q, "store.VerifiedAccounts", func(r interface{ Scan(...any) error }) (remit.Scope, error) {
		var s remit.Scope
		var env string
		err := r.Scan(&s.MerchantAccountID, &env)
		s.Environment = remit.Environment(env)
		return s, err
	}, nil, query+` ORDER BY id`, args...)
}

const verifyPage = 2000

// ChainEvents calls fn with each event of the merchant account's chain in sequence order. Events
// not chained yet (PostgreSQL chains just after commit, chain.go) are not part of it.
func (q Q) ChainEvents(ctx context.Context, account string, fn func(remit.Event) error) error {
	key := func(e remit.Event) []any { return []any{e.Sequence} }
	return pages(ctx, q, "store.ChainEvents", `SELECT `+eventColumns+` FROM events
		WHERE merchant_account_id = $1 AND sequence > $2 ORDER BY sequence LIMIT `+itoa(verifyPage),
		[]any{account}, []any{int64(0)}, scanEvent, key, fn)
}
