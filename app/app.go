// Package app is Remit's engine: one service per area, each written against the store and the
// domain rules of package remit. Every state change and the event describing it commit in one
// store transaction. Nothing here knows HTTP.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/mail"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/tax"
	"github.com/remit-billing/remit/taxprovider"
)

// Config is what the engine needs from the process configuration.
type Config struct {
	PublicURL            string        // base of claimUrl, hosted URLs and docsUrl
	IdempotencyRetention time.Duration // how long an Idempotency-Key is remembered (24h)
	IdempotencyLease     time.Duration // how long an in-flight request holds its key before a retry may take over
	Tax                  *tax.Table    // the tax rate table; nil means the shipped defaults
	// TaxProvider is where tax comes from (REMIT_TAX_PROVIDER): nil is the built-in table (Tax);
	// taxprovider.StripeTax asks Stripe Tax (docs/invoices-and-tax.md, "Tax providers").
	TaxProvider taxprovider.Provider

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
	// ProcessorTimeout bounds one processor call (REMIT_PROCESSOR_TIMEOUT, 10s): an attempt whose
	// call runs longer stays processing and the reconciler finishes it.
	ProcessorTimeout time.Duration
	// SandboxLatency delays every sandbox charge and refund (REMIT_SANDBOX_PROCESSOR_LATENCY).
	SandboxLatency time.Duration
	// ProcessorInSandbox makes sandbox merchant accounts charge through Processor too
	// (REMIT_STRIPE_SANDBOX=true) instead of the built-in sandbox processor.
	ProcessorInSandbox bool
	// StripeWebhookSecret verifies POST /processor-webhooks/stripe (REMIT_STRIPE_WEBHOOK_SECRET).
	StripeWebhookSecret string
	// Dunning is the deployment's dunning policy (REMIT_DUNNING_SCHEDULE), used by billing accounts
	// without their own; app.New makes an empty one remit.DefaultDunning.
	Dunning remit.Dunning

	// Customer e-mail (app/emails.go, app/emailworker.go).
	Mailer           mail.Sender     // REMIT_SMTP_URL's server; nil records every message skipped
	EmailFrom        string          // REMIT_EMAIL_FROM: the sender address (the merchant's name is shown with it)
	EmailRetry       []time.Duration // REMIT_EMAIL_RETRY_SCHEDULE: waits between send attempts; after the last, failed
	EmailLease       time.Duration   // how long a worker holds claimed messages (2m); a send ends before it
	EmailPoll        time.Duration   // how often an idle worker looks for messages other processes queued (1s)
	EmailBatch       int             // messages sent over one SMTP connection (25)
	EmailConcurrency int             // SMTP connections in flight per process (16)
	EmailRenders     int             // attachments rendered at once per process while its API is idle (2; 1 otherwise): the CPU the worker may take
	EmailBusyRate    int             // messages a second at most while the API is busy (5; Foreground)
	OperatorHashCost int             // bcrypt cost of dashboard passwords (0: bcrypt.DefaultCost); tests lower it
}

// core is what every area's service shares: the store, the real-time clock, the log and the
// configuration, and the engine's own machinery built on them: the outbox (Emit), the scheduler on
// merchant clocks (scheduler.go), sealing at rest (sealing.go), cursors (cursor.go) and the write
// entry point with its Idempotency-Key (write.go, idempotency.go). A service embeds it; what a
// service needs of another area is a field of its own.
type core struct {
	DB     *store.DB
	Clock  remit.Clock
	Log    *slog.Logger
	Config Config

	jobs      map[string]JobFunc
	reactions map[remit.EventType][]reaction
	webhooks  *webhookState
	emailWake chan struct{}
	sealer    *sealer
	counts    *counts // what this process committed, for GET /metrics (counts.go)

	// Foreground is how busy this process's HTTP edge is: the edge marks each request in it, and
	// the e-mail worker yields to it (foreground.go).
	Foreground *Foreground
}

