// Package app is Remit's engine: one service per area, each written against the store and the
// domain rules of package remit. Every state change and the event describing it commit in one
// store transaction. Nothing here knows HTTP.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/tax"
)

// Config is what the engine needs from the process configuration.
type Config struct {
	PublicURL            string        // base of claimUrl, hosted URLs and docsUrl
	IdempotencyRetention time.Duration // how long an Idempotency-Key is remembered (24h)
	IdempotencyLease     time.Duration // how long an in-flight request holds its key before a retry may take over
	Tax                  *tax.Table    // the tax rate table; nil means the shipped defaults

	// Webhooks (app/webhooks.go).
	SecretKey           string          // REMIT_SECRET_KEY: derives the key that encrypts endpoint secrets at rest
	WebhookRetry        []time.Duration // waits between attempts; after the last, a delivery fails
	WebhookAllowPrivate string          // "true", "false", or "" (allowed in sandbox, refused in production)
	// LookupHost resolves an endpoint's host name when its URL is checked (nil: the system
	// resolver). Tests set it; see ResolveEndpointHost for when it runs.
	LookupHost         func(ctx context.Context, host string) ([]netip.Addr, error)
	WebhookLease       time.Duration // how long a worker holds a claimed delivery (1m); attempts end before it
	WebhookPoll        time.Duration // how often an idle worker looks for work other processes created (1s)
	WebhookConcurrency int           // attempts in flight per process (16)

	// Processor is the production payment processor connector. None is bundled: nil means
	// production charges answer 501 (the sandbox always uses processor.Sandbox). See docs/payments.md.
	Processor processor.Processor
}

// App bundles the engine's services. Its zero value is not usable; call New.
type App struct {
	DB     *store.DB
	Clock  remit.Clock
	Log    *slog.Logger
	Config Config

	jobs     map[string]JobFunc
	webhooks *webhookState
	sealer   *sealer
}

// New returns an engine over db.
func New(db *store.DB, clock remit.Clock, log *slog.Logger, cfg Config) *App {
	if cfg.IdempotencyRetention == 0 {
		cfg.IdempotencyRetention = 24 * time.Hour
	}
	if cfg.IdempotencyLease == 0 {
		cfg.IdempotencyLease = time.Minute
	}
	a := &App{DB: db, Clock: clock, Log: log, Config: cfg, jobs: map[string]JobFunc{}}
	a.webhooks = newWebhookState(&a.Config)
	a.sealer = &sealer{}
	return a
}

// TaxTable is the tax rate table in force.
func (a *App) TaxTable() *tax.Table {
	if a.Config.Tax == nil {
		return defaultTax
	}
	return a.Config.Tax
}

var defaultTax = tax.Default()

// Emit appends an event of type typ (a constant of the catalog, remit.EventTypes) to the outbox
// in the transaction tx. obj is the resource after the change; it is delivered as data.object.
func (a *App) Emit(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, typ remit.EventType, objectID string, obj any) error {
	if !remit.KnownEventType(string(typ)) {
		return remit.Internal(fmt.Errorf("app.Emit: event type %q is not in remit.EventTypes (add it there and to docs/events.md)", typ))
	}
	data, err := json.Marshal(map[string]any{"object": obj})
	if err != nil {
		return remit.Internal(err)
	}
	ev := remit.Event{
		ID: remit.NewID("evt"), Object: "event", Type: string(typ), MerchantAccountID: scope.MerchantAccountID,
		Environment: scope.Environment, CreatedAt: now, Data: data,
	}
	if err := tx.InsertEvent(ctx, ev, objectID); err != nil {
		return err
	}
	tx.AfterCommit(a.wakeWebhooks) // this process's webhook worker dispatches it at once
	return nil
}

// Ready pings the store and names its dialect.
func (a *App) Ready(ctx context.Context) (string, error) {
	if err := a.DB.Ping(ctx); err != nil {
		return "", err
	}
	return string(a.DB.Dialect()), nil
}

// Unavailable reports whether err says the store could not be reached or dropped the connection
// (store.IsUnavailable): transient, nothing applied.
func (a *App) Unavailable(err error) bool { return store.IsUnavailable(err) }
