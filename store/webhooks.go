package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/remit-billing/remit"
)

// --- webhook endpoints ---

const endpointColumns = `merchant_account_id, id, environment, url, enabled_events, description, metadata, status,
	disabled_reason, disabled_at, created_at, secret, previous_secret, previous_secret_expires_at`

func scanEndpoint(row interface{ Scan(...any) error }) (e remit.WebhookEndpoint, secret string, err error) {
	e, secrets, err := scanEndpointSecrets(row)
	return e, secrets.Current, err
}

// EndpointSecrets are an endpoint's signing secrets as stored (sealed): the current one, and the
// one the last rotation replaced ("" when there is none).
type EndpointSecrets struct{ Current, Previous string }

func scanEndpointSecrets(row interface{ Scan(...any) error }) (e remit.WebhookEndpoint, secrets EndpointSecrets, err error) {
	var env, events, metadata string
	var desc, reason, previous sql.NullString
	var disabledAt, previousExpires sql.NullInt64
	var created int64
	err = row.Scan(&e.MerchantAccountID, &e.ID, &env, &e.URL, &events, &desc, &metadata, &e.Status,
		&reason, &disabledAt, &created, &secrets.Current, &previous, &previousExpires)
	if err != nil {
		return e, secrets, err
	}
	secrets.Previous, e.PreviousSecretExpiresAt = previous.String, timePtr(previousExpires)
	e.Object, e.Environment, e.CreatedAt = "webhook_endpoint", remit.Environment(env), remit.FromMicros(created)
	_ = json.Unmarshal([]byte(events), &e.EnabledEvents)
	_ = json.Unmarshal([]byte(metadata), &e.Metadata)
	if e.Metadata == nil {
		e.Metadata = map[string]string{}
	}
	if desc.Valid {
		e.Description = &desc.String
	}
	if reason.Valid {
		e.DisabledReason = &reason.String
	}
	if disabledAt.Valid {
		t := remit.FromMicros(disabledAt.Int64)
		e.DisabledAt = &t
	}
	return e, secrets, nil
}

// CreateWebhookEndpoint inserts an endpoint with its encrypted secret. A duplicate ID within the
// merchant account is a conflict.
func (q Q) CreateWebhookEndpoint(ctx context.Context, e remit.WebhookEndpoint, secret string) error {
	events, _ := json.Marshal(e.EnabledEvents)
	if e.Metadata == nil {
		e.Metadata = map[string]string{}
	}
	metadata, _ := json.Marshal(e.Metadata)
	_, err := q.exec(ctx, `INSERT INTO webhook_endpoints (merchant_account_id, id, environment, url, enabled_events,
		description, metadata, status, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.MerchantAccountID, e.ID, string(e.Environment), e.URL, string(events), e.Description, string(metadata),
		e.Status, secret, remit.Micros(e.CreatedAt), remit.Micros(e.CreatedAt))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateWebhookEndpoint")
}

// GetWebhookEndpoint returns the merchant account's endpoint and its encrypted secret, or
// not_found. Locked, it takes the row lock (PostgreSQL).
func (q Q) GetWebhookEndpoint(ctx context.Context, merchantAccountID, id string, read Read) (remit.WebhookEndpoint, string, error) {
	query := `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE merchant_account_id = $1 AND id = $2` + q.lockFor(read)
	e, secret, err := scanEndpoint(q.QueryRow(ctx, query, merchantAccountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, "", remit.NotFound("webhook endpoint", id, "")
	}
	return e, secret, wrapErr(err, "store.GetWebhookEndpoint")
}

// UpdateWebhookEndpoint writes what an update changes of an endpoint: its URL, the events it
// receives, its description and metadata.
func (q Q) UpdateWebhookEndpoint(ctx context.Context, e remit.WebhookEndpoint, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE webhook_endpoints SET url = $3, enabled_events = $4, description = $5, metadata = $6, updated_at = $7
		WHERE merchant_account_id = $1 AND id = $2`,
		e.MerchantAccountID, e.ID, e.URL, mustJSON(e.EnabledEvents), optText(e.Description), metadataText(e.Metadata), remit.Micros(at))
	return wrapErr(err, "store.UpdateWebhookEndpoint")
}

