package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// A server keeps the API keys and merchant accounts it authenticated (app/authcache.go). A change
// made by another process (here a second handle on the same store, as the CLI or another `serve`
// would make it) is seen by the very next request: a merchant account's clock, then a revoked key.
func TestAuthenticatedFromMemorySeesOtherProcesses(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		keyID, key, err := e.App.Access.CreateAPIKey(ctx, e.Tenant.OrganizationID, []remit.Environment{remit.Sandbox})
		if err != nil {
			t.Fatal(err)
		}
		other, err := store.Open(ctx, e.DBURL)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		before := clockNow(t, e, testkit.APIKey(key))
		clockNow(t, e, testkit.APIKey(key)) // from memory now

		// Another process moves the merchant account's clock a day ahead.
		if err := other.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return tx.SetMerchantClockOffset(ctx, e.Tenant.Sandbox, 24*time.Hour, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		// SQLite: the next request sees it. PostgreSQL: the process learns the new auth version from
		// a notification, within store.AuthStaleAfter at worst (store/auth_listen.go).
		seen := func(ok func() bool) bool {
			deadline := time.Now().Add(2 * store.AuthStaleAfter)
			for !ok() {
				if e.App.DB.Dialect() == store.SQLite || time.Now().After(deadline) {
					return false
				}
				time.Sleep(5 * time.Millisecond)
			}
			return true
		}
		if !seen(func() bool { return clockNow(t, e, testkit.APIKey(key)).Sub(before) >= 23*time.Hour }) {
			t.Fatalf("the clock another process moved a day ahead was not seen")
		}

		// Another process revokes the key: the next request is refused, reads and writes.
		if err := other.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return tx.RevokeAPIKey(ctx, keyID, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if !seen(func() bool { return e.Do("GET", clockPath, nil, testkit.APIKey(key)).Status == 401 }) {
			t.Fatal("a key another process revoked still works")
		}
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.APIKey(key)), 401, "unauthorized")
		wantError(t, e, e.Do("POST", "/v1/customers", map[string]any{"customerId": "late", "name": "Late"},
			testkit.APIKey(key), testkit.Key("after-revoke")), 401, "unauthorized")

		// The tenant's own key, read from memory until then, still works.
		e.Must(200, "GET", clockPath, nil)
	})
}

// A change this process makes is seen by its very next request, on both stores: no waiting for
// the notification (store/auth_listen.go).
func TestAuthenticatedFromMemorySeesOwnChangesAtOnce(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		for i := range 20 {
			keyID, key, err := e.App.Access.CreateAPIKey(ctx, e.Tenant.OrganizationID, []remit.Environment{remit.Sandbox})
			if err != nil {
				t.Fatal(err)
			}
			e.Must(200, "GET", clockPath, nil, testkit.APIKey(key)) // kept in memory
			e.Must(200, "GET", clockPath, nil, testkit.APIKey(key))
			if err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return tx.RevokeAPIKey(ctx, keyID, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
			if r := e.Do("GET", clockPath, nil, testkit.APIKey(key)); r.Status != 401 {
				t.Fatalf("round %d: a key this process revoked answered %d", i, r.Status)
			}
		}
	})
}
