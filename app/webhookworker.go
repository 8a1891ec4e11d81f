package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/store"
)

// The webhook delivery worker. Work flows from the events outbox in two steps, each safe to run
// in several serve processes on one PostgreSQL store:
//
//  1. Dispatch: each undispatched event becomes one pending delivery (wd_) per enabled endpoint of
//     its merchant account subscribed to its type ("*" or the exact type) and created no later than
//     the event; the event is marked dispatched in the same transaction, so an event is dispatched
//     exactly once and never skipped. Events are claimed with SKIP LOCKED on PostgreSQL.
//  2. Attempts: a worker claims due deliveries (SKIP LOCKED) in a short transaction that numbers
//     the attempt, records it as started and leases the delivery (next_attempt_at = the lease's
//     end), commits, and only then sends the request. The answer is recorded in a second
//     transaction that checks the worker still holds the lease. A worker that dies mid-attempt
//     leaves the delivery due again when the lease ends: the next worker makes the next attempt
//     (a new attempt number). So each attempt is sent by one worker only, and a crash means a
//     retry, never a lost event. Delivery is at least once: a receiver that answered just before
//     the crash sees the event again, with the same webhook-id.
//
// Retry timing is real time (a.Clock), never the merchant clock. After attempt n fails, attempt
// n+1 is due after WebhookRetry[n-1] ± 10 % jitter; when the schedule is used up the delivery is
// failed. A 2xx answer succeeds; 410 Gone fails the delivery and disables the endpoint.

// DefaultWebhookRetry is the default retry schedule (REMIT_WEBHOOK_RETRY_SCHEDULE).
var DefaultWebhookRetry = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// ParseRetrySchedule parses a comma-separated list of positive durations ("5s,5m,30m").
func ParseRetrySchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("retry schedule: %q is not a positive duration such as 5s or 30m", part)
		}
		out = append(out, d)
	}
	if len(out) > 50 {
		return nil, fmt.Errorf("retry schedule: at most 50 retries")
	}
	return out, nil
}

const (
	webhookMaxTimeout   = 10 * time.Second // no answer within this is a failed attempt
	webhookResponseMax  = 64 << 10         // bytes of an answer read (and discarded)
	webhookDispatchSize = 100              // events per dispatch transaction
)

type webhookState struct {
	wake          chan struct{}
	guarded, open *http.Client
	leftovers     atomic.Int64 // real time (Unix ns) events were last checked for leftovers to chain
}

func newWebhookState(cfg *Config) *webhookState {
	if cfg.WebhookRetry == nil {
		cfg.WebhookRetry = DefaultWebhookRetry
	}
	if cfg.WebhookLease <= 0 {
		cfg.WebhookLease = time.Minute
	}
	if cfg.WebhookPoll <= 0 {
		cfg.WebhookPoll = time.Second
	}
	if cfg.WebhookConcurrency <= 0 {
		cfg.WebhookConcurrency = 16
	}
	return &webhookState{
		wake:    make(chan struct{}, 1),
		guarded: newWebhookClient(true, cfg.WebhookConcurrency),
		open:    newWebhookClient(false, cfg.WebhookConcurrency),
	}
}

// wakeWebhooks tells this process's worker that there may be work (an event committed, a resend).
func (co *core) wakeWebhooks() {
	select {
	case co.webhooks.wake <- struct{}{}:
	default:
	}
}

// webhookTimeout is how long an attempt waits for an answer: 10 s, or less with a short lease so
// that an attempt always ends before its lease does.
func (wh *Webhooks) webhookTimeout() time.Duration {
	return min(webhookMaxTimeout, wh.Config.WebhookLease/2)
}