// GetWebhookEndpointSecrets is GetWebhookEndpoint with both of the endpoint's sealed secrets.
func (q Q) GetWebhookEndpointSecrets(ctx context.Context, merchantAccountID, id string, read Read) (remit.WebhookEndpoint, EndpointSecrets, error) {
	query := `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE merchant_account_id = $1 AND id = $2` + q.lockFor(read)
	e, secrets, err := scanEndpointSecrets(q.QueryRow(ctx, query, merchantAccountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, secrets, remit.NotFound("webhook endpoint", id, "")
	}
	return e, secrets, wrapErr(err, "store.GetWebhookEndpointSecrets")
}

// RotateWebhookEndpointSecret replaces an endpoint's secret with sealed. With previousUntil, the
// secret it replaces becomes the previous one, signing until then (merchant clock); without, the
// replaced secret is dropped (and any earlier previous one with it), and previousExpiredAt records
// when it stopped. A previous secret of an earlier rotation is dropped either way.
func (q Q) RotateWebhookEndpointSecret(ctx context.Context, merchantAccountID, id, sealed string, previousUntil *time.Time, at time.Time) error {
	keep, expires := false, remit.Micros(at)
	if previousUntil != nil {
		keep, expires = true, remit.Micros(*previousUntil)
	}
	n, err := q.exec(ctx, `UPDATE webhook_endpoints SET previous_secret = CASE WHEN $5 THEN secret ELSE NULL END,
		secret = $3, previous_secret_expires_at = $4, updated_at = $6 WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, id, sealed, expires, keep, remit.Micros(at))
	if err == nil && n == 0 {
		return remit.NotFound("webhook endpoint", id, "")
	}
	return wrapErr(err, "store.RotateWebhookEndpointSecret")
}

// EnableWebhookEndpoint marks a disabled endpoint enabled (clearing why and when it was disabled)
// and reports whether it was disabled.
func (q Q) EnableWebhookEndpoint(ctx context.Context, merchantAccountID, id string, at time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, disabled_at = NULL, updated_at = $3
		WHERE merchant_account_id = $1 AND id = $2 AND status = 'disabled'`, merchantAccountID, id, remit.Micros(at))
	return n > 0, wrapErr(err, "store.EnableWebhookEndpoint")
}

// ListWebhookEndpoints returns a page of the merchant account's endpoints, newest first.
func (q Q) ListWebhookEndpoints(ctx context.Context, merchantAccountID string, p ListPage) ([]remit.WebhookEndpoint, error) {
	query, args := pageQuery(`SELECT `+endpointColumns+` FROM webhook_endpoints WHERE merchant_account_id = $1`, []any{merchantAccountID}, p)
	return queryAll(ctx, q, "store.ListWebhookEndpoints", func(row interface{ Scan(...any) error }) (remit.WebhookEndpoint, error) {
		e, _, err := scanEndpoint(row)
		return e, err
	}, nil, query, args...)
}

// EnabledWebhookEndpoints returns every enabled endpoint of the merchant account, oldest first.
func (q Q) EnabledWebhookEndpoints(ctx context.Context, merchantAccountID string) ([]remit.WebhookEndpoint, error) {
	rows, err := q.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE merchant_account_id = $1 AND status = 'enabled'
		ORDER BY created_at, id`, merchantAccountID)
	if err != nil {
		return nil, wrapErr(err, "store.EnabledWebhookEndpoints")
	}
	defer rows.Close()
	var out []remit.WebhookEndpoint
	for rows.Next() {
		e, _, err := scanEndpoint(rows)
		if err != nil {
			return nil, wrapErr(err, "store.EnabledWebhookEndpoints")
		}
		out = append(out, e)
	}
	return out, wrapErr(rows.Err(), "store.EnabledWebhookEndpoints")
}

// DisableWebhookEndpoint marks an enabled endpoint disabled and reports whether it was enabled.
// Its pending deliveries that no worker holds end as failed at realNow; one in flight records its
// attempt, and any retry it schedules is closed when it falls due.
func (q Q) DisableWebhookEndpoint(ctx context.Context, merchantAccountID, id, reason string, at, realNow time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3, disabled_at = $4, updated_at = $4
		WHERE merchant_account_id = $1 AND id = $2 AND status = 'enabled'`, merchantAccountID, id, reason, remit.Micros(at))
	if err != nil || n == 0 {
		return false, wrapErr(err, "store.DisableWebhookEndpoint")
	}
	_, err = q.exec(ctx, `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = $3,
		last_error = 'The endpoint was disabled before this delivery succeeded.'
		WHERE merchant_account_id = $1 AND endpoint_id = $2 AND status = 'pending' AND lease_owner = ''`,
		merchantAccountID, id, remit.Micros(realNow))
	return true, wrapErr(err, "store.DisableWebhookEndpoint")
}

// --- events (reads and dispatch) ---

