package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/remit-billing/remit/store"
)

// TestStatementReuse: statements run again and again — on the read pool and in write
// transactions, nested inside the iteration of their own results, after a failure, and past the
// statement cache's size — give the right answers (SQLite caches prepared statements per
// connection; PostgreSQL's driver does its own caching).
func TestStatementReuse(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const insert = `INSERT INTO settings (name, value) VALUES ($1, $2)`
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			for i := range 5 {
				if _, err := tx.Exec(ctx, insert, fmt.Sprintf("reuse-%d", i), fmt.Sprint(i)); err != nil {
					return err
				}
			}
			// The same statement failing (a duplicate name, rolled back to its savepoint), then
			// succeeding again.
			err := tx.Savepoint(ctx, func() error {
				_, err := tx.Exec(ctx, insert, "reuse-0", "x")
				return err
			})
			if !store.IsUniqueViolation(err) {
				return fmt.Errorf("duplicate insert: %v", err)
			}
			_, err = tx.Exec(ctx, insert, "reuse-5", "5")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		const list = `SELECT name, value FROM settings WHERE name LIKE 'reuse-%' ORDER BY name`
		// Nested: the same query text while its own rows are open, in one transaction (one
		// connection). SQLite only: PostgreSQL's driver runs one statement at a time per
		// connection, so no code can do this there.
		err = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if db.Dialect() != store.SQLite {
				return nil
			}
			outer, err := tx.Query(ctx, list)
			if err != nil {
				return err
			}
			defer outer.Close()
			n := 0
			for outer.Next() {
				var name, value string
				if err := outer.Scan(&name, &value); err != nil {
					return err
				}
				if name != fmt.Sprintf("reuse-%d", n) || value != fmt.Sprint(n) {
					return fmt.Errorf("outer row %d: %s=%s", n, name, value)
				}
				inner, err := tx.Query(ctx, list)
				if err != nil {
					return err
				}
				m := 0
				for inner.Next() {
					m++
				}
				inner.Close()
				if m != 6 {
					return fmt.Errorf("inner query saw %d rows, want 6", m)
				}
				var v string
				if err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v); err != nil || v != value {
					return fmt.Errorf("point read of %s: %q %v", name, v, err)
				}
				n++
			}
			if n != 6 {
				return fmt.Errorf("outer query saw %d rows, want 6", n)
			}
			return outer.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		// The read pool, past the cache's size: every statement text is new.
		q := db.Read(ctx)
		for i := range 600 {
			var got int
			if err := q.QueryRow(ctx, fmt.Sprintf(`SELECT %d + COUNT(*) FROM settings WHERE name LIKE 'reuse-%%'`, i)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != i+6 {
				t.Fatalf("query %d: %d, want %d", i, got, i+6)
			}
		}
		// And the same point read many times, on whichever connection serves it.
		for i := range 200 {
			var v string
			name := fmt.Sprintf("reuse-%d", i%6)
			if err := q.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v); err != nil || v != fmt.Sprint(i%6) {
				t.Fatalf("read %d of %s: %q %v", i, name, v, err)
			}
		}
	})
}
