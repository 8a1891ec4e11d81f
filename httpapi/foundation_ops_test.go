package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/httpapi"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// get fetches an operational route (outside the /v1 envelope).
func get(t *testing.T, e *testkit.Env, path string) (*http.Response, []byte) {
	t.Helper()
	res, err := e.Server.Client().Get(e.Server.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.Header.Get("Request-Id") == "" {
		t.Fatalf("GET %s: no Request-Id header", path)
	}
	return res, b
}

// TestOperationalRoutes: health, readiness, metrics, the contract and its mounting.
func TestOperationalRoutes(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		res, body := get(t, e, "/healthz")
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"ok"`)) {
			t.Fatalf("/healthz: %d %s", res.StatusCode, body)
		}
		res, body = get(t, e, "/readyz")
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"ready"`)) || !bytes.Contains(body, []byte(string(e.Store))) {
			t.Fatalf("/readyz: %d %s", res.StatusCode, body)
		}

		e.Must(200, "GET", clockPath, nil)
		e.Do("GET", "/v1/nowhere", nil)
		res, body = get(t, e, "/metrics")
		if res.StatusCode != 200 {
			t.Fatalf("/metrics: %d", res.StatusCode)
		}
		for _, want := range []string{
			`remit_http_requests_total{route="GET /v1/test-helpers/clock",status="200"} 1`,
			`remit_http_requests_total{route="/",status="404"} 1`, // unknown routes share one label
			`remit_http_request_duration_seconds_bucket{route="GET /v1/test-helpers/clock"`,
			"go_goroutines",
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Fatalf("/metrics lacks %s:\n%s", want, body)
			}
		}

		res, body = get(t, e, "/openapi.yaml")
		if res.StatusCode != 200 || !bytes.Equal(body, api.Document) || !strings.Contains(res.Header.Get("Content-Type"), "yaml") {
			t.Fatalf("/openapi.yaml: %d %s, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(body))
		}

		// Every operation of the document is mounted; the seed's 20 operations among them.
		spec, err := api.Spec()
		if err != nil {
			t.Fatal(err)
		}
		mounted := e.Remit.Handler.Operations()
		var inDoc []string
		for _, item := range spec.Paths.Map() {
			for _, op := range item.Operations() {
				inDoc = append(inDoc, op.OperationID)
			}
		}
		var ids []string
		for id := range mounted {
			ids = append(ids, id)
		}
		if !sameSet(ids, inDoc) {
			t.Fatalf("mounted %v\ndocument %v", ids, inDoc)
		}
		for id := range seedOperations {
			if _, ok := mounted[id]; !ok {
				t.Errorf("seed operation %s is not mounted", id)
			}
		}
		if !mounted["getTestClock"] || !mounted["advanceTestClock"] {
			t.Fatal("the clock handlers are not registered")
		}
	})
}

// TestReadinessFollowsTheStore: /readyz is 503 once the store is unreachable, while /healthz
// (the process) stays up.
func TestReadinessFollowsTheStore(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		if res, _ := get(t, e, "/readyz"); res.StatusCode != 200 {
			t.Fatalf("/readyz before: %d", res.StatusCode)
		}
		if err := e.Remit.DB.Close(); err != nil {
			t.Fatal(err)
		}
		res, body := get(t, e, "/readyz")
		if res.StatusCode != 503 || bytes.Contains(body, []byte("closed")) {
			t.Fatalf("/readyz after closing the store: %d %s", res.StatusCode, body)
		}
		if res, _ := get(t, e, "/healthz"); res.StatusCode != 200 {
			t.Fatalf("/healthz: %d", res.StatusCode)
		}
		// API requests fail with a 500 that leaks nothing.
		r := e.Do("GET", clockPath, nil)
		obj := wantError(t, e, r, 500, "internal_error")
		if m := obj["message"].(string); strings.Contains(m, "sql") || strings.Contains(m, "closed") {
			t.Fatalf("500 leaks internals: %s", m)
		}
	})
}

