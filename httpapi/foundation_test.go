package httpapi_test

// The foundation's suite: the error table, validation, the auth matrix and the order of the
// pipeline's checks, proven through the real HTTP API on every configured store. Idempotency, rate
// limits, the sandbox clock, the operational routes, the contract check and graceful shutdown have
// their own foundation_*_test.go files.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

const (
	clockPath    = "/v1/test-helpers/clock"
	advancePath  = "/v1/test-helpers/clock/advance"
	advanceRoute = "POST " + advancePath
)

// foundationOptions starts the server with createPrice and getInvoice disabled
// (REMIT_DISABLED_OPERATIONS), so the pipeline's tests have operations that answer 501 after auth
// and validation, whatever the areas implement.
func foundationOptions() testkit.Options {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.DisabledOps = []string{"createPrice", "getInvoice"}
	return testkit.Options{Config: &cfg}
}

// runFoundation is testkit.Run with foundationOptions.
func runFoundation(t *testing.T, fn func(t *testing.T, e *testkit.Env)) {
	t.Helper()
	testkit.RunWith(t, foundationOptions(), fn)
}

// validPrice is a body the contract accepts for POST /v1/prices, which is disabled in the
// foundation tests: it answers 501 after auth and validation.
func validPrice() map[string]any {
	return map[string]any{"priceId": "price_1", "productId": "prod_1", "name": "Pro", "priceType": "free", "currency": "USD"}
}

// wantError checks an error answer: its status, its code, error.requestId equal to the Request-Id
// header, and error.docsUrl linking the errors guide's section for the code. It returns error.
func wantError(t *testing.T, e *testkit.Env, r *testkit.Response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d (%s)\n%s", r.Status, status, code, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("error answer is %q, not JSON: %s", r.Header.Get("Content-Type"), r.Body)
	}
	obj, _ := r.JSON()["error"].(map[string]any)
	if obj == nil {
		t.Fatalf("no error envelope: %s", r.Body)
	}
	if obj["code"] != code {
		t.Fatalf("error.code %v, want %s: %s", obj["code"], code, r.Body)
	}
	if msg, _ := obj["message"].(string); msg == "" {
		t.Fatalf("error without message: %s", r.Body)
	}
	rid, _ := obj["requestId"].(string)
	if !strings.HasPrefix(rid, "req_") || rid != r.Header.Get("Request-Id") {
		t.Fatalf("error.requestId %q, Request-Id header %q", rid, r.Header.Get("Request-Id"))
	}
	if want := e.Remit.Config.PublicURL + "/docs/errors#" + code; obj["docsUrl"] != want {
		t.Fatalf("error.docsUrl %v, want %s", obj["docsUrl"], want)
	}
	return obj
}

// wantProblems checks a 422 and that error.details.fields lists exactly want ("location:field:reason"),
// each with a message.
func wantProblems(t *testing.T, e *testkit.Env, r *testkit.Response, want ...string) {
	t.Helper()
	wantError(t, e, r, 422, "validation_failure")
	got := r.FieldErrors()
	if !sameSet(got, want) {
		t.Fatalf("fields %v, want %v\n%s", got, want, r.Body)
	}
	fields, _ := r.ErrorDetails()["fields"].([]any)
	for _, f := range fields {
		if m, _ := f.(map[string]any); m["message"] == "" || m["message"] == nil {
			t.Fatalf("field problem without message: %v", f)
		}
	}
}

func sameSet(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// wantRateHeaders checks that a /v1 answer carries the RateLimit-* headers.
func wantRateHeaders(t *testing.T, r *testkit.Response) {
	t.Helper()
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.Header.Get(h) == "" {
			t.Fatalf("answer %d has no %s header", r.Status, h)
		}
	}
}

