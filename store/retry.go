package store

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/remit-billing/remit"
)

// Retrying a transaction that lost a deadlock or a serialization conflict (docs/reliability.md,
// "Deadlocks and retries"). Only PostgreSQL has them: SQLite's one writer runs write transactions
// one at a time.

// MaxTxAttempts bounds how many times RetryTx runs a transaction that keeps losing.
const MaxTxAttempts = 6

// RetryTx runs fn in a transaction as Tx does and, when the transaction lost a deadlock or a
// serialization conflict (IsRetryable), runs it again, up to MaxTxAttempts times in all, after a
// short random pause that grows with each attempt. Inside another transaction it joins it (no
// retry there: the owner of the outer one retries the whole).
//
// fn must be safe to run again: everything it sets outside the transaction it sets afresh at its
// start, and anything it registered to run after the commit (Tx.AfterCommit, the engine's
// follow-ups) it registers again.
func (db *DB) RetryTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	if InTx(ctx) {
		return db.Tx(ctx, fn)
	}
	for attempt := 1; ; attempt++ {
		err := db.Tx(ctx, fn)
		if !IsRetryable(err) || attempt == MaxTxAttempts || ctx.Err() != nil {
			return err
		}
		db.retries.Add(1)
		pause := retryPause(attempt)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
	}
}

// retryPause is the pause before attempt+1: random in [0, 5 ms × 2^(attempt-1)) plus 1 ms, so
// that the transactions that deadlocked do not meet again in step.
func retryPause(attempt int) time.Duration {
	ceiling := 5 * time.Millisecond << (attempt - 1)
	return time.Millisecond + rand.N(ceiling)
}

// TxRetries is how many times RetryTx ran a transaction again since the store was opened.
func (db *DB) TxRetries() int64 { return db.retries.Load() }

// NextNumber takes the next number of a gap-free counter (Q.NextNumber) and marks the transaction
// as holding a hot row (TookHotRows).
func (tx *Tx) NextNumber(ctx context.Context, scope, name string) (int64, error) {
	tx.hot = true
	return tx.Q.NextNumber(ctx, scope, name)
}

// LockSpendableLots locks a customer's spendable lots (Q.LockSpendableLots) and marks the
// transaction as holding hot rows (TookHotRows).
func (tx *Tx) LockSpendableLots(ctx context.Context, merchantAccountID, customerID, currency string, at time.Time) ([]remit.BalanceEntry, error) {
	tx.hot = true
	return tx.Q.LockSpendableLots(ctx, merchantAccountID, customerID, currency, at)
}

// TookHotRows reports whether the transaction locked a row that many writes of the account share:
// a document counter or a customer's balance lots. The job runner ends its batch after a job that
// did (app/scheduler.go), so that it never holds such a row while it locks another resource's
// rows: the order every write follows is the resource's own rows first, shared rows last, then
// the commit. On SQLite it is always false: its one writer takes no row locks, so a batch holds
// no row another write waits for, and a billing day's finalizations commit fifty at a time instead
// of one (docs/benchmarks.md, "The billing day").
func (tx *Tx) TookHotRows() bool { return tx.hot && tx.d == Postgres }

// EndJobBatch asks the job runner to commit after the job running in the transaction: a job that
// is a batch of its own (a price migration's batch of subscriptions, app/price_migrations.go),
// whose work is one transaction.
func (tx *Tx) EndJobBatch() { tx.alone = true }

// JobBatchEnded reports whether the job runner commits after the job that just ran: it took hot
// rows (TookHotRows) or asked to (EndJobBatch).
func (tx *Tx) JobBatchEnded() bool { return tx.alone || tx.TookHotRows() }