// seedOperations are the seed's 20 operations with their method, path and success status.
var seedOperations = map[string]struct {
	method, path string
	status       int
}{
	"resendEvent":                     {"POST", "/v1/events/{eventId}/resend", 200},
	"createMerchantAccount":           {"POST", "/v1/merchant-accounts", 200},
	"submitMerchantOnboarding":        {"POST", "/v1/merchant-accounts/{merchantAccountId}/onboarding/submit", 200},
	"createPrice":                     {"POST", "/v1/prices", 200},
	"grantCustomerBalance":            {"POST", "/v1/customers/{customerId}/balance/grant", 201},
	"expireCustomerBalance":           {"POST", "/v1/customers/{customerId}/balance/expire", 201},
	"createPaymentMethodSetupSession": {"POST", "/v1/customers/{customerId}/payment-method-setup", 201},
	"finalizeInvoice":                 {"POST", "/v1/invoices/{invoiceId}/finalize", 200},
	"refreshInvoice":                  {"POST", "/v1/invoices/{invoiceId}/refresh", 200},
	"finalizeTaxTransaction":          {"POST", "/v1/tax-transactions/{taxTransactionId}/finalize", 200},
	"archiveUsageThreshold":           {"POST", "/v1/usage-thresholds/{thresholdId}/archive", 200},
	"createQuote":                     {"POST", "/v1/quotes", 201},
	"createCreditNote":                {"POST", "/v1/credit-notes", 200},
	"customerPortalPut":               {"PUT", "/customer-portal/{tail}", 200},
	"listSettlements":                 {"GET", "/v1/merchant-accounts/{merchantAccountId}/settlements", 200},
	"getPayoutProfile":                {"GET", "/v1/merchant-accounts/{merchantAccountId}/payout-profile", 200},
	"listPaymentReceipts":             {"GET", "/v1/payment-receipts", 200},
	"getCustomerBalance":              {"GET", "/v1/customers/{customerId}/balance", 200},
	"listTaxTransactions":             {"GET", "/v1/tax-transactions", 200},
	"getInvoice":                      {"GET", "/v1/invoices/{invoiceId}", 200},
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestContract: code and document agree. httpapi.New refuses a handler for an operationId the
// document lacks, so a server that starts proves the first direction; every path of the document
// answers its declared method (never the catch-all 404 or a 405); success statuses come from the
// document, which keeps the seed's.
func TestContract(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		srv, err := httpapi.New(wire.Engine(e.App), e.App.Log, nil, httpapi.Config{PublicURL: "https://remit.example"})
		if err != nil {
			t.Fatalf("httpapi.New: %v", err)
		}
		// The new server serves (without a limiter, so without RateLimit headers).
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", clockPath+"?environment=sandbox&merchantAccountId="+e.Tenant.Sandbox, nil)
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("httpapi.New server: %d %s", rec.Code, rec.Body)
		}
		rec = httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/nothing", nil))
		if !strings.Contains(rec.Body.String(), `"docsUrl":"https://remit.example/docs/errors#not_found"`) {
			t.Fatalf("docsUrl does not use the configured public URL: %s", rec.Body)
		}

		spec, err := api.Spec()
		if err != nil {
			t.Fatal(err)
		}
		implemented := e.Remit.Handler.Operations()
		paths := spec.Paths.InMatchingOrder()
		sort.Strings(paths)
		for _, path := range paths {
			item := spec.Paths.Value(path)
			for method, op := range item.Operations() {
				concrete := pathParam.ReplaceAllStringFunc(path, func(p string) string {
					if p == "{tail}" {
						return "setup-sessions/x/complete"
					}
					return "x"
				})
				var body any
				if op.RequestBody != nil {
					body = map[string]any{}
				}
				// Without credentials: bearer operations are 401 before anything else.
				r := e.Do(method, concrete, body, testkit.APIKey(""))
				notCatchAll(t, method, path, r)
				bearer := op.Security == nil || hasBearer(*op.Security)
				if bearer && r.Status != 401 {
					t.Errorf("%s %s without a key: %d, want 401", method, path, r.Status)
				}
				// With a key and scope: the operation (501 until its area lands, 422 for the
				// empty body, or its own answer).
				r = e.Do(method, concrete, body)
				notCatchAll(t, method, path, r)
				if !implemented[op.OperationID] && r.Status != 501 && r.Status != 422 {
					t.Errorf("%s %s (%s, no handler): %d, want 501 or 422: %s", method, path, op.OperationID, r.Status, r.Body)
				}

				// Success statuses: the document keeps the seed's, and extension routes that
				// create answer 201 or 200.
				codes := successCodes(op.Responses.Map())
				if len(codes) != 1 {
					t.Errorf("%s %s declares success statuses %v, want exactly one", method, path, codes)
				}
				if s, ok := seedOperations[op.OperationID]; ok {
					if s.method != method || s.path != path || len(codes) == 0 || codes[0] != s.status {
						t.Errorf("%s: document has %s %s %v, seed has %s %s %d", op.OperationID, method, path, codes, s.method, s.path, s.status)
					}
				}
			}
		}
		// The implemented operations answer the document's success status.
		e.Must(200, "GET", clockPath, nil)
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 1})
	})
}

func hasBearer(reqs openapi3.SecurityRequirements) bool {
	for _, r := range reqs {
		if _, ok := r["bearerAuth"]; ok {
			return true
		}
	}
	return false
}

