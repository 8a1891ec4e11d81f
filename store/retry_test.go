package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// Two transactions that lock two counters in opposite orders deadlock on their first attempt
// (each waits for the other to have taken its first row). PostgreSQL makes one of them the victim;
// RetryTx runs it again, and both commit: neither caller sees the deadlock.
func TestRetryTxRunsADeadlockVictimAgain(t *testing.T) {
	for _, s := range testkit.Stores() {
		if s != testkit.Postgres {
			continue // SQLite's one writer runs write transactions one at a time: no deadlock to lose
		}
		t.Run(string(s), func(t *testing.T) {
			db, err := store.Open(context.Background(), testkit.NewStoreURL(t, s))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, name := range []string{"a", "b"} { // the two rows exist before the race
				if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error { _, err := tx.NextNumber(ctx, "acct", name); return err }); err != nil {
					t.Fatal(err)
				}
			}
			var firstLocks sync.WaitGroup
			firstLocks.Add(2)
			var runs atomic.Int32
			race := func(first, second string) error {
				attempt := 0
				return db.RetryTx(ctx, func(ctx context.Context, tx *store.Tx) error {
					attempt++
					runs.Add(1)
					if _, err := tx.NextNumber(ctx, "acct", first); err != nil {
						return err
					}
					if attempt == 1 {
						firstLocks.Done()
						firstLocks.Wait() // both hold their first row: each now waits for the other's
					}
					_, err := tx.NextNumber(ctx, "acct", second)
					return err
				})
			}
			errs := make([]error, 2)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); errs[0] = race("a", "b") }()
			go func() { defer wg.Done(); errs[1] = race("b", "a") }()
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("a caller saw the deadlock: %v / %v", errs[0], errs[1])
			}
			if db.TxRetries() < 1 || runs.Load() < 3 {
				t.Fatalf("no transaction ran again (retries %d, runs %d): the deadlock did not happen", db.TxRetries(), runs.Load())
			}
			for _, name := range []string{"a", "b"} {
				var n int64
				if err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) (err error) {
					n, err = tx.NextNumber(ctx, "acct", name)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if n != 4 { // 1 before the race, 2 and 3 by the two transactions, 4 now
					t.Fatalf("counter %s at %d, want 4: a lost attempt left a number taken", name, n)
				}
			}
		})
	}
}