func sandboxScope(tn testkit.Tenant) remit.Scope {
	return remit.Scope{OrganizationID: tn.OrganizationID, Environment: remit.Sandbox, MerchantAccountID: tn.Sandbox}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clockNow reads the sandbox clock of the merchant account the options name.
func clockNow(t *testing.T, e *testkit.Env, opts ...testkit.Opt) time.Time {
	t.Helper()
	r := e.Must(200, "GET", clockPath, nil, opts...)
	now, err := time.Parse(time.RFC3339Nano, r.Data()["now"].(string))
	if err != nil {
		t.Fatalf("clock now: %v", err)
	}
	return now
}

// newSandboxAccount adds a second approved sandbox merchant account to the tenant's organization.
func newSandboxAccount(t *testing.T, e *testkit.Env, tn testkit.Tenant) string {
	t.Helper()
	now := e.Clock.Now()
	m := remit.MerchantAccount{ID: remit.NewID("ma"), OrganizationID: tn.OrganizationID, Environment: remit.Sandbox,
		ExternalRef: "second-" + randomHex(4), DisplayName: "Second", LegalEntityType: "corporation", Country: "US",
		MerchantMode: "direct", DefaultCurrency: "USD", Status: remit.MerchantApproved, CreatedAt: now, UpdatedAt: now}
	if err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		return tx.CreateMerchantAccount(ctx, m)
	}); err != nil {
		t.Fatalf("create merchant account: %v", err)
	}
	return m.ID
}

func TestSmoke(t *testing.T) {
	runFoundation(t, func(t *testing.T, e *testkit.Env) {
		r := e.Must(200, "GET", clockPath, nil)
		if r.Data()["object"] != "test_clock" {
			t.Fatalf("got %s", r.Body)
		}
		r = e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("a1"))
		r2 := e.Must(201, "POST", advancePath, nil, testkit.Key("a1"), testkit.Raw([]byte(`{"seconds": 60.0}`), "application/json"))
		if r2.Header.Get("Idempotent-Replayed") != "true" || string(r2.Body) != string(r.Body) {
			t.Fatalf("no replay: %s", r2.Body)
		}
		e.Must(409, "POST", advancePath, map[string]any{"seconds": 61}, testkit.Key("a1"))
		e.Must(501, "POST", "/v1/prices", validPrice())
	})
}

