package reliability_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// alpha is organization A's data: one of each resource, and the strings that must never reach
// another organization.
type alpha struct {
	ids     map[string]string // path parameter name → A's resource
	bodies  map[string]any    // operationId → a body naming A's resources
	markers []string          // A's IDs and private values
}

const alphaName = "ALPHA-PRIVATE-NAME"

// populateAlpha creates one of each resource as the env's tenant (A).
func populateAlpha(t testing.TB, e *testkit.Env) alpha {
	t.Helper()
	A := alpha{ids: map[string]string{}, bodies: map[string]any{}}
	data := func(r *testkit.Response) map[string]any { return r.Data() }
	str := func(m map[string]any, k string) string {
		s, _ := m[k].(string)
		if s == "" {
			t.Fatalf("no %s in %v", k, m)
		}
		return s
	}
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "a-price", "productId": "a-prod", "name": alphaName, "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 5000})
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "a-coupon", "name": alphaName, "percentOff": 10})
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "a-cus", "name": alphaName, "email": "alpha-private@example.com"})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "a-ba", "customerId": "a-cus", "currency": "USD", "collectionMethod": "charge_automatically"})
	s := data(e.Must(201, "POST", "/v1/customers/a-cus/payment-method-setup", map[string]any{"billingAccountId": "a-ba", "setAsDefault": true}))
	u, _ := url.Parse(str(s, "url"))
	pm := data(e.Must(200, "PUT", u.RequestURI()+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")))
	grant := data(e.Must(201, "POST", "/v1/customers/a-cus/balance/grant", map[string]any{"currency": "USD", "amount": 100, "metadata": map[string]any{"m": alphaName}}))
	inv := data(e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "a-cus", "billingAccountId": "a-ba", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "a-price"}}}))
	invID := str(inv, "invoiceId")
	fin := data(e.Must(200, "POST", "/v1/invoices/"+invID+"/finalize", map[string]any{}))
	receipts := e.Must(200, "GET", "/v1/payment-receipts?invoiceId="+invID, nil).Data()["items"].([]any)
	if len(receipts) != 1 {
		t.Fatalf("receipts: %v", receipts)
	}
	cn := data(e.Must(200, "POST", "/v1/credit-notes", map[string]any{"invoiceId": invID, "reason": "order_change",
		"lines": []any{map[string]any{"description": alphaName, "amount": 100, "bucket": "credit"}}}))
	q := data(e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "a-cus", "billingAccountId": "a-ba",
		"currency": "USD", "lines": []any{map[string]any{"priceId": "a-price"}}}))
	acc := data(e.Must(200, "POST", "/v1/quotes/"+str(q, "quoteId")+"/accept", map[string]any{}))
	e.Must(201, "POST", "/v1/meters", map[string]any{"meterId": "a-meter", "name": alphaName, "aggregation": "unique_count", "uniqueProperty": "user"})
	e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "a-usage", "customerId": "a-cus", "meterId": "a-meter", "quantity": 1,
		"properties": map[string]any{"user": alphaName}})
	e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "a-feature", "name": alphaName, "type": "boolean"})
	e.Must(200, "POST", "/v1/products/a-prod/features", map[string]any{"featureKey": "a-feature"})
	ep := data(e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://alpha.example/hook", "description": alphaName}))
	mails := e.Must(200, "GET", "/v1/emails?customerId=a-cus&limit=1", nil).Data()["items"].([]any)
	if len(mails) != 1 {
		t.Fatalf("emails: %v", mails)
	}
	evs := e.Must(200, "GET", "/v1/events?limit=1", nil).Data()["items"].([]any)
	ev := evs[0].(map[string]any)
	jobs := e.Must(200, "GET", "/v1/jobs?limit=1", nil).Data()["items"].([]any) // the subscription's renewal, at least
	if len(jobs) != 1 {
		t.Fatalf("jobs: %v", jobs)
	}
	entries := e.Must(200, "GET", "/v1/ledger/entries?limit=1", nil).Data()["items"].([]any) // the finalization's, at least
	if len(entries) != 1 {
		t.Fatalf("ledger entries: %v", entries)
	}
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "a-price-2", "productId": "a-prod", "name": alphaName, "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 6000})
	// A price migration of no customer's subscription: it completes at once and changes nothing.
	pmig := data(e.Must(202, "POST", "/v1/price-migrations", map[string]any{"fromPriceId": "a-price", "toPriceId": "a-price-2",
		"effective": "next_renewal", "customerIds": []any{"a-nobody"}}))

	A.ids = map[string]string{
		"customerId": "a-cus", "priceId": "a-price", "couponId": "a-coupon", "billingAccountId": "a-ba",
		"invoiceId": invID, "taxTransactionId": str(fin, "taxTransactionId"), "receiptId": str(receipts[0].(map[string]any), "receiptId"),
		"creditNoteId": str(cn, "creditNoteId"), "quoteId": str(q, "quoteId"), "subscriptionId": str(acc, "subscriptionId"),
		"endpointId": str(ep, "endpointId"), "eventId": str(ev, "eventId"), "merchantAccountId": e.Tenant.Sandbox, "paymentMethodId": str(pm, "paymentMethodId"),
		"paymentId":   str(fin, "latestPaymentId"),
		"emailId":     str(mails[0].(map[string]any), "emailId"),
		"thresholdId": "thr_alpha", // usage thresholds answer 501 on this branch
		"meterId":     "a-meter",
		"productId":   "a-prod",
		"featureKey":  "a-feature",
		"jobId":       str(jobs[0].(map[string]any), "jobId"),
		"entryId":     str(entries[0].(map[string]any), "entryId"),
		"migrationId": str(pmig, "migrationId"),
	}
	lines := []any{map[string]any{"priceId": "a-price"}}
	A.bodies = map[string]any{
		"createInvoice":                   map[string]any{"customerId": "a-cus", "billingAccountId": "a-ba", "currency": "USD", "lines": lines},
		"createBillingAccount":            map[string]any{"customerId": "a-cus", "currency": "USD"},
		"createQuote":                     map[string]any{"orderType": "one_off", "customerId": "a-cus", "billingAccountId": "a-ba", "currency": "USD", "lines": lines},
		"createCreditNote":                map[string]any{"invoiceId": invID, "reason": "order_change", "lines": []any{map[string]any{"description": "x", "amount": 1, "bucket": "credit"}}},
		"createUsageEvent":                map[string]any{"eventId": "u1", "customerId": "a-cus", "meterId": "m", "quantity": 1},
		"createUsageThreshold":            map[string]any{"customerId": "a-cus", "meterId": "m", "threshold": 10},
		"grantCustomerBalance":            map[string]any{"currency": "USD", "amount": 1},
		"expireCustomerBalance":           map[string]any{"sourceEntryId": str(grant, "entryId")},
		"createPaymentMethodSetupSession": map[string]any{"billingAccountId": "a-ba"},
		"resendEvent":                     map[string]any{"endpointId": str(ep, "endpointId")},
		"cancelSubscription":              map[string]any{"at": "now"},
		"changeSubscription":              map[string]any{"items": []any{map[string]any{"priceId": "a-price"}}},
		"previewSubscriptionChange":       map[string]any{"items": []any{map[string]any{"priceId": "a-price"}}},
		"attachProductFeature":            map[string]any{"featureKey": "a-feature"},
		"createPriceMigration":            map[string]any{"fromPriceId": "a-price", "toPriceId": "a-price-2", "effective": "now"},
	}
	A.markers = []string{alphaName, "alpha-private@example.com", e.Tenant.OrganizationID, e.Tenant.APIKeyID, e.Tenant.Production, str(grant, "entryId")}
	for _, id := range A.ids {
		A.markers = append(A.markers, id)
	}
	return A
}