// App is the engine: one service per area, composed by New. Its zero value is not usable.
type App struct {
	*core

	Access       *Access       // API keys, scope, hosted tokens (auth.go, hosted.go)
	TestClocks   *TestClocks   // the sandbox merchant clock (clock.go)
	Merchants    *Merchants    // merchant accounts, onboarding, claims, bootstrap (merchants.go, ...)
	Catalog      *Catalog      // prices, coupons, customers, billing accounts, setup sessions
	Ledger       *Ledger       // the prepaid balance (ledger.go)
	Quotes       *Quotes       // quotes and subscriptions (quotes.go, subscriptions.go)
	Invoicing    *Invoicing    // invoices and tax transactions (invoices.go, taxtransactions.go)
	Payments     *Payments     // collection, receipts, refunds, settlements (payments.go, collect.go, settlements.go)
	CreditNotes  *CreditNotes  // credit notes (creditnotes.go)
	Usage        *Usage        // usage events and thresholds (usage.go, usage_period.go)
	Webhooks     *Webhooks     // endpoints, events, deliveries and the worker (webhook*.go)
	Documents    *Documents    // what the PDFs and the hosted invoice page show (documents.go)
	Emails       *Emails       // the e-mail log and its worker (emails.go, emailworker.go)
	Verification *Verification // the money checks and the event chain (verification.go)
	Operators    *Operators    // dashboard operators, sign-in and sessions (operators.go)
	Jobs         *Jobs         // scheduled work as operators see it: list, failed, retry (jobs.go)
	Exports      *Exports      // the CSV exports, streamed from a snapshot (exports.go)
	Portal       *Portal       // the customer portal's sessions and configuration (portal.go)
	Journal      *Journal      // the general ledger: postings, recognition, balances (journal*.go)
}

// The area services. Each embeds the shared core and names what it needs of other areas.
type (
	Access struct {
		*core
		known authCache // the keys and merchant accounts of recent requests (authcache.go)
	}
	TestClocks struct{ *core }
	Jobs       struct{ *core }
	Merchants  struct {
		*core
		access *Access
	}
	Catalog struct {
		*core
		access   *Access
		payments *Payments // a new default method retries the billing account's open invoices
		usage    *Usage    // a metered feature's usage (entitlements.go)
		ents     *entitlementCache
	}
	Ledger struct{ *core }
	Quotes struct {
		*core
		invoicing   *Invoicing
		creditNotes *CreditNotes // a prorated cancel or change credits the unused time
		emails      *Emails      // a renewal is announced a week before
	}
	Invoicing struct {
		*core
		access   *Access
		ledger   *Ledger
		payments *Payments
		usage    *Usage
	}
	Payments struct {
		*core
		invoicing *Invoicing
		access    *Access
		ledger    *Ledger // a failed refund is credited to the prepaid balance
		sandbox   *processor.Sandbox
	}
	CreditNotes struct {
		*core
		ledger   *Ledger
		payments *Payments
	}
	Usage struct {
		*core
		creditNotes *CreditNotes // a void of billed usage credits the difference
		meters      meterCache
		catalog     *Catalog // a usage event may exhaust an entitlement (entitlements.go)
	}
	Webhooks  struct{ *core }
	Documents struct{ *core }
	Exports   struct{ *core }
	Journal   struct{ *core }
	Emails    struct {
		*core
		catalog   *Catalog   // a payment.failed message links a new setup session
		documents *Documents // the PDFs messages carry
	}
)

