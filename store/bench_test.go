package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// BenchmarkDurableInsert measures one-row write transactions on SQLite with synchronous=FULL:
// serial (one commit, one fsync each) and from 64 concurrent writers (group commit shares the
// fsync). Run: go test -run '^$' -bench DurableInsert -benchtime 3s ./store/
func BenchmarkDurableInsert(b *testing.B) {
	open := func(b *testing.B) *store.DB {
		db, err := store.Open(context.Background(), testkit.NewStoreURL(b, testkit.SQLite))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		if err := db.Migrate(context.Background()); err != nil {
			b.Fatal(err)
		}
		return db
	}
	insert := func(db *store.DB, i int64) error {
		return db.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, 'v')`, fmt.Sprint(i))
			return err
		})
	}
	b.Run("serial", func(b *testing.B) {
		db := open(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := insert(db, int64(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("64-writers", func(b *testing.B) {
		db := open(b)
		var n atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(32) // 32 × GOMAXPROCS(2) = 64 goroutines
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := insert(db, n.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