// TestTenantIsolation is generated from api/openapi.yaml: with organization A's resources in
// place, organization B calls every route (1) in its own merchant account with A's IDs in the
// path and the body, which must answer 403 or 404, and (2) naming A's merchant account, which must
// answer 403. No answer may carry any of A's IDs or values that B did not send itself.
func TestTenantIsolation(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		A := populateAlpha(t, e)
		B := e.NewTenant("Beta", false)
		implemented := e.Remit.Handler.Operations()
		checked := 0
		for _, o := range operations(spec) {
			if o.op.Security != nil && len(*o.op.Security) == 0 || strings.HasPrefix(o.path, "/customer-portal") {
				continue // claims and the portal authenticate with the token in the path or query, not a key
			}
			path := fill(o.path, withShared(A.ids), "")
			if strings.Contains(path, "//") || strings.HasSuffix(path, "/") {
				t.Fatalf("%s %s: a path parameter has no resource of A in the fixture (add it to populateAlpha)", o.method, o.path)
			}
			var body any
			if o.body != nil {
				body = A.bodies[o.id]
				if body == nil {
					body = map[string]any{}
				}
			}
			raw, _ := json.Marshal(body)
			sent := path + string(raw)
			refersToA := namesAny(o.path, A.ids) || A.bodies[o.id] != nil

			// (1) B in its own account, with A's IDs.
			r := e.Do(o.method, path, body, testkit.As(B))
			checked++
			switch {
			case !implemented[o.id] && r.Status == 501:
			case refersToA && r.Status != 403 && r.Status != 404:
				t.Errorf("%s %s as B with A's IDs: %d, want 403 or 404: %s", o.method, path, r.Status, r.Body)
			}
			noLeak(t, o.method+" "+path+" as B", r, A.markers, sent)

			// (2) B naming A's merchant account.
			r = e.Do(o.method, path, body, testkit.APIKey(B.APIKey), testkit.Scope("sandbox", e.Tenant.Sandbox))
			checked++
			if r.Status != 403 {
				t.Errorf("%s %s as B in A's merchant account: %d, want 403: %s", o.method, path, r.Status, r.Body)
			}
			noLeak(t, o.method+" "+path+" as B in A's account", r, A.markers, sent+e.Tenant.Sandbox)
		}
		// A still sees its own data: the fixture was reachable, so the 404s above mean isolation.
		if r := e.Must(200, "GET", "/v1/customers/a-cus", nil); !strings.Contains(string(r.Body), alphaName) {
			t.Fatalf("A's customer: %s", r.Body)
		}
		t.Logf("%d cross-tenant requests over %d operations", checked, len(operations(spec)))
	})
}

// sharedParams fill the path parameters that name no resource of A (an export's dataset): the
// request reads the merchant account it names, so B in its own account gets its own data.
var sharedParams = map[string]string{"dataset": "invoices"}

func withShared(ids map[string]string) map[string]string {
	all := map[string]string{}
	for k, v := range sharedParams {
		all[k] = v
	}
	for k, v := range ids {
		all[k] = v
	}
	return all
}

// namesAny reports whether the path template has a parameter that ids fills.
func namesAny(path string, ids map[string]string) bool {
	for k := range ids {
		if strings.Contains(path, "{"+k+"}") {
			return true
		}
	}
	return false
}

// noLeak fails if the answer carries one of markers that the request itself did not carry.
func noLeak(t *testing.T, what string, r *testkit.Response, markers []string, sent string) {
	t.Helper()
	for _, m := range markers {
		if m != "" && strings.Contains(string(r.Body), m) && !strings.Contains(sent, m) {
			t.Errorf("%s: the answer carries %q of organization A: %s", what, m, r.Body)
		}
	}
}