const eventColumns = `id, merchant_account_id, environment, type, data, created_at, sequence, hash, actor`

// eventTable is the events table's reads.
var eventTable = accountTable[remit.Event]{from: "events", columns: eventColumns, kind: "event", scan: scanning(scanEvent)}

func scanEvent(row interface{ Scan(...any) error }) (e remit.Event, err error) {
	var env, data string
	var created int64
	var seq sql.NullInt64
	var hash, actor sql.NullString
	if err = row.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created, &seq, &hash, &actor); err != nil {
		return e, err
	}
	e.Actor = remit.ParseActorColumn(actor.String, actor.Valid)
	e.Sequence, e.Hash = seq.Int64, hash.String
	e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
	return e, nil
}

// GetEvent returns the merchant account's event, or not_found. Like every read of events for the
// API and webhooks, it sees an event once it has its place in its chain (chain.go).
func (q Q) GetEvent(ctx context.Context, merchantAccountID, id string) (remit.Event, error) {
	return eventTable.getWhere(ctx, q, "store.GetEvent", merchantAccountID, `id = $2 AND sequence IS NOT NULL`, id, Unlocked)
}

// ListEvents returns a page of the merchant account's chained events (of type typ unless empty),
// newest first.
func (q Q) ListEvents(ctx context.Context, merchantAccountID, typ string, p ListPage) ([]remit.Event, error) {
	return eventTable.listFrom(ctx, q, "store.ListEvents", merchantAccountID, eventTable.selectAll()+` AND sequence IS NOT NULL`,
		[]any{merchantAccountID}, p, Eq{"type", typ})
}

// ClaimUndispatchedEvents locks and returns up to limit events not yet turned into deliveries,
// oldest first, of those that have their place in their chain. Several processes take different events (SKIP LOCKED on PostgreSQL; the single
// writer on SQLite). Mark them with MarkEventsDispatched in the same transaction.
func (q Q) ClaimUndispatchedEvents(ctx context.Context, limit int) ([]remit.Event, error) {
	return queryAll(ctx, q, "store.ClaimUndispatchedEvents", scanEvent, nil, `SELECT `+eventColumns+` FROM events
		WHERE dispatched_at IS NULL AND sequence IS NOT NULL ORDER BY created_at, id LIMIT `+itoa(limit)+q.SkipLocked())
}

