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
		if after := clockNow(t, e, testkit.APIKey(key)); after.Sub(before) < 23*time.Hour {
			t.Fatalf("clock after another process moved it a day: %s, before %s", after, before)
		}

		// Another process revokes the key: the next request is refused, reads and writes.
		if err := other.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return tx.RevokeAPIKey(ctx, keyID, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.APIKey(key)), 401, "unauthorized")
		wantError(t, e, e.Do("POST", "/v1/customers", map[string]any{"customerId": "late", "name": "Late"},
			testkit.APIKey(key), testkit.Key("after-revoke")), 401, "unauthorized")

		// The tenant's own key, read from memory until then, still works.
		e.Must(200, "GET", clockPath, nil)
	})
}