// TestErrorTable walks the status/code table of docs/api-conventions.md "Errors" for every row the foundation
// reaches (429 is proven in foundation_ratelimit_test.go, 409 in foundation_idempotency_test.go as
// well as here).
func TestErrorTable(t *testing.T) {
	runFoundation(t, func(t *testing.T, e *testkit.Env) {
		jsonCT := "application/json"

		// 400: malformed JSON, a body that is not a JSON object, a content type other than JSON.
		for _, c := range []struct {
			body, ct string
		}{
			{`{"priceId":`, jsonCT},
			{`{"priceId":"p"} trailing`, jsonCT},
			{`[{"priceId":"p"}]`, jsonCT},
			{`[]`, jsonCT},
			{`"price"`, jsonCT},
			{`42`, jsonCT},
			{`null`, jsonCT},
			{`{"priceId":"price_1","productId":"prod_1","name":"Pro","priceType":"free","currency":"USD"}`, "text/plain"},
			{`priceId=price_1&productId=prod_1`, "application/x-www-form-urlencoded"},
			{`{"priceId":"price_1"}`, "multipart/form-data; boundary=x"},
			{`{"priceId":"price_1"}`, "application/json; charset"}, // unparseable media type
		} {
			r := e.Do("POST", "/v1/prices", nil, testkit.Raw([]byte(c.body), c.ct))
			wantError(t, e, r, 400, "bad_request")
			wantRateHeaders(t, r)
		}
		// A JSON body with a JSON content type that has parameters or a +json suffix is accepted.
		wantError(t, e, e.Do("POST", "/v1/prices", validPrice(), testkit.Header("Content-Type", "application/json; charset=utf-8")), 501, "not_implemented")
		wantError(t, e, e.Do("POST", "/v1/prices", validPrice(), testkit.Header("Content-Type", "application/merge-patch+json")), 501, "not_implemented")
		// A missing Content-Type is read as JSON (docs/architecture.md).
		wantError(t, e, e.Do("POST", "/v1/prices", nil, testkit.Raw([]byte(`{"priceId":"price_1","productId":"prod_1","name":"Pro","priceType":"free","currency":"USD"}`), "")), 501, "not_implemented")

		// 401: no key.
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.APIKey("")), 401, "unauthorized")

		// 403: a merchant account the key cannot act for.
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.Scope("sandbox", e.Tenant.Production)), 403, "forbidden")

		// 404: unknown routes, inside and outside /v1, answer the JSON envelope.
		for _, p := range []string{"/v1/nothing-here", "/v1/prices/price_1/unknown", "/nothing", "/v2/prices"} {
			r := e.Do("GET", p, nil, testkit.NoScope())
			obj := wantError(t, e, r, 404, "not_found")
			if !strings.Contains(obj["message"].(string), "No route") {
				t.Fatalf("%s: not the unknown-route answer: %s", p, r.Body)
			}
		}

		// 405: a known path with another method, with Allow.
		for _, c := range []struct{ method, path, allow string }{
			{"DELETE", "/v1/prices", "GET, POST"},
			{"GET", "/v1/usage-events/ev_1/void", "POST"},
			{"PUT", clockPath, "GET"},
			{"GET", advancePath, "POST"},
			{"DELETE", "/v1/invoices/inv_1", "GET, PATCH"},
		} {
			r := e.Do(c.method, c.path, nil)
			wantError(t, e, r, 405, "bad_request")
			if r.Header.Get("Allow") != c.allow {
				t.Fatalf("%s %s: Allow %q, want %q", c.method, c.path, r.Header.Get("Allow"), c.allow)
			}
		}

		// 409: an Idempotency-Key reused with another body.
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 1}, testkit.Key("table-409"))
		obj := wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 2}, testkit.Key("table-409")), 409, "conflict")
		if d, _ := obj["details"].(map[string]any); d["reason"] != "idempotency_key_reused" {
			t.Fatalf("409 details %v", obj["details"])
		}

		// 413: a body over 1 MiB is bad_request; exactly 1 MiB is read (and here answers 501).
		valid := []byte(`{"priceId":"price_1","productId":"prod_1","name":"Pro","priceType":"free","currency":"USD"}`)
		atLimit := append(slices.Clone(valid), bytes.Repeat([]byte(" "), 1<<20-len(valid))...)
		wantError(t, e, e.Do("POST", "/v1/prices", nil, testkit.Raw(atLimit, jsonCT)), 501, "not_implemented")
		r := e.Do("POST", "/v1/prices", nil, testkit.Raw(append(atLimit, ' '), jsonCT))
		wantError(t, e, r, 413, "bad_request")
		wantRateHeaders(t, r)

		// 422: see TestValidationListsEveryProblem.
		wantError(t, e, e.Do("POST", "/v1/prices", map[string]any{}), 422, "validation_failure")

		// 501: an operation of the contract without a handler answers after auth and validation.
		r = e.Do("POST", "/v1/prices", validPrice())
		wantError(t, e, r, 501, "not_implemented")
		wantRateHeaders(t, r)
		wantError(t, e, e.Do("GET", "/v1/invoices/inv_1", nil), 501, "not_implemented")
	})
}

