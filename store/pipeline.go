package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A PostgreSQL transaction's last writes travel with its COMMIT.
//
// Every statement on PostgreSQL is a round trip: a write and a read system call on both sides,
// and on a small machine the request's own latency. A write whose outcome nothing in the
// transaction reads afterwards (an event, the idempotency answer) does not need its own: Tx.Later
// queues it, and the commit sends the queued writes and the COMMIT in one pipelined batch (pgx's
// native SendBatch, beneath database/sql). The server runs them in order and stops at the first
// that fails, so the COMMIT never runs after a failed write: the transaction is rolled back and
// the commit's error is that write's (or the error the caller gave for a unique violation).
//
// To reach pgx beneath database/sql the transaction is run on one connection of the pool
// (sql.Conn) with BEGIN and COMMIT statements of its own rather than a *sql.Tx, whose Commit
// would send a COMMIT of its own. pgx's stdlib driver drops a connection that returns to the pool
// inside a transaction (ResetSession), so a connection lost mid-way is never reused half-done.
//
// On SQLite, Later runs the write at once: the database is in the process, there is no round
// trip to save, and the group commit's savepoints (groupcommit.go) need each request's writes
// inside its own savepoint.

// laterWrite is a write queued for the commit, and what its unique violation means (nil: the
// violation itself).
type laterWrite struct {
	query    string
	args     []any
	onUnique error
}

// Later runs a write whose result the transaction does not read (rows affected, returned
// columns) and which nothing later in the transaction reads back: on PostgreSQL it is sent with
// the COMMIT, on SQLite it runs now. If it fails on a unique constraint and onUnique is not nil,
// the transaction fails with onUnique (on PostgreSQL, as the commit's error).
func (tx *Tx) Later(ctx context.Context, onUnique error, query string, args ...any) error {
	if tx.d != Postgres {
		_, err := tx.exec(ctx, query, args...)
		if onUnique != nil && IsUniqueViolation(err) {
			return onUnique
		}
		return err
	}
	tx.later = append(tx.later, laterWrite{query: query, args: args, onUnique: onUnique})
	return nil
}

// pgTx runs fn in a PostgreSQL transaction on one pooled connection: BEGIN, fn and the before-
// commit hooks, then the queued writes and COMMIT in one round trip (or ROLLBACK on an error).
func (db *DB) pgTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return wrapErr(err, "store.Tx: connect")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return wrapErr(err, "store.Tx: begin")
	}
	tx := &Tx{Q: Q{q: conn, d: Postgres}}
	ctx = context.WithValue(ctx, txKey{}, tx)
	defer func() {
		if p := recover(); p != nil {
			rollbackConn(ctx, conn)
			panic(p)
		}
	}()
	if err := runFn(ctx, tx, fn); err != nil {
		rollbackConn(ctx, conn)
		return err
	}
	if err := commitPipelined(ctx, conn, tx.later); err != nil {
		rollbackConn(ctx, conn)
		return wrapErr(err, "store.Tx: commit")
	}
	if tx.changesAuth {
		db.afterAuthChange(ctx)
	}
	if len(tx.unchained) > 0 {
		db.chainAfterCommit(tx.unchained)
	}
	tx.committed()
	return nil
}

// rollbackConn ends the connection's failed transaction, even when the request's context is
// cancelled. If it cannot, the driver drops the connection when it returns to the pool.
func rollbackConn(ctx context.Context, conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = conn.ExecContext(ctx, "ROLLBACK")
}

// commitPipelined sends the queued writes and COMMIT in one batch and reads every result: the
// first failure is the commit's error (a write's onUnique for its unique violation).
//
// A COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error: that is an
// error here (errCommitRolledBack), as pgx's own Tx.Commit makes it.
func commitPipelined(ctx context.Context, conn *sql.Conn, later []laterWrite) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: a PostgreSQL connection of type %T, not pgx's", dc)
		}
		b := &pgx.Batch{}
		for _, w := range later {
			b.Queue(w.query, w.args...)
		}
		b.Queue("COMMIT")
		br := sc.Conn().SendBatch(ctx, b)
		var first error
		for _, w := range later {
			if _, err := br.Exec(); err != nil && first == nil {
				first = w.failed(err)
			}
		}
		tag, err := br.Exec()
		switch {
		case first != nil:
		case err != nil:
			first = err
		case tag.String() == "ROLLBACK":
			first = errCommitRolledBack
		}
		if err := br.Close(); err != nil && first == nil {
			first = err
		}
		return first
	})
}

// errCommitRolledBack: the transaction was aborted by a statement whose failure its caller went
// past, so its COMMIT rolled it back.
var errCommitRolledBack = errors.New("the transaction was aborted by a failed statement: COMMIT rolled it back")

// failed is what the transaction answers when w failed with err.
func (w laterWrite) failed(err error) error {
	var pe *pgconn.PgError
	if w.onUnique != nil && errors.As(err, &pe) && pe.Code == "23505" {
		return w.onUnique
	}
	return err
}
