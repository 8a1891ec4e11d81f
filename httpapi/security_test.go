package httpapi_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
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

// TestTextCharacters: control characters and bidirectional overrides and isolates are refused in
// every text field of a body, metadata keys and values included, with one 422 that names each
// field (invalid_characters) beside the contract's own problems; multi-line free text takes tab
// and line breaks, single-line fields do not; the bidirectional marks pass (docs/security.md,
// "Input characters"). Nothing refused is stored.
func TestTextCharacters(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := e.Must(422, "POST", "/v1/customers", map[string]any{
			"customerId": "cus_spoof", "name": "Acme \u202eCorp", "email": "ops@acme.example",
			"address":  map[string]any{"line1": "1 Main St\u0007", "line2": "Suite\n5", "city": "Spring\u2066field", "country": "US", "postalCode": "12345"},
			"metadata": map[string]any{"note": "a\u0085b", "ok": "two\nlines", "k\u202eey": "v"},
			"unknown":  1,
		})
		want := []string{"body:name:invalid_characters", "body:address.line1:invalid_characters", "body:address.line2:invalid_characters",
			"body:address.city:invalid_characters", "body:metadata.note:invalid_characters", "body:metadata.key:invalid_characters"}
		fe := r.FieldErrors()
		for _, w := range want {
			if !slices.Contains(fe, w) {
				t.Errorf("customer: %v lacks %s", fe, w)
			}
		}
		if !slices.ContainsFunc(fe, func(f string) bool { return strings.HasPrefix(f, "body:unknown:") }) {
			t.Errorf("customer: the contract's problem is not listed beside the characters: %v", fe)
		}
		if slices.Contains(fe, "body:metadata.ok:invalid_characters") {
			t.Errorf("a metadata value with a line break was refused: %v", fe)
		}
		if strings.ContainsRune(string(r.Body), '\u202e') {
			t.Errorf("the answer repeats the override: %s", r.Body)
		}
		e.Must(404, "GET", "/v1/customers/cus_spoof", nil)

		// Multi-line free text takes tab, CR and LF, never the rest; a single-line field takes none.
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://93.184.216.34/hook",
			"description": "Orders\r\n\tand refunds", "metadata": map[string]any{"owner": "ops\tteam"}})
		for desc, field := range map[string]string{"a\u202eb": "description", "a\u0000b": "description", "a\u001bb": "description", "a\u009bb": "description"} {
			fe := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://93.184.216.34/hook", "description": desc}).FieldErrors()
			if !slices.Contains(fe, "body:"+field+":invalid_characters") {
				t.Errorf("description %q: %v", desc, fe)
			}
		}
		for _, name := range []string{"Acme\nCorp", "Acme\tCorp", "Acme\rCorp", "Acme\u2028Corp", "Acme\u007fCorp"} {
			fe := e.Must(422, "POST", "/v1/customers", map[string]any{"customerId": "cus_2", "name": name}).FieldErrors()
			if !slices.Contains(fe, "body:name:invalid_characters") {
				t.Errorf("name %q: %v", name, fe)
			}
		}
		// Right-to-left text with its marks, and any other script, is fine.
		d := e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "cus_rtl", "name": "שלום\u200f 12 \u061cمرحبا\u200e Ünïcødé 🙂"}).Data()
		if d["name"] != "שלום\u200f 12 \u061cمرحبا\u200e Ünïcødé 🙂" {
			t.Errorf("name stored as %q", d["name"])
		}
		// In lines: each line's field is named, beside the contract's problems of the same body.
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_rtl", "customerId": "cus_rtl", "currency": "USD"})
		fe = e.Must(422, "POST", "/v1/invoices", map[string]any{"billingAccountId": "ba_rtl", "lines": []any{
			map[string]any{"description": "ok\nline", "amount": 100},
			map[string]any{"description": "bad\u202eline", "amount": 100, "metadata": map[string]any{"a": "\u2067"}},
		}}).FieldErrors()
		for _, w := range []string{"body:lines[1].description:invalid_characters", "body:lines[1].metadata.a:invalid_characters"} {
			if !slices.Contains(fe, w) {
				t.Errorf("invoice lines: %v lacks %s", fe, w)
			}
		}
		if slices.Contains(fe, "body:lines[0].description:invalid_characters") {
			t.Errorf("invoice lines: the multi-line description is refused: %v", fe)
		}
	})
}

