package store_test

import (
	"context"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// storeBefore opens a new store of kind s migrated up to version only, closed when the test ends:
// the start of a migration's test, which writes rows the old way and then migrates the rest.
func storeBefore(t *testing.T, s testkit.Store, version int64) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, testkit.NewStoreURL(t, s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.MigrateTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	return db
}
