// Package wire assembles a running Remit from configuration: the store, the engine with its
// scheduled-job kinds, the rate limiter and the HTTP edge. The binary and the tests both start
// Remit through it, so there is one way to put the parts together.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/dashboard"
	"github.com/remit-billing/remit/httpapi"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/portal"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/ratelimit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/tax"
	"github.com/remit-billing/remit/taxprovider"
)

// Config is Remit's configuration. FromEnv reads it from REMIT_* variables.
type Config struct {
	Addr                 string        // REMIT_ADDR, 127.0.0.1:8080
	DatabaseURL          string        // REMIT_DATABASE_URL, sqlite:remit.db
	PublicURL            string        // REMIT_PUBLIC_URL, http://<addr>
	RateLimit            float64       // REMIT_RATE_LIMIT, requests per second per API key (100)
	RateBurst            int           // REMIT_RATE_BURST (200)
	OperatorHashCost     int           // bcrypt cost of dashboard passwords (0: the default); no variable: tests lower it
	RedisURL             string        // REMIT_REDIS_URL: share the rate limit through Redis
	SchedulerInterval    time.Duration // REMIT_SCHEDULER_INTERVAL (1s): how often due work is looked for
	LogLevel             string        // REMIT_LOG_LEVEL: debug, info, warn, error (info)
	EnablePprof          bool          // REMIT_PPROF=true mounts /debug/pprof
	MetricsToken         string        // REMIT_METRICS_TOKEN: GET /metrics asks for Authorization: Bearer <it>
	MetricsAddr          string        // REMIT_METRICS_ADDR: serve GET /metrics on this address only, not on Addr
	WebhookRetry         string        // REMIT_WEBHOOK_RETRY_SCHEDULE (5s,5m,30m,2h,5h,10h,10h)
	WebhookAllowPriv     string        // REMIT_WEBHOOK_ALLOW_PRIVATE: true/false; empty = on in sandbox only
	TaxRatesFile         string        // REMIT_TAX_RATES_FILE: a JSON rate table replacing the shipped one
	TaxProvider          string        // REMIT_TAX_PROVIDER: builtin (the rate table, the default) or stripe (Stripe Tax)
	DisabledOps          []string      // REMIT_DISABLED_OPERATIONS: comma-separated operationIds answered with 501
	WebhookLease         time.Duration // REMIT_WEBHOOK_LEASE (1m): how long a worker holds a claimed delivery
	WebhookWorkers       int           // REMIT_WEBHOOK_CONCURRENCY (16): attempts in flight per process
	SecretKey            string        // REMIT_SECRET_KEY: key material for secrets stored encrypted (webhook signing secrets, remembered idempotent answers)
	IdempotencyLease     time.Duration // REMIT_IDEMPOTENCY_LEASE (1m): how long a request that died in flight holds its Idempotency-Key
	ReadHeaderTimeout    time.Duration // REMIT_READ_HEADER_TIMEOUT (10s): a client must send its request headers within this
	ReadTimeout          time.Duration // REMIT_READ_TIMEOUT (30s): a client must send its whole request, body included, within this
	DatabaseMaxConns     int           // REMIT_DATABASE_MAX_CONNS (32): PostgreSQL connections per process
	LoadCeiling          bool          // REMIT_LOAD_CEILING=true also serves GET /_load/ceiling (the load harness's bare baseline)
	ProcessorTimeout     time.Duration // REMIT_PROCESSOR_TIMEOUT (10s): one processor call; a longer one leaves its attempt processing
	ReconcileInterval    time.Duration // REMIT_RECONCILE_INTERVAL (30s): how often serve resolves attempts left processing
	VerifyInterval       time.Duration // REMIT_VERIFY_INTERVAL (1h): how often serve runs the money checks (docs/verification.md)
	SandboxLatency       time.Duration // REMIT_SANDBOX_PROCESSOR_LATENCY (0): every sandbox charge and refund takes this long
	StripeSecretKey      string        // REMIT_STRIPE_SECRET_KEY: turns the Stripe connector on for production merchant accounts
	StripeAPIURL         string        // REMIT_STRIPE_API_URL: replaces Stripe's API base (tests point it at stripe-mock)
	StripeSandbox        bool          // REMIT_STRIPE_SANDBOX=true: sandbox merchant accounts charge through Stripe too
	StripeWebhookKey     string        // REMIT_STRIPE_WEBHOOK_SECRET: verifies POST /processor-webhooks/stripe
	StripePublishableKey string        // REMIT_STRIPE_PUBLISHABLE_KEY: the hosted setup page's Stripe card element
	DunningSchedule      string        // REMIT_DUNNING_SCHEDULE ("3d,5d,7d"): retries of a failed automatic charge
	SMTPURL              string        // REMIT_SMTP_URL (smtp://user:pass@host:port): sends customer e-mail; unset records it skipped
	EmailFrom            string        // REMIT_EMAIL_FROM (billing@remit.invalid): the sender address of customer e-mail
	EmailRetry           string        // REMIT_EMAIL_RETRY_SCHEDULE (5s,5m,30m,2h,5h,10h,10h)
	EmailBusyRate        int           // REMIT_EMAIL_BUSY_RATE (5): messages a second at most while the API is busy
	// NoAutoMigrate (REMIT_AUTO_MIGRATE=false) opens the store without migrating it: `remit migrate`
	// (a deploy's migration job) does, and /readyz answers 503 until the schema is current.
	NoAutoMigrate bool

	// ExistingStore makes Open refuse a store that does not exist (store.OpenExisting: a missing
	// SQLite file, a PostgreSQL schema never migrated) instead of creating it: every command of
	// the CLI but serve, migrate and bootstrap. No variable.
	ExistingStore bool

	// Processor is the production payment processor connector, for programs that embed Remit
	// (no environment variable: none is bundled). nil: production charges answer 501. The sandbox
	// always uses the built-in processor.Sandbox. See docs/payments.md.
	Processor processor.Processor
}