func notCatchAll(t *testing.T, method, path string, r *testkit.Response) {
	t.Helper()
	if r.Status == 405 || r.Status == 404 && strings.Contains(string(r.Body), "No route") {
		t.Errorf("%s %s is not routed: %d %s", method, path, r.Status, r.Body)
	}
}

func successCodes[V any](responses map[string]V) []int {
	var out []int
	for code := range responses {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// TestGracefulShutdown: Serve with a cancelled context stops accepting connections, lets the
// request in flight finish with its answer, and returns nil.
func TestGracefulShutdown(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			cfg := wire.Defaults()
			cfg.RateLimit, cfg.RateBurst = 1000, 1000
			cfg.SchedulerInterval = time.Hour // keep the scheduler away from the store during the test
			e := testkit.Start(t, s, testkit.Options{Config: &cfg})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- e.Remit.Serve(ctx, ln) }()

			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			base := "http://" + ln.Addr().String()
			q := "?environment=sandbox&merchantAccountId=" + url.QueryEscape(e.Tenant.Sandbox)
			send := func(method, path, body string) (int, string, error) {
				req, _ := http.NewRequest(method, base+path+q, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				res, err := client.Do(req)
				if err != nil {
					return 0, "", err
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b), nil
			}
			if status, body, err := send("GET", clockPath, ""); err != nil || status != 200 {
				t.Fatalf("before shutdown: %d %s %v", status, body, err)
			}

			// Hold the merchant account (the SQLite writer; the row lock on PostgreSQL), so that
			// an advance stays in flight until released.
			release, holderPID := holdMerchant(t, e, e.Tenant.Sandbox)
			type answer struct {
				status int
				body   string
				err    error
			}
			inFlight := make(chan answer, 1)
			go func() {
				status, body, err := send("POST", advancePath, `{"seconds":3600}`)
				inFlight <- answer{status, body, err}
			}()
			// Wait until the advance is blocked on the held account.
			poll(t, "the advance to block on the held merchant account", func() bool {
				if s == testkit.SQLite {
					// The held transaction occupies the group committer; the advance queues behind it.
					return e.App.DB.QueuedWrites() > 0
				}
				var n int
				_ = e.App.DB.SQL().QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holderPID).Scan(&n)
				return n > 0
			})

			// Shut down: new connections are refused while the request is in flight.
			cancel()
			poll(t, "the listener to close", func() bool {
				c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
				if err == nil {
					c.Close()
					return false
				}
				return true
			})
			select {
			case err := <-served:
				t.Fatalf("Serve returned while a request was in flight: %v", err)
			case a := <-inFlight:
				t.Fatalf("the in-flight request ended before it was released: %+v", a)
			default:
			}

			// Release: the in-flight request finishes with its answer, then Serve returns nil.
			release()
			a := <-inFlight
			if a.err != nil || a.status != 201 || !strings.Contains(a.body, `"test_clock"`) {
				t.Fatalf("in-flight request: %d %s %v", a.status, a.body, a.err)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Fatalf("Serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Serve did not return after the last request finished")
			}
			if _, _, err := send("GET", clockPath, ""); err == nil || !isConnRefused(err) {
				t.Fatalf("a request after shutdown: %v", err)
			}
		})
	}
}

// holdMerchant opens a transaction that locks the merchant account (on SQLite: holds the single
// writer) until release is called, and returns the PostgreSQL backend pid of the holder.
func holdMerchant(t *testing.T, e *testkit.Env, merchantAccountID string) (release func(), pid int) {
	t.Helper()
	held, done, holderErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		holderErr <- e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			if e.Store == testkit.Postgres {
				if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
					return err
				}
			}
			if _, err := tx.GetMerchantAccount(ctx, merchantAccountID, store.Locked); err != nil {
				return err
			}
			close(held)
			<-done
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-holderErr:
		t.Fatalf("hold merchant account: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			if err := <-holderErr; err != nil {
				t.Errorf("holder: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release, pid
}

// TestReadinessDuringLongWrite: a long write transaction does not make the store look
// unreachable.
func TestReadinessDuringLongWrite(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		release, _ := holdMerchant(t, e, e.Tenant.Sandbox)
		defer release()
		res, body := get(t, e, "/readyz")
		if res.StatusCode != 200 {
			t.Fatalf("/readyz during a write: %d %s", res.StatusCode, body)
		}
		// Reads are served meanwhile too.
		e.Must(200, "GET", clockPath, nil)
	})
}

func isConnRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// poll waits for cond, checking it every few milliseconds, for at most 10 seconds.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