// TestPipelineOrder proves the order of checks: 401 before everything, 403 (scope) before body
// validation, 400 (parse) before 422, 422 before 501.
func TestPipelineOrder(t *testing.T) {
	runFoundation(t, func(t *testing.T, e *testkit.Env) {
		other := e.NewTenant("Other Org", false)
		bad := map[string]any{"priceType": "nope"}
		// No key: 401 whatever else is wrong.
		wantError(t, e, e.Do("POST", "/v1/prices", bad, testkit.APIKey("")), 401, "unauthorized")
		wantError(t, e, e.Do("POST", "/v1/prices", nil, testkit.APIKey(""), testkit.Raw([]byte("{"), "text/plain")), 401, "unauthorized")
		wantError(t, e, e.Do("POST", "/v1/prices", bad, testkit.APIKey(""), testkit.NoScope()), 401, "unauthorized")
		// Another organization's account: 403 before the body is looked at.
		wantError(t, e, e.Do("POST", "/v1/prices", bad, testkit.Scope("sandbox", other.Sandbox)), 403, "forbidden")
		wantError(t, e, e.Do("POST", "/v1/prices", nil, testkit.Scope("sandbox", other.Sandbox), testkit.Raw([]byte("{"), "application/json")), 403, "forbidden")
		// Malformed JSON: 400 even when the query is broken too.
		wantError(t, e, e.Do("POST", "/v1/prices", nil, testkit.NoScope(), testkit.Raw([]byte("{"), "application/json")), 400, "bad_request")
		// Invalid body: 422, not 501.
		wantError(t, e, e.Do("POST", "/v1/prices", bad), 422, "validation_failure")
		// An empty body counts as {} and is validated as such.
		r := e.Do("POST", "/v1/prices", nil, testkit.Raw([]byte(""), "application/json"))
		wantProblems(t, e, r, "body:priceId:required", "body:productId:required", "body:name:required", "body:priceType:required", "body:currency:required")
	})
}

// TestValidationListsEveryProblem: a 422 lists every problem with its full field path, location
// and reason.
func TestValidationListsEveryProblem(t *testing.T) {
	runFoundation(t, func(t *testing.T, e *testkit.Env) {
		// A price body with four problems gives four entries.
		r := e.Do("POST", "/v1/prices", map[string]any{
			"priceId": "bad id!", "name": "Pro", "priceType": "weekly", "currency": "USD", "unitAmount": -1,
		})
		wantProblems(t, e, r, "body:priceId:invalid_format", "body:productId:required", "body:priceType:invalid_enum", "body:unitAmount:out_of_range")
		if msg := r.JSON()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "4") {
			t.Fatalf("message does not count the problems: %q", msg)
		}

		// An unknown body field is named; free-form keys inside metadata are allowed, but their
		// values are checked with the full path.
		body := validPrice()
		body["colour"] = "red"
		r = e.Do("POST", "/v1/prices", body)
		wantProblems(t, e, r, "body:colour:unknown_field")
		if msg := r.JSON()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "colour") {
			t.Fatalf("unknown field not named in the message: %q", msg)
		}
		body = validPrice()
		body["metadata"] = map[string]any{"anything": "goes", "count": 5}
		wantProblems(t, e, e.Do("POST", "/v1/prices", body), "body:metadata.count:invalid_type")
		body["metadata"] = map[string]any{"anything": "goes"}
		wantError(t, e, e.Do("POST", "/v1/prices", body), 501, "not_implemented")
		// Metadata: at most 50 keys, keys up to 40 characters, string values up to 500.
		meta := map[string]any{strings.Repeat("k", 40): strings.Repeat("v", 500), strings.Repeat("é", 40): "x"}
		for i := len(meta); i < 50; i++ {
			meta[fmt.Sprintf("key%d", i)] = "v"
		}
		body["metadata"] = meta
		wantError(t, e, e.Do("POST", "/v1/prices", body), 501, "not_implemented")
		meta["one_too_many"] = "v"
		wantProblems(t, e, e.Do("POST", "/v1/prices", body), "body:metadata:too_many_keys")
		body["metadata"] = map[string]any{strings.Repeat("k", 41): "v", strings.Repeat("é", 41): "v", "ok": strings.Repeat("v", 501)}
		body["unitAmount"] = -1
		wantProblems(t, e, e.Do("POST", "/v1/prices", body), "body:metadata:invalid_key", "body:metadata.ok:invalid_length", "body:unitAmount:out_of_range")
		delete(body, "unitAmount")

		// Nested fields carry their full path.
		wantProblems(t, e, e.Do("POST", "/v1/quotes", map[string]any{
			"orderType": "one_off", "customerId": "cus_1", "billingAccountId": "ba_1", "currency": "USD",
			"lines": []any{
				map[string]any{"priceId": "price_1"},
				map[string]any{"priceId": "", "quantity": 0, "extra": 1},
				map[string]any{"unitAmount": -5, "metadata": map[string]any{strings.Repeat("m", 41): "v"}},
			},
		}), "body:lines[1].priceId:invalid_length", "body:lines[1].quantity:out_of_range", "body:lines[1].extra:unknown_field",
			"body:lines[2].priceId:required", "body:lines[2].unitAmount:out_of_range", "body:lines[2].metadata:unknown_field")
		// ... metadata too, where the contract has it (a credit note line).
		wantProblems(t, e, e.Do("POST", "/v1/credit-notes", map[string]any{
			"invoiceId": "inv_1", "reason": "other",
			"lines": []any{
				map[string]any{"description": "a", "amount": 1},
				map[string]any{"description": "b", "amount": 0, "metadata": map[string]any{strings.Repeat("m", 41): "v"}},
			},
		}), "body:lines[1].amount:out_of_range", "body:lines[1].metadata:invalid_key")

		// Types and bounds.
		wantProblems(t, e, e.Do("POST", "/v1/prices", map[string]any{
			"priceId": "p", "productId": "x", "name": "", "priceType": "free", "currency": "USD",
			"billingIntervalCount": 0, "unitAmount": "12",
		}), "body:name:invalid_length", "body:billingIntervalCount:out_of_range", "body:unitAmount:invalid_type")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 0}), "body:seconds:out_of_range")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 1.5}), "body:seconds:invalid_type")
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"to": "tomorrow"}), "body:to:invalid_format")

		// Missing and invalid query parameters are reported with location query, together with
		// the body's problems.
		wantProblems(t, e, e.Do("GET", clockPath, nil, testkit.NoScope()), "query:environment:required", "query:merchantAccountId:required")
		wantProblems(t, e, e.Do("POST", "/v1/prices", map[string]any{"priceId": "p", "productId": "x", "name": "n", "priceType": "free"}, testkit.NoScope()),
			"query:environment:required", "query:merchantAccountId:required", "body:currency:required")
		wantProblems(t, e, e.Do("GET", clockPath+"?environment=staging&merchantAccountId="+e.Tenant.Sandbox, nil, testkit.NoScope()),
			"query:environment:invalid_enum")
		wantProblems(t, e, e.Do("GET", clockPath+"?environment=sandbox&merchantAccountId=", nil, testkit.NoScope()),
			"query:merchantAccountId:invalid_length")
		wantProblems(t, e, e.Do("GET", clockPath+"?merchantAccountId="+e.Tenant.Sandbox, nil, testkit.NoScope()),
			"query:environment:required")

		// Headers: an Idempotency-Key over 255 characters.
		wantProblems(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 1}, testkit.Key(strings.Repeat("k", 256))),
			"header:Idempotency-Key:invalid_length")
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 1}, testkit.Key(strings.Repeat("k", 255)))
	})
}

