package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestAnswersAreNeverCached: every answer of the API, a success that carries a shown-once secret
// (a webhook signing secret, a setup session's token, a claim URL, the API key a claim returns)
// or an error of any kind, says Cache-Control: no-store and X-Content-Type-Options: nosniff
// (docs/security.md, "Headers"). testkit checks the same on every answer of every test; this one
// reads the raw answers, without testkit's client.
func TestAnswersAreNeverCached(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		scope := "environment=sandbox&merchantAccountId=" + e.Tenant.Sandbox
		send := func(method, path, body string, auth bool) *http.Response {
			t.Helper()
			req, err := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if auth {
				req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
			}
			res, err := e.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res
		}
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "cus_1", "name": "Ada", "email": "ada@example.com"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_1", "customerId": "cus_1", "currency": "USD"})
		cases := []struct {
			name, method, path, body string
			auth                     bool
			status                   int
		}{
			{"a signing secret", "POST", "/v1/webhook-endpoints?" + scope, `{"url": "https://93.184.216.34/hook"}`, true, 201},
			{"a setup session's token", "POST", "/v1/customers/cus_1/payment-method-setup?" + scope, `{"billingAccountId": "ba_1"}`, true, 201},
			{"a read", "GET", "/v1/customers/cus_1?" + scope, "", true, 200},
			{"a 422", "POST", "/v1/webhook-endpoints?" + scope, `{"url": "ftp://x/"}`, true, 422},
			{"a 401", "GET", "/v1/events?" + scope, "", false, 401},
			{"a 403", "GET", "/v1/events?environment=sandbox&merchantAccountId=ma_nope", "", true, 403},
			{"a 404 resource", "GET", "/v1/customers/cus_nope?" + scope, "", true, 404},
			{"a 404 route", "GET", "/v1/nowhere", "", true, 404},
			{"a 405", "DELETE", "/v1/customers", "", true, 405},
			{"a 400", "POST", "/v1/customers?" + scope, `[1]`, true, 400},
			{"an unknown claim", "POST", "/claims/" + strings.Repeat("ab", 32), `{}`, false, 404},
			{"a portal page without its token", "GET", "/customer-portal/invoices/inv_1", "", false, 401},
		}
		for _, c := range cases {
			res := send(c.method, c.path, c.body, c.auth)
			if res.StatusCode != c.status {
				t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.status)
			}
			if cc, ns := res.Header.Get("Cache-Control"), res.Header.Get("X-Content-Type-Options"); cc != "no-store" || ns != "nosniff" {
				t.Errorf("%s: Cache-Control %q, X-Content-Type-Options %q; want no-store, nosniff", c.name, cc, ns)
			}
		}
	})
}
