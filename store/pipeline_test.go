package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Writes queued with Tx.Later commit with their transaction or not at all: on PostgreSQL they
// travel with the COMMIT (store/pipeline.go), on SQLite they run at once.
func TestLaterWritesCommitWithTheirTransaction(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		lost := errors.New("lost")
		rec := store.IdempotencyRecord{Route: "POST /v1/x", BodyHash: "h", Owner: "o1", LeaseUntil: now, CreatedAt: now}
		number := func(kind string) int64 {
			t.Helper()
			var n int64
			if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) (err error) {
				n, err = tx.NextNumber(ctx, "acct", kind)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		found := func(key string) bool {
			t.Helper()
			_, ok, err := db.Read(ctx).LookupIdempotency(ctx, "scope", key)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}

		// Committed: the queued write and the transaction's own.
		if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.NextNumber(ctx, "acct", "kept"); err != nil {
				return err
			}
			return tx.NewIdempotencyAtCommit(ctx, "done", "scope", "k1", rec, 201, []byte("{}"), lost)
		}); err != nil {
			t.Fatal(err)
		}
		if !found("k1") || number("kept") != 2 {
			t.Fatal("a queued write or its transaction's own write did not commit")
		}

		// A queued write that breaks a unique constraint fails the transaction with the error its
		// caller gave, and nothing of the transaction is kept.
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.NextNumber(ctx, "acct", "dropped"); err != nil {
				return err
			}
			if err := tx.NewIdempotencyAtCommit(ctx, "done", "scope", "k2", rec, 201, []byte("{}"), lost); err != nil {
				return err
			}
			return tx.NewIdempotencyAtCommit(ctx, "done", "scope", "k1", rec, 201, []byte("{}"), lost)
		})
		if !errors.Is(err, lost) {
			t.Fatalf("err = %v, want the caller's error for a unique violation", err)
		}
		if found("k2") || number("dropped") != 1 {
			t.Fatal("a failed transaction kept some of its writes")
		}

		// Any other failure of a queued write fails the transaction with that failure.
		err = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return tx.Later(ctx, nil, `INSERT INTO idempotency_keys (scope, idem_key) VALUES ($1, $2)`, "scope", "k3")
		})
		if err == nil || found("k3") {
			t.Fatalf("a queued write that breaks a NOT NULL constraint committed (err %v)", err)
		}

		// A queued write inside a savepoint that rolls back goes with it; the rest commits.
		if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := tx.NewIdempotencyAtCommit(ctx, "done", "scope", "k4", rec, 201, []byte("{}"), lost); err != nil {
				return err
			}
			refused := errors.New("refused")
			if err := tx.Savepoint(ctx, func() error {
				if err := tx.NewIdempotencyAtCommit(ctx, "done", "scope", "k5", rec, 201, []byte("{}"), lost); err != nil {
					return err
				}
				return refused
			}); !errors.Is(err, refused) {
				return err
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !found("k4") || found("k5") {
			t.Fatal("a savepoint's queued write outlived its rollback, or the transaction's did not commit")
		}

		// The connections stay usable after the failures above.
		for range 40 {
			number("after")
		}
	})
}

// Events appended by a step run with EventsAt take the place of the mark, in the chain as in IDs.
func TestEventsAtKeepsTheOrderOfWhatHappened(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		ev := func(typ string) remit.Event {
			return remit.Event{ID: remit.NewID("evt"), Object: "event", Type: typ, MerchantAccountID: "acct_order",
				Environment: remit.Sandbox, CreatedAt: now, Data: []byte(`{"object":{}}`)}
		}
		if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			tx.AppendEvent(ev("first"), "obj")
			mark := tx.EventMark()
			tx.AppendEvent(ev("fourth"), "obj")
			tx.AppendEvent(ev("fifth"), "obj")
			return tx.EventsAt(mark, func() error {
				tx.AppendEvent(ev("second"), "obj")
				tx.AppendEvent(ev("third"), "obj")
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.ChainBeforeRead(ctx, "acct_order"); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read(ctx).ListEventsByObject(ctx, "acct_order", "obj")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"first", "second", "third", "fourth", "fifth"}
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d", len(got), len(want))
		}
		for i, e := range got {
			if e.Type != want[i] || e.Sequence != int64(i+1) {
				t.Errorf("event %d: %s at sequence %d, want %s at %d", i, e.Type, e.Sequence, want[i], i+1)
			}
		}
	})
}

// A transaction whose function went past a failed statement: on PostgreSQL the failure aborted it,
// so its COMMIT rolls it back and Tx says so (as pgx's own Tx.Commit does); SQLite undoes only the
// failed statement and commits the rest.
func TestTxPastAFailedStatement(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.NextNumber(ctx, "acct", "past-failure"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (scope, idem_key) VALUES ($1, $2)`, "scope", "bad"); err == nil {
				t.Error("a statement that breaks a NOT NULL constraint succeeded")
			}
			return nil // went past it
		})
		var n int64
		if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) (err error) {
			n, err = tx.NextNumber(ctx, "acct", "past-failure")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if db.Dialect() == store.Postgres {
			if err == nil || n != 1 {
				t.Fatalf("PostgreSQL: err %v and next number %d, want an error and 1 (nothing committed)", err, n)
			}
			return
		}
		if err != nil || n != 2 {
			t.Fatalf("SQLite: err %v and next number %d, want nil and 2", err, n)
		}
	})
}
