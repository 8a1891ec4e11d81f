// Package testkit starts a real Remit (HTTP server, engine, store) for tests: SQLite in a temporary
// folder always, and PostgreSQL too when REMIT_TEST_POSTGRES_URL is set, each test in its own
// schema. Every response a test receives is checked against api/openapi.yaml, so a test fails when
// the code and the contract disagree.
package testkit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// Store is a store kind a test runs against.
type Store string

const (
	SQLite   Store = "sqlite"
	Postgres Store = "postgres"
)

// Stores lists the stores configured for this run: SQLite always, PostgreSQL when
// REMIT_TEST_POSTGRES_URL is set.
func Stores() []Store {
	s := []Store{SQLite}
	if os.Getenv("REMIT_TEST_POSTGRES_URL") != "" {
		s = append(s, Postgres)
	}
	return s
}

// Options adjust a test server.
type Options struct {
	Clock     remit.Clock  // nil: real time
	Config    *wire.Config // nil: defaults with a generous rate limit
	LogOutput io.Writer    // nil: discard (tests that search logs pass a buffer)
	// Engine, if set, adjusts the engine before the server starts (e.g. app.Config.LookupHost).
	Engine func(*app.App)
	// Serial runs the stores' subtests one after another (see RunWith).
	Serial bool
}

// parallel reports whether the stores' subtests may run side by side: not when the options hold
// something both would share (a clock, a log buffer, an engine hook, a processor), nor when asked.
func (o Options) parallel() bool {
	return !o.Serial && o.Clock == nil && o.LogOutput == nil && o.Engine == nil && (o.Config == nil || o.Config.Processor == nil)
}

// Env is a running Remit with one bootstrapped organization.
type Env struct {
	T       testing.TB
	Store   Store
	DBURL   string
	Remit   *wire.Remit
	App     *app.App
	Server  *httptest.Server
	Tenant  Tenant // the organization created at start
	Clock   remit.Clock
	Logs    *SyncBuffer
	checker *contractChecker
	secrets *secretWatch
}

// Tenant is a bootstrapped organization: its key and its two merchant accounts.
type Tenant struct {
	OrganizationID string
	APIKey         string
	APIKeyID       string
	Sandbox        string // merchant account ID
	Production     string
}

// Run runs fn as a subtest on every configured store.
func Run(t *testing.T, fn func(t *testing.T, e *Env)) {
	RunWith(t, Options{}, fn)
}

// RunWith is Run with options. The subtests of the stores run in parallel with each other (each
// has its own server and store; on two cores the PostgreSQL run mostly waits on the server while
// SQLite computes), unless the options share state between them (Options.parallel); fn must not
// change what it shares with the other store's run.
func RunWith(t *testing.T, opts Options, fn func(t *testing.T, e *Env)) {
	t.Helper()
	for _, s := range Stores() {
		t.Run(string(s), func(t *testing.T) {
			if opts.parallel() {
				t.Parallel()
			}
			e := Start(t, s, opts)
			fn(t, e)
		})
	}
}