// DispatchEvents turns every undispatched event into its deliveries and returns how many events it
// dispatched. At most once per poll interval it first chains the events a failed step after commit
// left unchained (store.ChainLeftovers; not at every wake-up, when the events found unchained are
// mostly those of requests chaining them right then): only chained events are dispatched.
func (wh *Webhooks) DispatchEvents(ctx context.Context) (int, error) {
	if now, last := time.Now().UnixNano(), wh.webhooks.leftovers.Load(); now-last >= int64(wh.Config.WebhookPoll) &&
		wh.webhooks.leftovers.CompareAndSwap(last, now) {
		if err := wh.DB.ChainLeftovers(ctx); err != nil {
			return 0, err
		}
	}
	if pending, err := wh.DB.Read(ctx).HasUndispatchedEvents(ctx); err != nil || !pending {
		return 0, err
	}
	total := 0
	for {
		n := 0
		err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			evs, err := tx.ClaimUndispatchedEvents(ctx, webhookDispatchSize)
			if err != nil {
				return err
			}
			n = len(evs)
			now := wh.Clock.Now().Truncate(time.Microsecond)
			if err := wh.insertDeliveries(ctx, tx, evs, now); err != nil {
				return err
			}
			ids := make([]string, len(evs))
			for i, ev := range evs {
				ids[i] = ev.ID
			}
			return tx.MarkEventsDispatched(ctx, ids, now)
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < webhookDispatchSize {
			return total, nil
		}
	}
}