// Defaults returns the documented defaults.
func Defaults() Config {
	return Config{
		Addr: "127.0.0.1:8080", DatabaseURL: "sqlite:remit.db", RateLimit: 100, RateBurst: 200,
		SchedulerInterval: time.Second, LogLevel: "info", WebhookRetry: "5s,5m,30m,2h,5h,10h,10h",
		WebhookLease: time.Minute, WebhookWorkers: 16, IdempotencyLease: time.Minute, EmailRetry: "5s,5m,30m,2h,5h,10h,10h", EmailBusyRate: 5,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		ProcessorTimeout: 10 * time.Second, ReconcileInterval: 30 * time.Second,
		VerifyInterval: time.Hour,
	}
}

// FromEnv returns the defaults overridden by the REMIT_* environment variables (Variables).
func FromEnv() (Config, error) { return fromEnv(os.LookupEnv) }

// fromEnv is FromEnv reading the variables through lookup.
func fromEnv(lookup func(string) (string, bool)) (Config, error) {
	getenv := func(name string) string { v, _ := lookup(name); return v }
	c := Defaults()
	for name, dst := range map[string]*string{
		"REMIT_ADDR": &c.Addr, "REMIT_DATABASE_URL": &c.DatabaseURL, "REMIT_PUBLIC_URL": &c.PublicURL,
		"REMIT_REDIS_URL": &c.RedisURL, "REMIT_LOG_LEVEL": &c.LogLevel, "REMIT_WEBHOOK_RETRY_SCHEDULE": &c.WebhookRetry,
		"REMIT_WEBHOOK_ALLOW_PRIVATE": &c.WebhookAllowPriv, "REMIT_TAX_RATES_FILE": &c.TaxRatesFile, "REMIT_TAX_PROVIDER": &c.TaxProvider, "REMIT_SECRET_KEY": &c.SecretKey,
		"REMIT_STRIPE_SECRET_KEY": &c.StripeSecretKey, "REMIT_STRIPE_API_URL": &c.StripeAPIURL,
		"REMIT_STRIPE_WEBHOOK_SECRET": &c.StripeWebhookKey, "REMIT_STRIPE_PUBLISHABLE_KEY": &c.StripePublishableKey,
		"REMIT_DUNNING_SCHEDULE": &c.DunningSchedule, "REMIT_SMTP_URL": &c.SMTPURL, "REMIT_EMAIL_FROM": &c.EmailFrom,
		"REMIT_EMAIL_RETRY_SCHEDULE": &c.EmailRetry, "REMIT_METRICS_TOKEN": &c.MetricsToken, "REMIT_METRICS_ADDR": &c.MetricsAddr,
	} {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	if v := getenv("REMIT_DISABLED_OPERATIONS"); v != "" {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				c.DisabledOps = append(c.DisabledOps, id)
			}
		}
	}
	for name, dst := range map[string]*bool{"REMIT_PPROF": &c.EnablePprof, "REMIT_LOAD_CEILING": &c.LoadCeiling, "REMIT_STRIPE_SANDBOX": &c.StripeSandbox} {
		if v := getenv(name); v != "" {
			*dst = v == "true" || v == "1"
		}
	}
	if err := durationsFromEnv(&c, getenv); err != nil {
		return c, err
	}
	if err := numbersFromEnv(&c, getenv); err != nil {
		return c, err
	}
	switch v := getenv("REMIT_AUTO_MIGRATE"); v {
	case "", "true", "1":
	case "false", "0":
		c.NoAutoMigrate = true
	default:
		return c, fmt.Errorf("REMIT_AUTO_MIGRATE must be true or false, not %q", v)
	}
	return c, nil
}

