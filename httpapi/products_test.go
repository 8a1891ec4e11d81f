package httpapi_test

import (
	"slices"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestProductsAndFeatures: products as a resource (create, get, list by active, patch, archive),
// features of each type, and the features a product grants with their limits and values.
func TestProductsAndFeatures(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		// A price naming a product that does not exist creates it, named after its ID.
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "old", "productId": "legacy", "name": "Legacy", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 100})
		if p := e.Must(200, "GET", "/v1/products/legacy", nil).Data(); p["name"] != "legacy" || p["active"] != true || len(p["features"].([]any)) != 0 {
			t.Fatalf("legacy product %v", p)
		}
		e.Must(409, "POST", "/v1/products", map[string]any{"productId": "legacy", "name": "Legacy"})
		pro := e.Must(201, "POST", "/v1/products", map[string]any{"productId": "pro", "name": "Pro", "description": "The pro plan", "metadata": map[string]any{"tier": "2"}}).Data()
		if pro["description"] != "The pro plan" || pro["active"] != true {
			t.Fatalf("pro %v", pro)
		}
		gen := e.Must(201, "POST", "/v1/products", map[string]any{"name": "Generated"}).Data()
		if id := gen["productId"].(string); len(id) < 6 || id[:5] != "prod_" {
			t.Fatalf("generated id %v", id)
		}
		wantFields(t, e.Do("POST", "/v1/products", map[string]any{"name": " "}), "body:name:required")

		// Features: metered needs a meter; the others take none.
		e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "sso", "name": "SSO", "type": "boolean"})
		e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "api_calls", "name": "API calls", "type": "metered", "meterId": "api-calls"})
		e.Must(201, "POST", "/v1/features", map[string]any{"featureKey": "tier", "name": "Tier", "type": "static"})
		wantFields(t, e.Do("POST", "/v1/features", map[string]any{"featureKey": "m", "name": "M", "type": "metered"}), "body:meterId:required")
		wantFields(t, e.Do("POST", "/v1/features", map[string]any{"featureKey": "b", "name": "B", "type": "boolean", "meterId": "x"}), "body:meterId:not_allowed")
		if r := e.Do("POST", "/v1/features", map[string]any{"featureKey": "Bad Key", "name": "B", "type": "boolean"}); r.Status != 422 {
			t.Fatalf("bad key: %d", r.Status)
		}
		e.Must(409, "POST", "/v1/features", map[string]any{"featureKey": "sso", "name": "SSO", "type": "boolean"})
		if f := e.Must(200, "GET", "/v1/features/api_calls", nil).Data(); f["meterId"] != "api-calls" || f["type"] != "metered" {
			t.Fatalf("feature %v", f)
		}
		if items := e.Must(200, "GET", "/v1/features?limit=2", nil).Data(); len(items["items"].([]any)) != 2 || items["hasMore"] != true {
			t.Fatalf("features page %v", items)
		}

		// Grants: each type's fields, the others refused.
		e.Must(200, "POST", "/v1/products/pro/features", map[string]any{"featureKey": "sso"})
		e.Must(200, "POST", "/v1/products/pro/features", map[string]any{"featureKey": "api_calls", "limit": 1000, "softLimit": true})
		p := e.Must(200, "POST", "/v1/products/pro/features", map[string]any{"featureKey": "tier", "value": "gold"}).Data()
		if got := jsonOf(p["features"]); got != `[{"featureKey":"api_calls","limit":1000,"softLimit":true,"type":"metered","value":null},`+
			`{"featureKey":"sso","limit":null,"softLimit":false,"type":"boolean","value":null},`+
			`{"featureKey":"tier","limit":null,"softLimit":false,"type":"static","value":"gold"}]` {
			t.Fatalf("features %s", got)
		}
		wantFields(t, e.Do("POST", "/v1/products/pro/features", map[string]any{"featureKey": "sso", "limit": 3, "value": "x"}),
			"body:limit:not_allowed", "body:value:not_allowed")
		wantFields(t, e.Do("POST", "/v1/products/pro/features", map[string]any{"featureKey": "tier"}), "body:value:required")
		if r := e.Do("POST", "/v1/products/pro/features", map[string]any{"featureKey": "nope"}); r.Status != 404 {
			t.Fatalf("unknown feature: %d %s", r.Status, r.Body)
		}
		e.Must(404, "POST", "/v1/products/none/features", map[string]any{"featureKey": "sso"})
		p = e.Must(200, "DELETE", "/v1/products/pro/features/tier", nil).Data()
		if len(p["features"].([]any)) != 2 {
			t.Fatalf("after delete %v", p["features"])
		}
		e.Must(404, "DELETE", "/v1/products/pro/features/tier", nil)
		if prev, n := lastPrevious(t, e, "pro", "product.updated"); n != 4 || len(prev["features"].([]any)) != 3 {
			t.Fatalf("product.updated %d %v", n, prev)
		}

		// PATCH: name, description cleared, archive; the list by active.
		p = e.Must(200, "PATCH", "/v1/products/pro", map[string]any{"name": "Pro 2", "description": nil, "active": false}).Data()
		if p["name"] != "Pro 2" || p["description"] != nil || p["active"] != false || len(p["features"].([]any)) != 2 {
			t.Fatalf("patched %v", p)
		}
		wantPrevious(t, e, "pro", "product.updated", 5, `{"active":true,"description":"The pro plan","name":"Pro"}`)
		wantFields(t, e.Do("PATCH", "/v1/products/pro", map[string]any{"features": []any{}}), "body:features:immutable_field")
		ids := func(q string) []string {
			var out []string
			for _, it := range e.Must(200, "GET", "/v1/products"+q, nil).Data()["items"].([]any) {
				out = append(out, it.(map[string]any)["productId"].(string))
			}
			return out
		}
		if got := ids("?active=false"); !slices.Equal(got, []string{"pro"}) {
			t.Fatalf("archived %v", got)
		}
		if got := ids("?active=true"); !slices.Equal(got, []string{gen["productId"].(string), "legacy"}) {
			t.Fatalf("active %v", got)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, "sso"); !slices.Equal(ev, []string{"feature.created"}) {
			t.Fatalf("feature events %v", ev)
		}
		// The price on the archived product keeps working.
		e.Must(200, "GET", "/v1/prices/old", nil)
	})
}