// New returns an engine over db: every area's service, wired together, with their scheduled-job
// kinds registered.
func New(db *store.DB, clock remit.Clock, log *slog.Logger, cfg Config) *App {
	if cfg.IdempotencyRetention == 0 {
		cfg.IdempotencyRetention = 24 * time.Hour
	}
	if cfg.IdempotencyLease == 0 {
		cfg.IdempotencyLease = time.Minute
	}
	if cfg.ProcessorTimeout == 0 {
		cfg.ProcessorTimeout = 10 * time.Second
	}
	if len(cfg.Dunning.Schedule) == 0 {
		cfg.Dunning = remit.DefaultDunning
	}
	c := &core{DB: db, Clock: clock, Log: log, Config: cfg, jobs: map[string]JobFunc{}, sealer: &sealer{},
		reactions: map[remit.EventType][]reaction{}, emailWake: make(chan struct{}, 1), Foreground: NewForeground(time.Now),
		counts: newCounts()}
	setEmailDefaults(&c.Config)
	c.webhooks = newWebhookState(&c.Config)
	db.OnChained(c.wakeWebhooks) // on PostgreSQL a change's events become dispatchable after commit (store/chain.go)
	a := &App{core: c, Access: &Access{core: c}, TestClocks: &TestClocks{c}, Jobs: &Jobs{c}, Ledger: &Ledger{c}, Usage: &Usage{core: c},
		Webhooks: &Webhooks{c}, Documents: &Documents{c}, Exports: &Exports{c}, Journal: &Journal{c}}
	a.Merchants = &Merchants{core: c, access: a.Access}
	a.Catalog = &Catalog{core: c, access: a.Access}
	a.Invoicing = &Invoicing{core: c, access: a.Access, ledger: a.Ledger, usage: a.Usage}
	a.Payments = &Payments{core: c, invoicing: a.Invoicing, access: a.Access, ledger: a.Ledger,
		sandbox: &processor.Sandbox{Ledger: db.SandboxCharges(), Latency: cfg.SandboxLatency, Clock: clock}}
	a.Invoicing.payments = a.Payments
	a.Catalog.payments = a.Payments
	a.Catalog.usage, a.Catalog.ents, a.Usage.catalog = a.Usage, newEntitlementCache(), a.Catalog
	a.Catalog.registerEntitlementReactions()
	a.Quotes = &Quotes{core: c, invoicing: a.Invoicing}
	a.Portal = &Portal{core: c, quotes: a.Quotes, catalog: a.Catalog, ledger: a.Ledger}
	a.CreditNotes = &CreditNotes{core: c, ledger: a.Ledger, payments: a.Payments}
	a.Quotes.creditNotes = a.CreditNotes
	a.Usage.creditNotes = a.CreditNotes
	a.Emails = &Emails{core: c, catalog: a.Catalog, documents: a.Documents}
	a.Operators = &Operators{core: c, invoicing: a.Invoicing, clocks: a.TestClocks, webhooks: a.Webhooks, payments: a.Payments, quotes: a.Quotes,
		creditNotes: a.CreditNotes, emails: a.Emails, documents: a.Documents, merchants: a.Merchants,
		ledger: a.Ledger, usage: a.Usage, jobs: a.Jobs}
	a.Quotes.emails = a.Emails
	a.Verification = &Verification{core: c}
	db.OnChainDispatch(a.Webhooks.dispatchChained) // the pass that chains events dispatches them (store/chain.go)
	a.Emails.registerReactions()
	a.Journal.registerReactions()
	a.Ledger.registerJobs()
	a.Invoicing.registerJobs()
	a.Quotes.registerJobs()
	a.Payments.registerJobs()
	return a
}

// TaxProvider is the deployment's tax provider: Config.TaxProvider, else the built-in table.
func (co *core) TaxProvider() taxprovider.Provider {
	if co.Config.TaxProvider != nil {
		return co.Config.TaxProvider
	}
	return taxprovider.Table{Rates: co.TaxTable()}
}

// taxCall bounds one tax provider call by the processor timeout (REMIT_PROCESSOR_TIMEOUT).
func (co *core) taxCall(ctx context.Context) (context.Context, context.CancelFunc) {
	if co.Config.ProcessorTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, co.Config.ProcessorTimeout)
}

// optString is s, or nil when it is empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// TaxTable is the tax rate table in force.
func (co *core) TaxTable() *tax.Table {
	if co.Config.Tax == nil {
		return defaultTax
	}
	return co.Config.Tax
}

var defaultTax = tax.Default()