// durationsFromEnv reads the REMIT_* durations, each with its lower bound.
func durationsFromEnv(c *Config, getenv func(string) string) error {
	for _, d := range []struct {
		name, example string
		min           time.Duration
		dst           *time.Duration
	}{
		{"REMIT_WEBHOOK_LEASE", "1m", time.Second, &c.WebhookLease},
		{"REMIT_IDEMPOTENCY_LEASE", "1m", 100 * time.Millisecond, &c.IdempotencyLease},
		{"REMIT_READ_HEADER_TIMEOUT", "1m", 100 * time.Millisecond, &c.ReadHeaderTimeout},
		{"REMIT_READ_TIMEOUT", "1m", 100 * time.Millisecond, &c.ReadTimeout},
		{"REMIT_SCHEDULER_INTERVAL", "1s", time.Nanosecond, &c.SchedulerInterval},
		{"REMIT_PROCESSOR_TIMEOUT", "10s", time.Millisecond, &c.ProcessorTimeout},
		{"REMIT_RECONCILE_INTERVAL", "30s", time.Millisecond, &c.ReconcileInterval},
		{"REMIT_VERIFY_INTERVAL", "1h", time.Millisecond, &c.VerifyInterval},
		{"REMIT_SANDBOX_PROCESSOR_LATENCY", "300ms", 0, &c.SandboxLatency},
	} {
		v := getenv(d.name)
		if v == "" {
			continue
		}
		t, err := time.ParseDuration(v)
		switch {
		case (err != nil || t < d.min) && d.min == time.Nanosecond:
			return fmt.Errorf("%s must be a positive duration such as %s, not %q", d.name, d.example, v)
		case err != nil || t < d.min:
			return fmt.Errorf("%s must be a duration of at least %s such as %s, not %q", d.name, d.min, d.example, v)
		}
		*d.dst = t
	}
	return nil
}

