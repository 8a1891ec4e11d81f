package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// A store written before the chain existed gets it on migration: each merchant account's events,
// in the order they were written, numbered 1..n and hashed; events written afterwards continue
// each chain.
func TestChainMigration(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			ctx := context.Background()
			db := storeBefore(t, s, 18)
			// 2,100 events over two accounts (each more than a page of 1,000), written the old way: no sequence,
			// no hash; equal times are ordered by ID.
			for i := range 2100 {
				account := []string{"ma_a", "ma_b"}[i%2]
				if _, err := db.SQL().ExecContext(ctx, `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at)
					VALUES ($1, $2, 'sandbox', 'customer.created', '', $3, $4)`,
					fmt.Sprintf("evt_%05d", i), account, fmt.Sprintf(`{"object":{"n":%d}}`, i), 1_700_000_000_000_000+int64(i/4)); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				tx.AppendEvent(remit.Event{ID: "evt_new", Type: "customer.created", MerchantAccountID: "ma_a", Environment: remit.Sandbox,
					CreatedAt: remit.FromMicros(1_800_000_000_000_000), Data: []byte(`{"object":{}}`)}, "")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, account := range []string{"ma_a", "ma_b"} {
				if err := db.ChainBeforeRead(ctx, account); err != nil { // PostgreSQL chains after commit, in the background
					t.Fatal(err)
				}
				want, prev, last := int64(1), "", ""
				err := db.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
					return q.ChainEvents(ctx, account, func(e remit.Event) error {
						if detail := remit.ChainLink(want, prev, e); detail != "" {
							t.Fatalf("%s: event %s %s", account, e.ID, detail)
						}
						if e.ID < last && e.ID != "evt_new" {
							t.Fatalf("%s: %s chained after %s", account, e.ID, last)
						}
						want, prev, last = want+1, e.Hash, e.ID
						return nil
					})
				})
				if err != nil {
					t.Fatal(err)
				}
				if n := map[string]int64{"ma_a": 1051, "ma_b": 1050}[account]; want-1 != n {
					t.Errorf("%s: chain of %d events, want %d", account, want-1, n)
				}
				if account == "ma_a" && last != "evt_new" {
					t.Errorf("the new event did not continue the chain: last %s", last)
				}
			}
		})
	}
}

// Concurrent transactions (joined into group commits on SQLite, racing for the account's chain
// lock on PostgreSQL) chain their events without a gap or a fork, and a transaction that fails
// leaves no link behind.
func TestChainUnderConcurrentCommits(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var wg sync.WaitGroup
		const writers, each = 8, 25
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					_ = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
						for _, account := range []string{"ma_a", "ma_b"} {
							tx.AppendEvent(remit.Event{ID: fmt.Sprintf("evt_%s_%d_%d", account, w, i), Type: "customer.created", MerchantAccountID: account,
								Environment: remit.Sandbox, CreatedAt: remit.FromMicros(1_700_000_000_000_000), Data: []byte(`{"object":{}}`)}, "")
						}
						if i%5 == 4 {
							return errors.New("refused") // its events must not be chained
						}
						return nil
					})
				}
			}()
		}
		wg.Wait()
		for _, account := range []string{"ma_a", "ma_b"} {
			if err := db.ChainBeforeRead(ctx, account); err != nil { // PostgreSQL chains after commit, in the background
				t.Fatal(err)
			}
			want, prev := int64(1), ""
			err := db.Snapshot(ctx, func(ctx context.Context, q store.Q) error {
				return q.ChainEvents(ctx, account, func(e remit.Event) error {
					if detail := remit.ChainLink(want, prev, e); detail != "" {
						t.Fatalf("%s: event %s %s", account, e.ID, detail)
					}
					want, prev = want+1, e.Hash
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := want - 1; got != writers*each*4/5 {
				t.Errorf("%s: %d events chained, want %d", account, got, writers*each*4/5)
			}
		}
	})
}
