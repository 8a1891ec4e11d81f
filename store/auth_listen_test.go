package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
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

// The auth version never goes back in one process. The race it closes: a request reads the row
// while the listener is not yet confirmed (version 1); the listener then stores the version it
// read just before the change (0) as confirmed. Trusting it would serve an API key's cached state
// from before its revocation.
func TestAuthVersionNeverGoesBack(t *testing.T) {
	// PostgreSQL only: SQLite reads its version row on every request, there is no listener.
	ctx := context.Background()
	db, err := store.Open(ctx, testkit.NewStoreURL(t, testkit.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.AuthListenerSays(0, false)
	if _, err := db.SQL().ExecContext(ctx, `UPDATE auth_version SET version = 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if got, err := db.AuthVersion(ctx); err != nil || got != 1 {
		t.Fatalf("from the row: %d, %v; want 1", got, err)
	}
	db.AuthListenerSays(0, true)
	if got, err := db.AuthVersion(ctx); err != nil || got != 1 {
		t.Fatalf("after the listener stored an older version: %d, %v; want 1", got, err)
	}
	db.AuthListenerSays(1, true)
	if got, err := db.AuthVersion(ctx); err != nil || got != 1 {
		t.Fatalf("the listener caught up: %d, %v; want 1", got, err)
	}
}