// numbersFromEnv reads the REMIT_* numbers, each within its bounds.
func numbersFromEnv(c *Config, getenv func(string) string) error {
	for _, n := range []struct {
		name, bounds string
		min, max     int
		dst          *int
	}{
		{"REMIT_DATABASE_MAX_CONNS", "an integer from 2 to 1000", 2, 1000, &c.DatabaseMaxConns},
		{"REMIT_WEBHOOK_CONCURRENCY", "an integer from 1 to 1024", 1, 1024, &c.WebhookWorkers},
		{"REMIT_EMAIL_BUSY_RATE", "an integer from 1 to 10000", 1, 10000, &c.EmailBusyRate},
		{"REMIT_RATE_BURST", "a positive integer", 1, math.MaxInt, &c.RateBurst},
	} {
		if v := getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < n.min || i > n.max {
				return fmt.Errorf("%s must be %s, not %q", n.name, n.bounds, v)
			}
			*n.dst = i
		}
	}
	if v := getenv("REMIT_RATE_LIMIT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("REMIT_RATE_LIMIT must be a positive number, not %q", v)
		}
		c.RateLimit = f
	}
	return nil
}

// Logger returns the JSON logger for the configured level.
func (c Config) Logger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(strings.ToUpper(c.LogLevel)))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Remit is an assembled instance.
type Remit struct {
	Config  Config
	DB      *store.DB
	App     *app.App
	Handler *httpapi.Server
	Log     *slog.Logger
	closers []func() error
}

