package reliability_test

import (
	"os"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestEntitlementsAcrossProcesses: two `serve` processes on one store, each with its own cache of
// entitlements. A subscription paused through one is seen without access by the other, and
// resumed through the other is seen with access by the first, each within the second the brief
// allows (docs/entitlements.md). On PostgreSQL; SQLite is one process's store.
func TestEntitlementsAcrossProcesses(t *testing.T) {
	if os.Getenv("REMIT_TEST_POSTGRES_URL") == "" {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatal("REMIT_TEST_POSTGRES_URL is needed")
		}
		t.Skip("needs REMIT_TEST_POSTGRES_URL")
	}
	bin := testkit.BuildRemit(t)
	env := append(os.Environ(), "REMIT_DATABASE_URL="+testkit.NewStoreURL(t, testkit.Postgres), "REMIT_REDIS_URL=", "REMIT_LOG_LEVEL=warn",
		"REMIT_RATE_LIMIT=1000000", "REMIT_RATE_BURST=1000000", "REMIT_DATABASE_MAX_CONNS=4")
	tn := bootstrap(t, bin, env, "Entitlements across processes")
	a := newClient(testkit.StartServe(t, bin, env, testkit.FreeAddr(t)).Base)
	b := newClient(testkit.StartServe(t, bin, env, testkit.FreeAddr(t)).Base)
	a.must(t, 200, tn, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 1000})
	a.must(t, 201, tn, "POST", "/v1/features", map[string]any{"featureKey": "sso", "name": "SSO", "type": "boolean"})
	a.must(t, 200, tn, "POST", "/v1/products/pro/features", map[string]any{"featureKey": "sso"})
	a.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "C"})
	a.must(t, 201, tn, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba", "customerId": "c", "currency": "USD"})
	q := a.must(t, 201, tn, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c", "billingAccountId": "ba",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "plan"}}})
	sub := a.must(t, 200, tn, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{})["subscriptionId"].(string)
	access := func(c *client) bool {
		return c.must(t, 200, tn, "GET", "/v1/customers/c/entitlements/sso", nil)["hasAccess"] == true
	}
	if !access(b) || !access(a) { // both cache it
		t.Fatal("no access after the subscription started")
	}
	within := func(what string, c *client, want bool) {
		t.Helper()
		start := time.Now()
		testkit.WaitFor(t, time.Second, what, func() bool { return access(c) == want })
		t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
	}
	a.must(t, 200, tn, "POST", "/v1/subscriptions/"+sub+"/pause", map[string]any{})
	within("process b sees the pause", b, false)
	b.must(t, 200, tn, "POST", "/v1/subscriptions/"+sub+"/resume", map[string]any{})
	within("process a sees the resume", a, true)
}