// MarkEventsDispatched records that the events' deliveries exist. One UPDATE per event, by its
// primary key: measured, one UPDATE ... WHERE id IN (...) of the whole batch cost SQLite's single
// writer more than ten times as much per event under load.
func (q Q) MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error {
	for _, id := range ids {
		if _, err := q.exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = $1 AND dispatched_at IS NULL`, id, remit.Micros(at)); err != nil {
			return wrapErr(err, "store.MarkEventsDispatched")
		}
	}
	return nil
}

// --- deliveries ---

// InsertWebhookDelivery adds a pending delivery due at d.NextAttemptAt.
func (q Q) InsertWebhookDelivery(ctx context.Context, d remit.WebhookDelivery) error {
	_, err := q.exec(ctx, `INSERT INTO webhook_deliveries (id, merchant_account_id, environment, event_id, endpoint_id, trigger,
		status, next_attempt_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		d.ID, d.MerchantAccountID, string(d.Environment), d.EventID, d.EndpointID, d.Trigger, d.Status,
		remit.Micros(*d.NextAttemptAt), remit.Micros(d.CreatedAt))
	return wrapErr(err, "store.InsertWebhookDelivery")
}

const deliveryColumns = `id, merchant_account_id, environment, event_id, endpoint_id, trigger, status, attempts,
	last_attempt_at, next_attempt_at, response_status, last_error, created_at`

// deliveryTable is the webhook_deliveries table's reads.
var deliveryTable = accountTable[remit.WebhookDelivery]{from: "webhook_deliveries", columns: deliveryColumns, kind: "webhook delivery",
	scan: scanning(scanDelivery)}

func scanDelivery(row interface{ Scan(...any) error }) (d remit.WebhookDelivery, err error) {
	var env string
	var last, next sql.NullInt64
	var status sql.NullInt64
	var lastErr sql.NullString
	var created int64
	if err = row.Scan(&d.ID, &d.MerchantAccountID, &env, &d.EventID, &d.EndpointID, &d.Trigger, &d.Status, &d.Attempts,
		&last, &next, &status, &lastErr, &created); err != nil {
		return d, err
	}
	d.Object, d.Environment, d.CreatedAt = "webhook_delivery", remit.Environment(env), remit.FromMicros(created)
	d.LastAttemptAt, d.NextAttemptAt = timePtr(last), timePtr(next)
	if status.Valid {
		s := int(status.Int64)
		d.ResponseStatus = &s
	}
	if lastErr.Valid {
		d.LastError = &lastErr.String
	}
	d.AttemptHistory = []remit.WebhookAttempt{}
	return d, nil
}

// ListWebhookDeliveries returns a page of an event's deliveries, newest first, each with its
// attempts (oldest first).
func (q Q) ListWebhookDeliveries(ctx context.Context, merchantAccountID, eventID string, p ListPage) ([]remit.WebhookDelivery, error) {
	out, err := deliveryTable.listFrom(ctx, q, "store.ListWebhookDeliveries", merchantAccountID,
		deliveryTable.selectAll()+` AND event_id = $2`, []any{merchantAccountID, eventID}, p)
	if err != nil {
		return nil, err
	}
	return out, q.loadAttempts(ctx, out)
}

func (q Q) loadAttempts(ctx context.Context, ds []remit.WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	idx := make(map[string]int, len(ds))
	ids := make([]string, len(ds))
	for i, d := range ds {
		idx[d.ID] = i
		ids[i] = d.ID
	}
	in, args := inList(1, ids)
	type attempt struct {
		delivery string
		attempt  remit.WebhookAttempt
	}
	return eachRow(ctx, q, "store.loadAttempts", func(row scanner) (r attempt, err error) {
		a := &r.attempt
		var at int64
		var status, dur sql.NullInt64
		var msg sql.NullString
		if err := row.Scan(&r.delivery, &a.Attempt, &at, &a.WebhookTimestamp, &status, &dur, &msg); err != nil {
			return r, err
		}
		a.AttemptedAt = remit.FromMicros(at)
		if status.Valid {
			s := int(status.Int64)
			a.ResponseStatus = &s
		}
		if dur.Valid {
			ms := dur.Int64 / 1000
			a.DurationMs = &ms
		}
		if msg.Valid {
			a.Error = &msg.String
		}
		return r, nil
	}, func(r *attempt) error {
		i := idx[r.delivery]
		ds[i].AttemptHistory = append(ds[i].AttemptHistory, r.attempt)
		return nil
	}, `SELECT delivery_id, attempt, attempted_at, webhook_timestamp, response_status, duration_us, error
		FROM webhook_attempts WHERE delivery_id IN (`+in+`) ORDER BY delivery_id, attempt`, args...)
}

// DueDelivery is a delivery a worker claimed for one attempt, with what it needs to send it.
type DueDelivery struct {
	ID                string
	MerchantAccountID string
	EndpointID        string
	Attempt           int // the number of this attempt (1 for the first)
	LeaseOwner        string
	Event             remit.Event
	Endpoint          remit.WebhookEndpoint
	EndpointSecret    string // encrypted
	// EndpointPreviousSecret is the secret the endpoint's last rotation replaced, encrypted ("" when
	// none); it signs too while Endpoint.PreviousSecretSigns.
	EndpointPreviousSecret string
}

// ClaimDueDeliveries takes up to limit pending deliveries due at now for one attempt each: the
// attempt number is incremented, the attempt is recorded as started, and the delivery is leased to
// owner until leaseUntil (its next_attempt_at becomes leaseUntil, so that if the attempt never
// reports back the delivery is due again then). Several processes never claim the same delivery
// (SKIP LOCKED on PostgreSQL; the single writer on SQLite). Deliveries to endpoints that no longer
// exist or are disabled are closed as failed without an attempt. Call it in its own transaction and
// commit before sending.
func (q Q) ClaimDueDeliveries(ctx context.Context, now, leaseUntil time.Time, owner string, limit int) ([]DueDelivery, error) {
	found, err := queryAll(ctx, q, "store.ClaimDueDeliveries", scanDelivery, nil, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT `+itoa(limit)+q.SkipLocked(), remit.Micros(now))
	if err != nil {
		return nil, err
	}
	nowUS := remit.Micros(now)
	var out []DueDelivery
	for _, d := range found {
		ep, secrets, err := q.GetWebhookEndpointSecrets(ctx, d.MerchantAccountID, d.EndpointID, Unlocked)
		if err != nil && remit.ErrorCode(err) != remit.ENotFound {
			return nil, err
		}
		closeFailed := func(msg string) error {
			_, err := q.exec(ctx, `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_owner = '',
				last_error = $2, updated_at = $3 WHERE id = $1`, d.ID, msg, nowUS)
			return wrapErr(err, "store.ClaimDueDeliveries")
		}
		if err != nil || ep.Status != remit.EndpointEnabled {
			if err := closeFailed("The endpoint is disabled or gone; no attempt was made."); err != nil {
				return nil, err
			}
			continue
		}
		ev, err := q.GetEvent(ctx, d.MerchantAccountID, d.EventID)
		if remit.ErrorCode(err) == remit.ENotFound {
			if err := closeFailed("The event no longer exists; no attempt was made."); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		attempt := d.Attempts + 1
		// An earlier attempt that never reported back (its worker stopped or lost the lease).
		if _, err := q.exec(ctx, `UPDATE webhook_attempts SET finished = TRUE,
			error = 'No result was recorded: the worker stopped or lost its lease during the attempt.'
			WHERE delivery_id = $1 AND finished = FALSE`, d.ID); err != nil {
			return nil, wrapErr(err, "store.ClaimDueDeliveries")
		}
		if _, err := q.exec(ctx, `UPDATE webhook_deliveries SET attempts = $2, lease_owner = $3, lease_until = $4,
			next_attempt_at = $4, last_attempt_at = $5, updated_at = $5 WHERE id = $1`,
			d.ID, attempt, owner, remit.Micros(leaseUntil), nowUS); err != nil {
			return nil, wrapErr(err, "store.ClaimDueDeliveries")
		}
		if _, err := q.exec(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, webhook_timestamp)
			VALUES ($1, $2, $3, $4)`, d.ID, attempt, nowUS, now.Unix()); err != nil {
			return nil, wrapErr(err, "store.ClaimDueDeliveries")
		}
		out = append(out, DueDelivery{ID: d.ID, MerchantAccountID: d.MerchantAccountID, EndpointID: d.EndpointID, Attempt: attempt,
			LeaseOwner: owner, Event: ev, Endpoint: ep, EndpointSecret: secrets.Current, EndpointPreviousSecret: secrets.Previous})
	}
	return out, nil
}