// TestTextFieldsAreTheContracts: the text rule's multi-line fields are the contract's free texts
// (the request fields of up to 5000 characters), and its free maps the contract's maps of strings.
func TestTextFieldsAreTheContracts(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	free, freeMaps, short := map[string]bool{}, map[string]bool{}, map[string]bool{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(r *openapi3.SchemaRef)
	walk = func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		s := r.Value
		seen[s] = true
		for name, p := range s.Properties {
			switch v := p.Value; {
			case v.Type.Is("string") && v.MaxLength != nil && *v.MaxLength == 5000:
				free[name] = true
			case v.Type.Is("string"):
				short[name] = true
			case v.Type.Is("object") && len(v.Properties) == 0 && v.AdditionalProperties.Schema != nil && v.AdditionalProperties.Schema.Value.Type.Is("string"):
				freeMaps[name] = true
			}
			walk(p)
		}
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
			walk(sub)
		}
	}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && !strings.HasPrefix(op.OperationID, "receiveStripe") {
				walk(op.RequestBody.Value.Content.Get("application/json").Schema)
			}
		}
	}
	for _, c := range []struct {
		what       string
		contract   map[string]bool
		code       []string
		notAlsoOne map[string]bool
	}{{"free texts", free, remit.MultilineFields, short}, {"free maps", freeMaps, remit.FreeTextMaps, nil}} {
		if got, want := slices.Sorted(slices.Values(c.code)), slices.Sorted(maps.Keys(c.contract)); !slices.Equal(got, want) {
			t.Errorf("%s: the text rule has %v, the contract %v", c.what, got, want)
		}
		for name := range c.contract {
			if c.notAlsoOne[name] {
				t.Errorf("%s: %s is free text in one request and a single line in another", c.what, name)
			}
		}
	}
}

// TestMetricsToken: with REMIT_METRICS_TOKEN set, GET /metrics answers 401 without the token, with
// another one or another scheme, and the metrics with it (docs/operations.md, "Metrics endpoint").
func TestMetricsToken(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.MetricsToken = "metrics-Zq8wX2"
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		scrape := func(auth string) (*http.Response, string) {
			t.Helper()
			req, _ := http.NewRequest("GET", e.Server.URL+"/metrics", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := e.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res, string(b)
		}
		for _, auth := range []string{"", "Bearer ", "Bearer metrics-Zq8wX", "Bearer metrics-Zq8wX2x", "Basic metrics-Zq8wX2", "metrics-Zq8wX2"} {
			res, body := scrape(auth)
			if res.StatusCode != 401 || strings.Contains(body, "remit_http_requests_total") || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("Authorization %q: %d %q", auth, res.StatusCode, body)
			}
		}
		for _, auth := range []string{"Bearer metrics-Zq8wX2", "bearer  metrics-Zq8wX2 "} {
			if res, body := scrape(auth); res.StatusCode != 200 || !strings.Contains(body, "remit_http_requests_total") {
				t.Errorf("Authorization %q: %d", auth, res.StatusCode)
			}
		}
	})
}

// TestMetricsOwnAddress: with REMIT_METRICS_ADDR set, serve answers GET /metrics there (behind the
// token, when set) and no longer on the API's address.
func TestMetricsOwnAddress(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.SchedulerInterval = time.Hour
	cfg.MetricsAddr = testkit.FreeAddr(t)
	cfg.MetricsToken = "metrics-Zq8wX2"
	e := testkit.Start(t, testkit.SQLite, testkit.Options{Config: &cfg})
	if res, _ := get(t, e, "/metrics"); res.StatusCode != 404 {
		t.Errorf("the API's /metrics: %d, want 404", res.StatusCode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.Remit.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	scrape := func(path, token string) int {
		req, _ := http.NewRequest("GET", "http://"+cfg.MetricsAddr+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode == 200 && !strings.Contains(string(b), "go_goroutines") {
			t.Errorf("metrics: %s", b)
		}
		return res.StatusCode
	}
	testkit.WaitFor(t, 10*time.Second, "the metrics address to answer", func() bool { return scrape("/metrics", "metrics-Zq8wX2") == 200 })
	if got := scrape("/metrics", "wrong"); got != 401 {
		t.Errorf("metrics with a wrong token: %d", got)
	}
	if got := scrape("/v1/events", "metrics-Zq8wX2"); got != 404 {
		t.Errorf("the API on the metrics address: %d", got)
	}
	if res, err := http.Get("http://" + ln.Addr().String() + "/metrics"); err != nil || res.StatusCode != 404 {
		t.Errorf("the served API's /metrics: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}
