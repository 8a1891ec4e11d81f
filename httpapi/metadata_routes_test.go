package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// metadataRoute builds a valid request of one operation whose body has metadata, making what it
// needs first; n makes its IDs unique.
type metadataRoute func(t *testing.T, e *testkit.Env, n int) (path string, body map[string]any)

// metadataRoutes has an entry for every operation whose body has metadata (the test fails for an
// operation of the contract that has none, so a new route cannot be forgotten).
func metadataRoutes() map[string]metadataRoute {
	customer := func(e *testkit.Env, n int) (string, string) {
		id := fmt.Sprintf("md_cus_%d", n)
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Metadata"})
		ba := fmt.Sprintf("md_ba_%d", n)
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": ba, "customerId": id, "currency": "USD", "collectionMethod": "send_invoice"})
		return id, ba
	}
	price := func(e *testkit.Env, n int) string {
		id := fmt.Sprintf("md_price_%d", n)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": id, "productId": "md_prod", "name": "Thing", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1000})
		return id
	}
	return map[string]metadataRoute{
		"createMerchantAccount": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/merchant-accounts", validMerchant(fmt.Sprintf("md_ref_%d", n))
		},
		"createPrice": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/prices", map[string]any{"priceId": fmt.Sprintf("md_p_%d", n), "productId": "md_prod", "name": "P", "priceType": "free", "currency": "USD"}
		},
		"createCoupon": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/coupons", map[string]any{"name": "C", "percentOff": 10}
		},
		"createProduct": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/products", map[string]any{"name": "P"}
		},
		"updateProduct": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			id := fmt.Sprintf("md_prod_%d", n)
			e.Must(201, "POST", "/v1/products", map[string]any{"productId": id, "name": "P"})
			return "/v1/products/" + id, map[string]any{}
		},
		"createCustomer": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/customers", map[string]any{"name": "C"}
		},
		"createBillingAccount": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, _ := customer(e, n)
			return "/v1/billing-accounts", map[string]any{"customerId": cus, "currency": "USD"}
		},
		"grantCustomerBalance": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, _ := customer(e, n)
			return "/v1/customers/" + cus + "/balance/grant", map[string]any{"currency": "USD", "amount": 500}
		},
		"expireCustomerBalance": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, _ := customer(e, n)
			grant := e.Must(201, "POST", "/v1/customers/"+cus+"/balance/grant", map[string]any{"currency": "USD", "amount": 500}).Data()
			return "/v1/customers/" + cus + "/balance/expire", map[string]any{"sourceEntryId": grant["entryId"], "amount": 100}
		},
		"createQuote": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, ba := customer(e, n)
			return "/v1/quotes", map[string]any{"orderType": "one_off", "customerId": cus, "billingAccountId": ba, "currency": "USD",
				"lines": []any{map[string]any{"priceId": price(e, n)}}}
		},
		"createInvoice": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, ba := customer(e, n)
			return "/v1/invoices", map[string]any{"customerId": cus, "billingAccountId": ba, "currency": "USD",
				"lines": []any{map[string]any{"priceId": price(e, n)}}}
		},
		"createCreditNote": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, ba := customer(e, n)
			inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": cus, "billingAccountId": ba, "currency": "USD",
				"lines": []any{map[string]any{"priceId": price(e, n)}}}).Data()
			id := fmt.Sprint(inv["invoiceId"])
			e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", nil)
			return "/v1/credit-notes", map[string]any{"invoiceId": id, "reason": "order_change", "lines": []any{map[string]any{"amount": 100, "description": "Less"}}}
		},
		"createUsageThreshold": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, _ := customer(e, n)
			return "/v1/usage-thresholds", map[string]any{"customerId": cus, "meterId": "api", "threshold": 100}
		},
		"createWebhookEndpoint": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/webhook-endpoints", map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", n)}
		},
		// Updates (PATCH): the metadata of the patch, merged into what the resource has.
		"updatePrice": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/prices/" + price(e, n), map[string]any{}
		},
		"updateCoupon": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			id := fmt.Sprintf("md_cpn_%d", n)
			e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": id, "name": "C", "percentOff": 10})
			return "/v1/coupons/" + id, map[string]any{}
		},
		"updateCustomer": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, _ := customer(e, n)
			return "/v1/customers/" + cus, map[string]any{}
		},
		"updateBillingAccount": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			_, ba := customer(e, n)
			return "/v1/billing-accounts/" + ba, map[string]any{}
		},
		"updateInvoice": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			cus, ba := customer(e, n)
			inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": cus, "billingAccountId": ba, "currency": "USD",
				"lines": []any{map[string]any{"priceId": price(e, n)}}}).Data()
			return "/v1/invoices/" + fmt.Sprint(inv["invoiceId"]), map[string]any{}
		},
		"updateWebhookEndpoint": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			ep := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": fmt.Sprintf("https://hooks.example.com/md/%d", n)}).Data()
			return "/v1/webhook-endpoints/" + fmt.Sprint(ep["endpointId"]), map[string]any{}
		},
		"updateMerchantAccount": func(t *testing.T, e *testkit.Env, n int) (string, map[string]any) {
			return "/v1/merchant-accounts/" + e.Tenant.Sandbox, map[string]any{}
		},
	}
}

// TestMetadataRuleOnEveryRoute: one metadata rule, counting characters, answers alike on every
// operation that takes metadata: a key of 40 characters (here 40 × "é", 80 bytes) is accepted, a
// key of 41 is a 422 on the metadata field with reason invalid_key.
func TestMetadataRuleOnEveryRoute(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	routes := metadataRoutes()
	var ops []string
	methods := map[string]string{}
	for _, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema.Value.Properties["metadata"] != nil {
					ops = append(ops, op.OperationID)
					methods[op.OperationID] = method
				}
			}
		}
	}
	for _, id := range ops {
		if routes[id] == nil {
			t.Errorf("operation %s takes metadata but has no entry in metadataRoutes", id)
		}
	}
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		n := 0
		for _, id := range ops {
			build := routes[id]
			if build == nil {
				continue
			}
			t.Run(id, func(t *testing.T) {
				for _, c := range []struct {
					keyLen int
					ok     bool
				}{{25, true}, {40, true}, {41, false}} {
					n++
					path, body := build(t, e, n)
					body["metadata"] = map[string]string{strings.Repeat("é", c.keyLen): "v"}
					r := e.Do(methods[id], path, body)
					switch {
					case c.ok && r.Status >= 300:
						t.Errorf("a key of %d characters: %d %s", c.keyLen, r.Status, r.Body)
					case !c.ok:
						wantFields(t, r, "body:metadata:invalid_key")
					}
				}
			})
		}
	})
}