// Open opens the store (with c.ExistingStore only one that exists), migrates it (unless
// NoAutoMigrate) and assembles the engine and the HTTP edge. clock may be nil (real time).
func Open(ctx context.Context, c Config, log *slog.Logger, clock remit.Clock) (*Remit, error) {
	if clock == nil {
		clock = remit.SystemClock{}
	}
	log = telemetry.Logger(log) // lines logged with a context name its request and trace
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	open := store.Open
	if c.ExistingStore {
		open = store.OpenExisting
	}
	db, err := open(ctx, c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxConns(c.DatabaseMaxConns)
	if !c.NoAutoMigrate {
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	appCfg, err := appConfig(c)
	if err != nil {
		db.Close()
		return nil, err
	}
	r := &Remit{Config: c, DB: db, Log: log, closers: []func() error{db.Close}}
	r.App = app.New(db, clock, log, appCfg)

	var limiter ratelimit.Limiter = ratelimit.NewMemory(c.RateLimit, c.RateBurst)
	if c.RedisURL != "" {
		rl, client, err := ratelimit.NewRedis(c.RedisURL, c.RateLimit, c.RateBurst, log)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("REMIT_REDIS_URL: %w", err)
		}
		r.closers = append(r.closers, client.Close)
		limiter = rl
	}
	r.Handler, err = httpapi.New(Engine(r.App), log, limiter, httpapi.Config{PublicURL: c.PublicURL, EnablePprof: c.EnablePprof,
		DisabledOperations: c.DisabledOps, MetricsToken: c.MetricsToken, MetricsElsewhere: c.MetricsAddr != ""})
	if err != nil {
		r.Close()
		return nil, err
	}
	if err := r.mountDashboard(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.mountPortal(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Failed sign-in attempts to the dashboard: per client address and per e-mail address, a burst of
// signInBurst, then one every 12 s (docs/dashboard.md).
const (
	signInPerSecond = 1.0 / 12
	signInBurst     = 5
)

// mountPortal serves the customer portal at /portal (package portal, docs/customer-portal.md). Its
// browser sessions are kept where the dashboard's are, under their own cookie and path.
func (r *Remit) mountPortal() error {
	p, err := portal.New(r.App.Portal, r.App.Operators.Sessions(), r.Log, portal.Config{PublicURL: r.Config.PublicURL})
	if err != nil {
		return err
	}
	r.Handler.Mount("/portal", p)
	return nil
}

// mountDashboard serves the operator console at /dashboard, through the same server (package
// dashboard). Its sign-in limits are shared through Redis like the API's when REMIT_REDIS_URL is
// set.
func (r *Remit) mountDashboard() error {
	var signIns dashboard.SignInLimiter = ratelimit.NewMemory(signInPerSecond, signInBurst)
	if r.Config.RedisURL != "" {
		rl, client, err := ratelimit.NewRedis(r.Config.RedisURL, signInPerSecond, signInBurst, r.Log)
		if err != nil {
			return fmt.Errorf("REMIT_REDIS_URL: %w", err)
		}
		r.closers = append(r.closers, client.Close)
		signIns = rl
	}
	d, err := dashboard.New(r.App.Operators, r.App.Operators.Sessions(), signIns, r.Log, dashboard.Config{PublicURL: r.Config.PublicURL})
	if err != nil {
		return err
	}
	r.Handler.Mount("/dashboard", d)
	return nil
}

// Close releases the store and the Redis client.
func (r *Remit) Close() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// HTTPServer returns the configured http.Server, with timeouts that cut off slow clients.
func (r *Remit) HTTPServer() *http.Server {
	orDefault := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	var h http.Handler = r.Handler
	if r.Config.LoadCeiling {
		h = withCeiling(r.Handler)
		if floorRoute != nil { // only in a build with -tags remitfloor (floor.go)
			h = floorRoute(r.DB, h)
		}
	}
	return &http.Server{
		Addr:              r.Config.Addr,
		Handler:           h,
		ReadHeaderTimeout: orDefault(r.Config.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       orDefault(r.Config.ReadTimeout, 30*time.Second),
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(r.Log.Handler(), slog.LevelWarn),
	}
}

// Serve runs the HTTP server, the scheduler, the webhook delivery worker and the payment reconciler
// until ctx ends, then
// shuts down gracefully: new connections are refused, in-flight requests finish (up to 30 s) and
// webhook attempts in flight finish (up to their 10 s timeout).
func (r *Remit) Serve(ctx context.Context, ln net.Listener) error {
	srv := r.HTTPServer()
	stopMetrics, err := r.serveMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()
	schedCtx, stopSched := context.WithCancel(context.Background())
	schedDone := make(chan struct{})
	go func() { defer close(schedDone); r.App.RunScheduler(schedCtx, r.Config.SchedulerInterval) }()
	hooksDone := make(chan struct{})
	go func() { defer close(hooksDone); r.App.Webhooks.RunWebhooks(schedCtx) }()
	mailDone := make(chan struct{})
	go func() { defer close(mailDone); r.App.Emails.RunEmails(schedCtx) }()
	reconDone := make(chan struct{})
	go func() { defer close(reconDone); r.App.Payments.RunReconciler(schedCtx, r.Config.ReconcileInterval) }()
	verifyDone := make(chan struct{})
	go func() { defer close(verifyDone); r.App.Verification.RunVerification(schedCtx, r.Config.VerifyInterval) }()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	r.Log.Info("serving", "addr", ln.Addr().String(), "store", string(r.DB.Dialect()))
	select {
	case err = <-errc:
	case <-ctx.Done():
		r.Log.Info("shutting down: finishing in-flight requests")
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	}
	stopSched()
	<-schedDone
	<-hooksDone
	<-mailDone
	<-reconDone
	<-verifyDone
	if err == http.ErrServerClosed {
		err = nil
	}
	return err
}

// serveMetrics serves GET /metrics on REMIT_METRICS_ADDR, when it is set, until stop is called
// (docs/operations.md, "Metrics endpoint").
func (r *Remit) serveMetrics() (stop func(), err error) {
	if r.Config.MetricsAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", r.Config.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("REMIT_METRICS_ADDR: %w", err)
	}
	srv := r.HTTPServer()
	srv.Addr, srv.Handler = ln.Addr().String(), r.Handler.MetricsHandler()
	go func() { _ = srv.Serve(ln) }()
	r.Log.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// FloorInvoicePath is the invoice read's floor route (floor.go), served beside CeilingPath only by
// a build with -tags remitfloor: GET FloorInvoicePath{invoice ID}?merchantAccountId=.
const FloorInvoicePath = "/_load/floor/invoices/"

// floorRoute, when set (floor.go, built only with -tags remitfloor), wraps the ceiling's handler
// with the load harness's floor routes. Nil in the normal binary.
var floorRoute func(db *store.DB, next http.Handler) http.Handler

// CeilingPath is the bare JSON handler served beside the API when Config.LoadCeiling is set.
const CeilingPath = "/_load/ceiling"

// withCeiling serves CeilingPath with a bare net/http JSON handler — no request ID, logging,
// metrics, authentication, validation or store — and everything else with api. It is the ceiling
// the load harness (cmd/remit-load) compares every scenario with: what this binary, on this
// machine, serves when a request costs nothing but HTTP and a small JSON encoding.
func withCeiling(api http.Handler) http.Handler {
	type ceiling struct {
		Object string `json:"object"`
		OK     bool   `json:"ok"`
	}
	type envelope struct {
		Data      ceiling `json:"data"`
		RequestID string  `json:"requestId"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != CeilingPath {
			api.ServeHTTP(w, req)
			return
		}
		body, _ := json.Marshal(envelope{Data: ceiling{Object: "ceiling", OK: true}, RequestID: "req_ceiling"})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}

// Engine is the engine as the HTTP edge sees it: each area's service under its interface.
func Engine(a *app.App) httpapi.Engine {
	return httpapi.Engine{
		Access: a.Access, Writes: a, Health: a, TestClocks: a.TestClocks, Jobs: a.Jobs, Merchants: a.Merchants, Catalog: a.Catalog,
		Ledger: a.Ledger, Quotes: a.Quotes, Invoicing: a.Invoicing, Payments: a.Payments, CreditNotes: a.CreditNotes,
		Usage: a.Usage, Webhooks: a.Webhooks, Documents: a.Documents, Emails: a.Emails, Verification: a.Verification,
		Foreground: a.Foreground, Operations: a, Exports: a.Exports, Portal: a.Portal, Journal: a.Journal,
	}
}

// The services implement the edge's interfaces.
var (
	_ httpapi.Access       = (*app.Access)(nil)
	_ httpapi.Writes       = (*app.App)(nil)
	_ httpapi.Health       = (*app.App)(nil)
	_ httpapi.Operations   = (*app.App)(nil)
	_ httpapi.TestClocks   = (*app.TestClocks)(nil)
	_ httpapi.Jobs         = (*app.Jobs)(nil)
	_ httpapi.Merchants    = (*app.Merchants)(nil)
	_ httpapi.Catalog      = (*app.Catalog)(nil)
	_ httpapi.Ledger       = (*app.Ledger)(nil)
	_ httpapi.Quotes       = (*app.Quotes)(nil)
	_ httpapi.Invoicing    = (*app.Invoicing)(nil)
	_ httpapi.Payments     = (*app.Payments)(nil)
	_ httpapi.CreditNotes  = (*app.CreditNotes)(nil)
	_ httpapi.Usage        = (*app.Usage)(nil)
	_ httpapi.Webhooks     = (*app.Webhooks)(nil)
	_ httpapi.Documents    = (*app.Documents)(nil)
	_ httpapi.Emails       = (*app.Emails)(nil)
	_ httpapi.Verification = (*app.Verification)(nil)
	_ httpapi.Exports      = (*app.Exports)(nil)
	_ httpapi.Portal       = (*app.Portal)(nil)
	_ httpapi.Journal      = (*app.Journal)(nil)
)

// emailConfig reads the customer e-mail settings: the SMTP server (none: messages are recorded
// skipped), the sender address and the retry schedule. Errors never repeat the SMTP password.
func emailConfig(c Config, cfg *app.Config) error {
	retry, err := app.ParseRetrySchedule(c.EmailRetry)
	if err != nil {
		return fmt.Errorf("REMIT_EMAIL_RETRY_SCHEDULE: %w", err)
	}
	if retry == nil {
		retry = []time.Duration{} // one attempt, no retries
	}
	cfg.EmailRetry, cfg.EmailFrom, cfg.EmailBusyRate = retry, c.EmailFrom, c.EmailBusyRate
	if c.EmailFrom != "" && !remit.ValidEmail(c.EmailFrom) {
		return fmt.Errorf("REMIT_EMAIL_FROM must be an e-mail address such as billing@example.com, not %q", c.EmailFrom)
	}
	if c.SMTPURL == "" {
		return nil
	}
	sc, err := mail.ParseURL(c.SMTPURL)
	if err != nil {
		return err
	}
	cfg.Mailer = mail.NewSMTP(sc)
	return nil
}

// appConfig turns the configuration into the engine's: retry schedules, webhook safety, dunning,
// e-mail, the processor and the tax table.
func appConfig(c Config) (app.Config, error) {
	retry, err := app.ParseRetrySchedule(c.WebhookRetry)
	if err != nil {
		return app.Config{}, fmt.Errorf("REMIT_WEBHOOK_RETRY_SCHEDULE: %w", err)
	}
	if retry == nil {
		retry = []time.Duration{} // an empty schedule: one attempt, no retries
	}
	switch c.WebhookAllowPriv {
	case "", "true", "false":
	default:
		return app.Config{}, fmt.Errorf("REMIT_WEBHOOK_ALLOW_PRIVATE must be true, false or empty, not %q", c.WebhookAllowPriv)
	}
	appCfg := app.Config{
		PublicURL: strings.TrimRight(c.PublicURL, "/"), SecretKey: c.SecretKey, WebhookRetry: retry,
		WebhookAllowPrivate: c.WebhookAllowPriv, WebhookLease: c.WebhookLease, WebhookPoll: c.SchedulerInterval,
		WebhookConcurrency: c.WebhookWorkers, Processor: c.Processor, IdempotencyLease: c.IdempotencyLease,
		ProcessorTimeout: c.ProcessorTimeout, SandboxLatency: c.SandboxLatency, StripeWebhookSecret: c.StripeWebhookKey,
		Dunning: remit.DefaultDunning, OperatorHashCost: c.OperatorHashCost,
	}
	if c.DunningSchedule != "" {
		d, err := remit.ParseDunningSchedule(c.DunningSchedule)
		if err != nil {
			return app.Config{}, err
		}
		appCfg.Dunning = d
	}
	if err := emailConfig(c, &appCfg); err != nil {
		return app.Config{}, err
	}
	if appCfg.Processor == nil && c.StripeSecretKey != "" {
		appCfg.Processor = processor.NewStripe(processor.StripeConfig{SecretKey: c.StripeSecretKey, APIURL: c.StripeAPIURL,
			PublishableKey: c.StripePublishableKey})
		appCfg.ProcessorInSandbox = c.StripeSandbox
	}
	return appCfg, taxConfig(c, &appCfg)
}

// taxConfig sets the engine's tax: the rate table (REMIT_TAX_RATES_FILE) and the provider
// (REMIT_TAX_PROVIDER: builtin, the table; stripe, Stripe Tax with REMIT_STRIPE_SECRET_KEY and
// REMIT_STRIPE_API_URL, each call bounded by REMIT_PROCESSOR_TIMEOUT).
func taxConfig(c Config, cfg *app.Config) error {
	if c.TaxRatesFile != "" {
		t, err := tax.LoadFile(c.TaxRatesFile)
		if err != nil {
			return fmt.Errorf("REMIT_TAX_RATES_FILE: %w", err)
		}
		cfg.Tax = t
	}
	switch c.TaxProvider {
	case "", taxprovider.Builtin:
	case taxprovider.Stripe:
		if c.StripeSecretKey == "" {
			return errors.New("REMIT_TAX_PROVIDER=stripe needs REMIT_STRIPE_SECRET_KEY")
		}
		cfg.TaxProvider = taxprovider.NewStripe(taxprovider.StripeConfig{SecretKey: c.StripeSecretKey, APIURL: c.StripeAPIURL,
			Timeout: c.ProcessorTimeout})
	default:
		return fmt.Errorf("REMIT_TAX_PROVIDER must be builtin or stripe, not %q", c.TaxProvider)
	}
	return nil
}