// AttemptResult is the outcome of one attempt.
type AttemptResult struct {
	Status         remit.DeliveryStatus // the delivery's new status
	NextAttemptAt  *time.Time           // when pending
	ResponseStatus *int
	Duration       time.Duration
	Error          string
	FinishedAt     time.Time
}

// FinishAttempt records the outcome of the attempt a worker claimed. It reports false, changing
// nothing, when the worker no longer holds the delivery (its lease expired and another took it).
func (q Q) FinishAttempt(ctx context.Context, deliveryID, owner string, attempt int, r AttemptResult) (bool, error) {
	var next any
	if r.NextAttemptAt != nil {
		next = remit.Micros(*r.NextAttemptAt)
	}
	var status any
	if r.ResponseStatus != nil {
		status = *r.ResponseStatus
	}
	var msg any
	if r.Error != "" {
		msg = r.Error
	}
	n, err := q.exec(ctx, `UPDATE webhook_deliveries SET status = $4, next_attempt_at = $5, response_status = $6, last_error = $7,
		lease_owner = '', lease_until = 0, updated_at = $8 WHERE id = $1 AND lease_owner = $2 AND attempts = $3`,
		deliveryID, owner, attempt, r.Status, next, status, msg, remit.Micros(r.FinishedAt))
	if err != nil || n == 0 {
		return false, wrapErr(err, "store.FinishAttempt")
	}
	_, err = q.exec(ctx, `UPDATE webhook_attempts SET finished = TRUE, response_status = $3, duration_us = $4, error = $5
		WHERE delivery_id = $1 AND attempt = $2`, deliveryID, attempt, status, r.Duration.Microseconds(), msg)
	return true, wrapErr(err, "store.FinishAttempt")
}

// NextDeliveryDue returns when the earliest pending delivery falls due, or ok=false when none is
// pending.
func (q Q) NextDeliveryDue(ctx context.Context) (t time.Time, ok bool, err error) {
	return q.earliest(ctx, "store.NextDeliveryDue", `SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'`)
}

// HasUndispatchedEvents reports whether a chained event awaits dispatch (a cheap read that spares
// an idle worker a write transaction; an unchained one waits for its chaining pass, chain.go).
func (q Q) HasUndispatchedEvents(ctx context.Context) (bool, error) {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM events WHERE dispatched_at IS NULL AND sequence IS NOT NULL LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrapErr(err, "store.HasUndispatchedEvents")
}

func itoa(n int) string { return strconv.Itoa(n) }