// insertDeliveries makes the deliveries of evs, dispatched at now: one to each enabled endpoint
// subscribed to an event's type that existed when the event happened. The caller marks the events
// dispatched.
func (wh *Webhooks) insertDeliveries(ctx context.Context, tx *store.Tx, evs []remit.Event, now time.Time) error {
	endpoints := map[string][]remit.WebhookEndpoint{}
	for _, ev := range evs {
		eps, ok := endpoints[ev.MerchantAccountID]
		if !ok {
			var err error
			if eps, err = tx.EnabledWebhookEndpoints(ctx, ev.MerchantAccountID); err != nil {
				return err
			}
			endpoints[ev.MerchantAccountID] = eps
		}
		for _, ep := range eps {
			if ep.Subscribed(ev.Type) && !ep.CreatedAt.After(ev.CreatedAt) {
				if err := tx.InsertWebhookDelivery(ctx, newDelivery(ev, ep.ID, remit.TriggerDispatch, now)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dispatchChained is the chaining pass's dispatch (store.DB.OnChainDispatch): on PostgreSQL the
// pass that gives events their links also makes their deliveries, in its transaction.
func (wh *Webhooks) dispatchChained(ctx context.Context, tx *store.Tx, evs []remit.Event) (time.Time, error) {
	now := wh.Clock.Now().Truncate(time.Microsecond)
	return now, wh.insertDeliveries(ctx, tx, evs, now)
}

// claim is one batch of claimed deliveries.
type claim struct {
	deliveries []store.DueDelivery
	at         time.Time // when claimed: the attempts' webhook-timestamp
	leaseUntil time.Time
}

func (wh *Webhooks) claimDeliveries(ctx context.Context, limit int) (claim, error) {
	now := wh.Clock.Now().Truncate(time.Microsecond)
	c := claim{at: now, leaseUntil: now.Add(wh.Config.WebhookLease)}
	// A cheap read first spares an idle worker a write transaction.
	if next, ok, err := wh.DB.Read(ctx).NextDeliveryDue(ctx); err != nil || !ok || next.After(now) {
		return c, err
	}
	owner := remit.NewID("lease")
	err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		c.deliveries, err = tx.ClaimDueDeliveries(ctx, now, c.leaseUntil, owner, limit)
		return err
	})
	return c, err
}

// DeliverDue dispatches every undispatched event and makes every attempt that is due now (up to
// WebhookConcurrency at a time), including retries that fall due meanwhile, and returns how many
// attempts it made. The worker loop does the same continuously; tests call this to run it
// synchronously.
func (wh *Webhooks) DeliverDue(ctx context.Context) (int, error) {
	total := 0
	for {
		if _, err := wh.DispatchEvents(ctx); err != nil {
			return total, err
		}
		c, err := wh.claimDeliveries(ctx, wh.Config.WebhookConcurrency)
		if err != nil {
			return total, err
		}
		if len(c.deliveries) == 0 {
			return total, nil
		}
		var wg sync.WaitGroup
		for _, d := range c.deliveries {
			wg.Add(1)
			go func() { defer wg.Done(); wh.attempt(context.WithoutCancel(ctx), d, c) }()
		}
		wg.Wait()
		total += len(c.deliveries)
	}
}

// RunWebhooks runs the delivery worker until ctx ends: it dispatches events and keeps up to
// WebhookConcurrency attempts in flight. It dispatches when this process commits an event and at
// least every WebhookPoll (for events other processes wrote); it claims deliveries in batches, when
// nothing is in flight or a quarter of the slots are free, waking when an attempt ends, when the
// next retry falls due, and at least every WebhookPoll. When ctx ends it stops claiming and waits
// for the attempts in flight.
func (wh *Webhooks) RunWebhooks(ctx context.Context) {
	conc := wh.Config.WebhookConcurrency
	batch := max(1, conc/4)
	inFlight := 0
	done := make(chan struct{}, conc)
	var wg sync.WaitGroup
	defer wg.Wait()
	dispatch, lastDispatch := true, time.Time{}
	for ctx.Err() == nil {
		if dispatch || time.Since(lastDispatch) >= wh.Config.WebhookPoll {
			dispatch, lastDispatch = false, time.Now()
			if _, err := wh.DispatchEvents(ctx); err != nil && ctx.Err() == nil {
				wh.Log.Error("webhooks: dispatch events", "err", err)
			}
		}
		wait := wh.Config.WebhookPoll
		if free := conc - inFlight; free >= batch || (free > 0 && inFlight == 0) {
			c, err := wh.claimDeliveries(ctx, free)
			if err != nil && ctx.Err() == nil {
				wh.Log.Error("webhooks: claim deliveries", "err", err)
			}
			for _, d := range c.deliveries {
				inFlight++
				wg.Add(1)
				go func() {
					defer wg.Done()
					wh.attempt(context.WithoutCancel(ctx), d, c)
					done <- struct{}{}
				}()
			}
			if err == nil && len(c.deliveries) == free {
				continue // there may be more due
			}
			if next, ok, err := wh.DB.Read(ctx).NextDeliveryDue(ctx); err == nil && ok {
				wait = min(wait, max(next.Sub(wh.Clock.Now()), time.Millisecond))
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-wh.webhooks.wake:
			dispatch = true
		case <-done:
			inFlight--
		case <-t.C:
		}
		t.Stop()
		for drained := false; !drained; { // count every attempt that ended meanwhile
			select {
			case <-done:
				inFlight--
			default:
				drained = true
			}
		}
	}
	for ; inFlight > 0; inFlight-- {
		<-done
	}
}

// attempt sends one claimed attempt and records its outcome. Its span continues the trace of the
// write that emitted the event, when this process remembers it (telemetry.Resume).
func (wh *Webhooks) attempt(ctx context.Context, d store.DueDelivery, c claim) {
	ctx, span := telemetry.Start(telemetry.Resume(ctx, d.Event.ID), "webhook.deliver", trace.SpanKindInternal)
	defer span.End()
	if span.IsRecording() {
		telemetry.Strings(span, "remit.delivery_id", d.ID, "remit.event_id", d.Event.ID, "remit.event_type", d.Event.Type,
			"remit.endpoint_id", d.EndpointID, "remit.merchant_account_id", d.MerchantAccountID)
		telemetry.SetInt(span, "remit.attempt", d.Attempt)
	}
	start := time.Now()
	code, errMsg := wh.send(ctx, d, c)
	telemetry.SetInt(span, "http.response.status_code", code)
	elapsed := time.Since(start)
	finished := wh.Clock.Now().Truncate(time.Microsecond)
	r := store.AttemptResult{Duration: elapsed, Error: errMsg, FinishedAt: finished}
	if code != 0 {
		r.ResponseStatus = &code
	}
	gone := false
	switch {
	case errMsg == "" && code >= 200 && code < 300:
		r.Status = remit.DeliverySucceeded
	case errMsg == "" && code == http.StatusGone:
		r.Status, r.Error, gone = remit.DeliveryFailed, "The endpoint answered 410 Gone; it was disabled.", true
	default:
		if r.Error == "" {
			r.Error = fmt.Sprintf("The endpoint answered %d; only 2xx ends a delivery.", code)
		}
		if d.Attempt <= len(wh.Config.WebhookRetry) {
			wait := wh.Config.WebhookRetry[d.Attempt-1]
			wait = time.Duration(float64(wait) * (0.9 + 0.2*rand.Float64())) // ±10 % jitter
			next := finished.Add(wait).Truncate(time.Microsecond)
			r.Status, r.NextAttemptAt = remit.DeliveryPending, &next
		} else {
			r.Status = remit.DeliveryFailed
		}
	}
	err := wh.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		ok, err := tx.FinishAttempt(ctx, d.ID, d.LeaseOwner, d.Attempt, r)
		if err != nil || !ok {
			if err == nil {
				wh.Log.WarnContext(ctx, "webhooks: attempt finished after its lease was taken over", "deliveryId", d.ID, "attempt", d.Attempt)
			}
			return err
		}
		if !gone {
			return nil
		}
		m, err := tx.GetMerchantAccount(ctx, d.MerchantAccountID, store.Unlocked)
		if err != nil {
			return err
		}
		scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
		_, err = wh.disableEndpoint(ctx, tx, scope, wh.Now(m).Truncate(time.Microsecond), d.EndpointID, remit.DisabledGone)
		return err
	})
	if err != nil {
		// The delivery stays leased; it is retried when the lease ends.
		wh.Log.ErrorContext(ctx, "webhooks: record attempt", "deliveryId", d.ID, "attempt", d.Attempt, "err", err)
		return
	}
	telemetry.Strings(span, "remit.delivery_outcome", string(r.Status))
	wh.Log.DebugContext(ctx, "webhook attempt", "deliveryId", d.ID, "eventId", d.Event.ID, "endpointId", d.EndpointID,
		"attempt", d.Attempt, "status", code, "outcome", r.Status, "duration", elapsed, "error", r.Error)
}

// send makes the HTTP request of one attempt and returns the answer's status, or a message saying
// why there was none.
func (wh *Webhooks) send(ctx context.Context, d store.DueDelivery, c claim) (int, string) {
	body, err := json.Marshal(d.Event)
	if err != nil {
		return 0, "The event could not be encoded."
	}
	secrets, err := wh.signingSecrets(ctx, d, c.at)
	if err != nil {
		return 0, "Not sent: " + err.Error() + "."
	}
	ts := c.at.Unix()
	sig, err := signatureHeader(secrets, d.Event.ID, ts, body)
	if err != nil {
		return 0, "Not sent: " + err.Error() + "."
	}
	u, err := url.Parse(d.Endpoint.URL)
	if err != nil {
		return 0, "Not sent: the endpoint URL does not parse."
	}
	if d.Endpoint.Environment == remit.Production && u.Scheme != "https" {
		return 0, "Not sent: production endpoints must use https."
	}
	// The attempt must end before the lease does, so that no other worker makes it meanwhile.
	timeout := wh.webhookTimeout()
	if left := c.leaseUntil.Sub(wh.Clock.Now()) - wh.Config.WebhookLease/4; left < timeout {
		timeout = left
	}
	if timeout <= 0 {
		return 0, "Not sent: the worker's lease ran out before the attempt could start."
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, "Not sent: the endpoint URL is not usable."
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Remit-Webhooks/1")
	h.Set("webhook-id", d.Event.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	h.Set("Remit-Delivery-Id", d.ID)
	h.Set("Remit-Delivery-Attempt", strconv.Itoa(d.Attempt))
	client := wh.webhooks.guarded
	if wh.allowPrivate(d.Endpoint.Environment) {
		client = wh.webhooks.open
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, describeSendError(err, timeout)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, webhookResponseMax))
	res.Body.Close()
	return res.StatusCode, ""
}
