package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/remit-billing/remit/store"
)

// A change of the auth version that sends no notification (the row updated by hand) is still seen
// within store.AuthStaleAfter on PostgreSQL (the listener confirms the version every 250 ms), and
// at once on SQLite (every request reads the row).
func TestAuthVersionIsSeenWithinItsBound(t *testing.T) {
	forEachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for range 3 {
			v, err := db.AuthVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().ExecContext(ctx, `UPDATE auth_version SET version = version + 1 WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * store.AuthStaleAfter)
			for {
				got, err := db.AuthVersion(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got == v+1 {
					break
				}
				if db.Dialect() == store.SQLite || time.Now().After(deadline) {
					t.Fatalf("auth version %d, want %d", got, v+1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}