// Emit appends an event of type typ (a constant of the catalog, remit.EventTypes) to the outbox
// in the transaction tx. obj is the resource after the change; it is delivered as data.object,
// with the scope's environment (remit.StampEnvironment).
func (co *core) Emit(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, typ remit.EventType, objectID string, obj any) error {
	return co.emit(ctx, tx, scope, now, typ, objectID, obj, nil)
}

// EmitUpdated is Emit for an update: the event's data also carries previousAttributes, the
// changed fields' values before it (remit.PatchRule.Previous).
func (co *core) EmitUpdated(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, typ remit.EventType, objectID string, obj any, previous map[string]any) error {
	return co.emit(ctx, tx, scope, now, typ, objectID, obj, previous)
}

func (co *core) emit(ctx context.Context, tx *store.Tx, scope remit.Scope, now time.Time, typ remit.EventType, objectID string, obj any, previous map[string]any) error {
	if !remit.KnownEventType(string(typ)) {
		return remit.Internal(fmt.Errorf("app.Emit: event type %q is not in remit.EventTypes (add it there and to docs/events.md)", typ))
	}
	payload := map[string]any{"object": remit.StampEnvironment(obj, scope.Environment)}
	if previous != nil {
		payload["previousAttributes"] = previous
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return remit.Internal(err)
	}
	ev := remit.Event{
		ID: remit.NewID("evt"), Object: "event", Type: string(typ), MerchantAccountID: scope.MerchantAccountID,
		Environment: scope.Environment, CreatedAt: now, Data: data,
	}
	actor := remit.ActorOf(ctx) // the one place an event gets its actor
	ev.Actor = &actor
	tx.AppendEvent(ev, objectID) // chained and written when the transaction commits
	notePreviewEvent(ctx, typ, obj)
	co.counts.events[typ].after(tx, scope.Environment)
	for _, react := range co.reactions[typ] {
		if err := react(ctx, tx, scope, now, obj); err != nil {
			return err
		}
	}
	tx.AfterCommit(co.wakeWebhooks) // this process's webhook worker dispatches it at once
	return nil
}

// Ready reports whether the store answers (an error when it does not) and whether migrations
// this binary knows are still to be applied to it.
func (co *core) Ready(ctx context.Context) (remit.Readiness, error) {
	r := remit.Readiness{Store: string(co.DB.Dialect())}
	if err := co.DB.Ping(ctx); err != nil {
		return r, err
	}
	pending, err := co.DB.MigrationsPending(ctx)
	r.MigrationsPending = pending
	return r, err
}

// Unavailable reports whether err says the store could not be reached or dropped the connection
// (store.IsUnavailable), or that the payment processor an action needed first could not answer
// (processor.ErrUnavailable: a payment method's detach): transient, nothing applied.
func (co *core) Unavailable(err error) bool {
	return store.IsUnavailable(err) || errors.Is(err, processor.ErrUnavailable)
}

// create adds a new resource v of the merchant account: check is its rule (every problem in one
// validation_failure, before anything else), stamp sets what creation sets at the account's now
// (its ID when generated, object, environment, account, creation time) and returns its ID, and
// insert stores it; the event typ that announces it is emitted in the same transaction. It
// returns the resource as created.
func create[T any](ctx context.Context, co *core, m remit.MerchantAccount, v *T, typ remit.EventType, check func(*remit.Problems),
	stamp func(now time.Time) string, insert func(ctx context.Context, tx *store.Tx, now time.Time) error) (T, error) {
	var probs remit.Problems
	if check(&probs); probs.Len() > 0 {
		var zero T
		return zero, probs.Err()
	}
	now := micro(co.Now(m))
	id := stamp(now)
	err := co.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := insert(ctx, tx, now); err != nil {
			return err
		}
		return co.Emit(ctx, tx, scopeOf(m), now, typ, id, *v)
	})
	return *v, err
}

// duplicateAs answers a store duplicate (store.ErrDuplicate) as the domain's conflict: the ID the
// caller chose for resource, in field, is taken. Any other error is returned as it is.
func duplicateAs(err error, resource, field, id string) error {
	if errors.Is(err, store.ErrDuplicate) {
		return remit.Duplicate(resource, field, id)
	}
	return err
}