// NewStoreURL creates an empty store of kind s for t and returns its URL. PostgreSQL stores are a
// fresh schema, dropped when the test ends.
func NewStoreURL(t testing.TB, s Store) string {
	t.Helper()
	switch s {
	case SQLite:
		return "sqlite:" + t.TempDir() + "/remit.db"
	case Postgres:
		base := os.Getenv("REMIT_TEST_POSTGRES_URL")
		if base == "" {
			t.Skip("REMIT_TEST_POSTGRES_URL not set")
		}
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		schema := "t_" + hex.EncodeToString(b)
		admin, err := store.Open(context.Background(), base)
		if err != nil {
			t.Fatalf("postgres: %v", err)
		}
		if _, err := admin.SQL().Exec(`CREATE SCHEMA ` + schema); err != nil {
			t.Fatalf("postgres: create schema: %v", err)
		}
		t.Cleanup(func() {
			_, _ = admin.SQL().Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			admin.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("REMIT_TEST_POSTGRES_URL: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	t.Fatalf("unknown store %q", s)
	return ""
}

// Start starts a server on a new store of kind s and bootstraps one organization.
func Start(t testing.TB, s Store, opts Options) *Env {
	t.Helper()
	return StartOn(t, s, MigratedStoreURL(t, s), opts)
}

// MigratedStoreURL is NewStoreURL with every migration already applied, for tests that start
// servers (which migrate anyway). A SQLite store is a copy of one template migrated once per test
// process: migrating takes about 2 s under the race detector (SQLite re-parses its schema after
// every DDL statement), which every test paid before. A PostgreSQL store is a fresh schema that the
// server migrates.
func MigratedStoreURL(t testing.TB, s Store) string {
	t.Helper()
	if s != SQLite {
		return NewStoreURL(t, s)
	}
	tmpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("sqlite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "remit.db")
	if err := os.WriteFile(path, tmpl, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

// sqliteTemplate is the bytes of a SQLite store with every migration applied, built once.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "remit-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "remit.db")
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+path)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.Close() // the last connection checkpoints the WAL into the file and removes it
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("%s-wal is left after closing the template", path)
	}
	return os.ReadFile(path)
})

// StartOn starts a server on an existing store (several servers may share one).
func StartOn(t testing.TB, s Store, dbURL string, opts Options) *Env {
	t.Helper()
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.OperatorHashCost = 4 // bcrypt.MinCost: a dashboard sign-in under the race detector in milliseconds
	if opts.Config != nil {
		cfg = *opts.Config
	}
	cfg.DatabaseURL = dbURL
	logs := &SyncBuffer{}
	var out io.Writer = logs
	if opts.LogOutput != nil {
		out = io.MultiWriter(logs, opts.LogOutput)
	}
	log := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := httptest.NewUnstartedServer(nil)
	cfg.Addr = srv.Listener.Addr().String()
	cfg.PublicURL = "http://" + cfg.Addr
	r, err := wire.Open(context.Background(), cfg, log, opts.Clock)
	if err != nil {
		t.Fatalf("start remit on %s: %v", s, err)
	}
	if opts.Engine != nil {
		opts.Engine(r.App)
	}
	srv.Config = r.HTTPServer()
	srv.Config.Handler = r.Handler
	srv.Start()
	t.Cleanup(func() { srv.Close(); r.Close() })
	clock := opts.Clock
	if clock == nil {
		clock = remit.SystemClock{}
	}
	e := &Env{T: t, Store: s, DBURL: dbURL, Remit: r, App: r.App, Server: srv, Clock: clock, Logs: logs, checker: checker(t), secrets: &secretWatch{}}
	t.Cleanup(func() { e.secrets.check(t, logs.String()) })
	e.Tenant = e.NewTenant("Acme Test", false)
	return e
}

// NewTenant bootstraps another organization.
func (e *Env) NewTenant(name string, platform bool) Tenant {
	e.T.Helper()
	res, err := e.App.Merchants.Bootstrap(context.Background(), name, platform)
	if err != nil {
		e.T.Fatalf("bootstrap: %v", err)
	}
	e.secrets.add("an API key", res.APIKey)
	if _, secret, ok := strings.Cut(res.APIKey, "."); ok {
		e.secrets.add("an API key's secret", secret)
	}
	return Tenant{OrganizationID: res.OrganizationID, APIKey: res.APIKey, APIKeyID: res.APIKeyID,
		Sandbox: res.MerchantAccounts["sandbox"], Production: res.MerchantAccounts["production"]}
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Data returns the envelope's data object.
func (r *Response) Data() map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// Decode decodes the envelope's data into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("decode envelope: %v\n%s", err, r.Body)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("decode data: %v\n%s", err, r.Body)
	}
}

// ErrorCode returns error.code of an error envelope.
func (r *Response) ErrorCode() string {
	e, _ := r.JSON()["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// ErrorDetails returns error.details of an error envelope.
func (r *Response) ErrorDetails() map[string]any {
	e, _ := r.JSON()["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

// FieldErrors returns error.details.fields as "location:field:reason" strings.
func (r *Response) FieldErrors() []string {
	var out []string
	fields, _ := r.ErrorDetails()["fields"].([]any)
	for _, f := range fields {
		m, _ := f.(map[string]any)
		out = append(out, fmt.Sprintf("%v:%v:%v", m["location"], m["field"], m["reason"]))
	}
	return out
}

// Opt adjusts one request.
type Opt func(*reqOpts)

type reqOpts struct {
	apiKey      *string
	env         string
	merchant    string
	noScope     bool
	headers     http.Header
	rawBody     []byte
	contentType string
}

// Key sets the Idempotency-Key header.
func Key(k string) Opt { return Header("Idempotency-Key", k) }

// Header sets a request header.
func Header(name, value string) Opt {
	return func(o *reqOpts) { o.headers.Set(name, value) }
}

// APIKey authenticates with key instead of the tenant's ("" sends no Authorization header).
func APIKey(key string) Opt { return func(o *reqOpts) { o.apiKey = &key } }

// As acts as tenant t (its key and sandbox account).
func As(t Tenant) Opt {
	return func(o *reqOpts) { k := t.APIKey; o.apiKey = &k; o.merchant = t.Sandbox }
}

// Scope sets the environment and merchantAccountId query parameters.
func Scope(env, merchantAccountID string) Opt {
	return func(o *reqOpts) { o.env, o.merchant = env, merchantAccountID }
}

// Production acts in production with the tenant's production account.
func Production() Opt { return func(o *reqOpts) { o.env = "production"; o.merchant = "" } }

// NoScope sends neither environment nor merchantAccountId.
func NoScope() Opt { return func(o *reqOpts) { o.noScope = true } }

// Raw sends body as is, with content type ct ("" for none).
func Raw(body []byte, ct string) Opt {
	return func(o *reqOpts) { o.rawBody, o.contentType = body, ct }
}

// Do sends a request as the env's tenant in the sandbox (unless opts say otherwise). body is
// marshalled to JSON unless nil. path may carry its own query string.
func (e *Env) Do(method, path string, body any, opts ...Opt) *Response {
	e.T.Helper()
	o := &reqOpts{headers: http.Header{}, env: "sandbox", contentType: "application/json"}
	for _, f := range opts {
		f(o)
	}
	key := e.Tenant.APIKey
	if o.apiKey != nil {
		key = *o.apiKey
	}
	if o.merchant == "" {
		if o.env == "production" {
			o.merchant = e.Tenant.Production
		} else {
			o.merchant = e.Tenant.Sandbox
		}
	}
	u := e.Server.URL + path
	if strings.HasPrefix(path, "/v1/") && !o.noScope {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u += sep + "environment=" + url.QueryEscape(o.env) + "&merchantAccountId=" + url.QueryEscape(o.merchant)
	}
	var rd io.Reader
	var raw []byte
	switch {
	case o.rawBody != nil:
		raw = o.rawBody
	case body != nil:
		var err error
		if raw, err = json.Marshal(body); err != nil {
			e.T.Fatalf("marshal body: %v", err)
		}
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		e.T.Fatalf("new request: %v", err)
	}
	if raw != nil && o.contentType != "" {
		req.Header.Set("Content-Type", o.contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range o.headers {
		req.Header[k] = v
	}
	res, err := e.Server.Client().Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := &Response{Status: res.StatusCode, Header: res.Header, Body: b}
	e.checker.check(e.T, req, r)
	e.secrets.observe(raw, r)
	return r
}

// CheckContract checks an answer to req (sent with reqBody) against api/openapi.yaml, as Do checks
// every answer, for callers that send their own requests: the soak driver (internal/soak), whose
// hundreds of thousands of answers Do would keep for the secrets check. A mismatch fails the test.
func (e *Env) CheckContract(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) {
	e.checker.check(e.T, req, &Response{Status: status, Header: header, Body: body})
}

// Must sends a request and fails the test unless the status is want.
func (e *Env) Must(want int, method, path string, body any, opts ...Opt) *Response {
	e.T.Helper()
	r := e.Do(method, path, body, opts...)
	if r.Status != want {
		e.T.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.Status, want, r.Body)
	}
	return r
}

// AdvanceClock moves the sandbox clock of the env's tenant by seconds.
func (e *Env) AdvanceClock(seconds int64, opts ...Opt) *Response {
	e.T.Helper()
	return e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": seconds}, opts...)
}

// SyncBuffer is a goroutine-safe log buffer.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything logged so far.
func (s *SyncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Race sends the same request n times at once and returns the answers' statuses, in order.
func (e *Env) Race(n int, method, path string, body any, opts ...Opt) []int {
	e.T.Helper()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.Do(method, path, body, opts...).Status
		}()
	}
	wg.Wait()
	return statuses
}

// OnlyOneWins fails the test unless exactly one of statuses is win and every other is lose.
func OnlyOneWins(t testing.TB, statuses []int, win, lose int) {
	t.Helper()
	wins := 0
	for _, s := range statuses {
		switch s {
		case win:
			wins++
		case lose:
		default:
			t.Fatalf("statuses %v: want one %d and the rest %d", statuses, win, lose)
		}
	}
	if wins != 1 {
		t.Fatalf("%d requests won (statuses %v), want exactly one", wins, statuses)
	}
}

// secretWatch sees every request and answer of an Env and its log. Values that are never shown
// (API keys, bank account numbers, tax IDs: docs/reliability.md) must appear in no answer and no log line;
// shown-once secrets (webhook signing secrets, hosted tokens, claim URLs) in no log line. Every
// test that uses testkit is checked when it ends.
type secretWatch struct {
	mu        sync.Mutex
	never     map[string]string // value → what it is
	answers   [][]byte
	shownOnce []string
}

// neverShown are request fields whose values no answer ever carries.
var neverShown = map[string]string{"accountNumber": "a bank account number", "businessTaxId": "a business tax ID", "taxId": "a tax ID"}

func (w *secretWatch) add(what, v string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.never == nil {
		w.never = map[string]string{}
	}
	if len(v) >= 6 {
		w.never[v] = what
	}
}

func (w *secretWatch) observe(request []byte, res *Response) {
	answer := res.Body
	var doc any
	// Values of a request the server accepted (2xx) are what it now holds: those must never come
	// back. A refused request's values may be echoed by its own 404 ("No such ...: 'x'").
	if res.Status/100 == 2 && len(request) > 0 && json.Unmarshal(request, &doc) == nil {
		var walk func(v any, key string)
		walk = func(v any, key string) {
			switch t := v.(type) {
			case map[string]any:
				for k, e := range t {
					walk(e, k)
				}
			case []any:
				for _, e := range t {
					walk(e, key)
				}
			case string:
				if what, ok := neverShown[key]; ok {
					w.add(what, t)
					w.add(what, strings.ReplaceAll(t, " ", ""))
				}
			}
		}
		walk(doc, "")
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(answer, &env)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answers = append(w.answers, answer)
	for _, k := range []string{"secret", "claimUrl", "url"} {
		if s, ok := env.Data[k].(string); ok && (k != "url" || strings.Contains(s, "token=")) {
			if _, after, ok := strings.Cut(s, "token="); ok {
				s = after
			} else if i := strings.LastIndexByte(s, '/'); k == "claimUrl" && i >= 0 {
				s = s[i+1:]
			}
			if len(s) >= 16 {
				w.shownOnce = append(w.shownOnce, s)
			}
		}
	}
}

func (w *secretWatch) check(t testing.TB, logs string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for v, what := range w.never {
		if strings.Contains(logs, v) {
			t.Errorf("%s (%.4s…) appears in the log", what, v)
		}
		for _, a := range w.answers {
			if strings.Contains(string(a), v) {
				t.Errorf("%s (%.4s…) appears in an answer: %.300s", what, v, a)
				break
			}
		}
	}
	for _, v := range w.shownOnce {
		if strings.Contains(logs, v) {
			t.Errorf("a shown-once secret (%.4s…) appears in the log", v)
		}
	}
}

// WatchSecret fails the test if s (what names it in the failure) appears in the server's log.
func (e *Env) WatchSecret(what, s string) { e.secrets.add(what, s) }