// TestAuthMatrix: every way a key can fail, and every way a scope can.
func TestAuthMatrix(t *testing.T) {
	runFoundation(t, func(t *testing.T, e *testkit.Env) {
		ctx := context.Background()
		ok := func(opts ...testkit.Opt) { t.Helper(); e.Must(200, "GET", clockPath, nil, opts...) }
		unauthorized := func(opts ...testkit.Opt) {
			t.Helper()
			r := e.Do("GET", clockPath, nil, opts...)
			wantError(t, e, r, 401, "unauthorized")
			if r.Header.Get("RateLimit-Remaining") != "" {
				t.Fatalf("a 401 consumed the rate limit of some key")
			}
		}
		forbidden := func(opts ...testkit.Opt) {
			t.Helper()
			wantError(t, e, e.Do("GET", clockPath, nil, opts...), 403, "forbidden")
		}

		ok()
		ok(testkit.APIKey(""), testkit.Header("Authorization", "bearer "+e.Tenant.APIKey)) // the scheme is case-insensitive

		// 401: no key, another scheme, malformed keys, an unknown key, a wrong secret.
		unauthorized(testkit.APIKey(""))
		unauthorized(testkit.APIKey(""), testkit.Header("Authorization", "Basic "+e.Tenant.APIKey))
		unauthorized(testkit.APIKey(""), testkit.Header("Authorization", e.Tenant.APIKey))
		unauthorized(testkit.APIKey(""), testkit.Header("Authorization", "Bearer"))
		for _, k := range []string{"nope", "rk_", "rk_abc", "rk_abc.short", "sk_" + strings.TrimPrefix(e.Tenant.APIKey, "rk_"),
			e.Tenant.APIKey + "0", e.Tenant.APIKey[:len(e.Tenant.APIKey)-1]} {
			unauthorized(testkit.APIKey(k))
		}
		id, _, _ := strings.Cut(e.Tenant.APIKey, ".")
		unauthorized(testkit.APIKey("rk_" + randomHex(13) + "." + randomHex(32))) // right shape, unknown ID
		unauthorized(testkit.APIKey(id + "." + randomHex(32)))                    // known ID, wrong secret

		// A revoked key.
		keyID, key, err := e.App.Access.CreateAPIKey(ctx, e.Tenant.OrganizationID, []remit.Environment{remit.Sandbox, remit.Production})
		if err != nil {
			t.Fatal(err)
		}
		ok(testkit.APIKey(key))
		if err := e.App.Access.RevokeAPIKey(ctx, keyID); err != nil {
			t.Fatal(err)
		}
		unauthorized(testkit.APIKey(key))
		// The revoked key is also refused on writes, with or without an Idempotency-Key.
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 1}, testkit.APIKey(key), testkit.Key("revoked")), 401, "unauthorized")

		// 403: a key allowed only in the sandbox acting in production.
		_, sandboxKey, err := e.App.Access.CreateAPIKey(ctx, e.Tenant.OrganizationID, []remit.Environment{remit.Sandbox})
		if err != nil {
			t.Fatal(err)
		}
		ok(testkit.APIKey(sandboxKey))
		forbidden(testkit.APIKey(sandboxKey), testkit.Production())
		wantError(t, e, e.Do("POST", "/v1/prices", validPrice(), testkit.APIKey(sandboxKey), testkit.Production()), 403, "forbidden")
		// The full key is allowed there (the clock itself is sandbox-only: 403 from the handler).
		wantError(t, e, e.Do("POST", "/v1/prices", validPrice(), testkit.Production()), 501, "not_implemented")

		// 403: another organization's account, in both environments, and an account that does
		// not exist (the same answer, so nothing is learned about other organizations).
		other := e.NewTenant("Other Org", false)
		forbidden(testkit.Scope("sandbox", other.Sandbox))
		forbidden(testkit.Scope("production", other.Production))
		forbidden(testkit.Scope("sandbox", "ma_doesnotexist"))
		// ... and the other organization's key cannot reach ours.
		forbidden(testkit.APIKey(other.APIKey), testkit.Scope("sandbox", e.Tenant.Sandbox))
		ok(testkit.As(other))

		// 403: an account of the same organization that lives in the other environment.
		forbidden(testkit.Scope("sandbox", e.Tenant.Production))
		forbidden(testkit.Scope("production", e.Tenant.Sandbox))

		// 422: missing or invalid environment / merchantAccountId, location query.
		wantProblems(t, e, e.Do("GET", clockPath+"?environment=live&merchantAccountId="+e.Tenant.Sandbox, nil, testkit.NoScope()), "query:environment:invalid_enum")
		wantProblems(t, e, e.Do("GET", clockPath+"?environment=sandbox", nil, testkit.NoScope()), "query:merchantAccountId:required")
	})
}

// TestErrorsGuide: GET /docs/errors has a section for every code docsUrl links to.
func TestErrorsGuide(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		res, err := e.Server.Client().Get(e.Server.URL + "/docs/errors")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		page, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /docs/errors: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		for _, c := range []remit.Code{remit.EBadRequest, remit.EUnauthorized, remit.EForbidden, remit.ENotFound, remit.EConflict,
			remit.EInvalid, remit.ERateLimited, remit.ENotImplemented, remit.EInternal} {
			if !bytes.Contains(page, []byte(`id="`+string(c)+`"`)) {
				t.Errorf("errors guide has no anchor #%s", c)
			}
		}
	})
}
