package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// --- organizations and API keys ---

// CreateOrganization inserts an organization.
func (q Q) CreateOrganization(ctx context.Context, o remit.Organization) error {
	_, err := q.exec(ctx, `INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)`,
		o.ID, o.Name, remit.Micros(o.CreatedAt))
	return wrapErr(err, "store.CreateOrganization")
}

// CreateAPIKey inserts an API key (its hash only).
func (q Q) CreateAPIKey(ctx context.Context, k remit.APIKey) error {
	envs := make([]string, len(k.Environments))
	for i, e := range k.Environments {
		envs[i] = string(e)
	}
	_, err := q.exec(ctx, `INSERT INTO api_keys (id, organization_id, secret_hash, environments, created_at) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.OrganizationID, k.SecretHash, strings.Join(envs, ","), remit.Micros(k.CreatedAt))
	return wrapErr(err, "store.CreateAPIKey")
}

// GetAPIKey returns the key with id, or a not_found error.
func (q Q) GetAPIKey(ctx context.Context, id string) (k remit.APIKey, err error) {
	var envs string
	var created int64
	var revoked sql.NullInt64
	err = q.QueryRow(ctx, `SELECT id, organization_id, secret_hash, environments, created_at, revoked_at FROM api_keys WHERE id = $1`, id).
		Scan(&k.ID, &k.OrganizationID, &k.SecretHash, &envs, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return k, remit.NotFound("api key", id, "")
	}
	if err != nil {
		return k, wrapErr(err, "store.GetAPIKey")
	}
	finishAPIKey(&k, envs, created, revoked)
	return k, nil
}

func finishAPIKey(k *remit.APIKey, envs string, created int64, revoked sql.NullInt64) {
	for _, e := range strings.Split(envs, ",") {
		if e != "" {
			k.Environments = append(k.Environments, remit.Environment(e))
		}
	}
	k.CreatedAt = remit.FromMicros(created)
	if revoked.Valid {
		t := remit.FromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
}

// merchantColumnsM is merchantColumns qualified by the alias m, for joins.
var merchantColumnsM = qualify(merchantColumns, "m")

// qualify prefixes every column name of a select list with alias: "a, COALESCE(b, c)" becomes
// "m.a, COALESCE(m.b, c)".
func qualify(columns, alias string) string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(columns); i++ {
		if i < len(columns) {
			switch columns[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		c := strings.TrimSpace(columns[start:i])
		if rest, ok := strings.CutPrefix(c, "COALESCE("); ok {
			c = "COALESCE(" + alias + "." + rest
		} else {
			c = alias + "." + c
		}
		out = append(out, c)
		start = i + 1
	}
	return strings.Join(out, ", ")
}

// GetAPIKeyAndMerchant reads the key with keyID and the merchant account with merchantID in one
// statement: the authenticated, scoped request's two lookups (app.AuthenticateScoped). m is nil
// when the key exists but the merchant account does not. A missing key is not_found.
func (q Q) GetAPIKeyAndMerchant(ctx context.Context, keyID, merchantID string) (k remit.APIKey, m *remit.MerchantAccount, err error) {
	var envs string
	var created int64
	var revoked sql.NullInt64
	dest := []any{&k.ID, &k.OrganizationID, &k.SecretHash, &envs, &created, &revoked}
	var ma remit.MerchantAccount
	row := q.QueryRow(ctx, `SELECT k.id, k.organization_id, k.secret_hash, k.environments, k.created_at, k.revoked_at, `+merchantColumnsM+`
		FROM api_keys k CROSS JOIN merchant_accounts m WHERE k.id = $1 AND m.id = $2`, keyID, merchantID)
	ma, err = scanMerchant(prefixScanner{row: row, prefix: dest})
	if errors.Is(err, sql.ErrNoRows) {
		// Either is missing: the key alone tells which (the rare, failing path).
		k, err = q.GetAPIKey(ctx, keyID)
		return k, nil, err
	}
	if err != nil {
		return k, nil, wrapErr(err, "store.GetAPIKeyAndMerchant")
	}
	finishAPIKey(&k, envs, created, revoked)
	return k, &ma, nil
}

// prefixScanner scans a row whose first columns go to prefix and the rest to the caller's
// destinations.
type prefixScanner struct {
	row    *sql.Row
	prefix []any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.row.Scan(append(append(make([]any, 0, len(p.prefix)+len(dest)), p.prefix...), dest...)...)
}

// RevokeAPIKey marks a key revoked. Revoking an unknown key is not_found; revoking twice is a no-op.
func (q Q) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	n, err := q.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, remit.Micros(at))
	if err != nil {
		return wrapErr(err, "store.RevokeAPIKey")
	}
	if n == 0 {
		return remit.NotFound("api key", id, "")
	}
	return nil
}

// --- merchant accounts ---

const merchantColumns = `id, organization_id, environment, external_ref, display_name, legal_entity_type, country,
	merchant_mode, default_currency, status, platform_enabled, COALESCE(platform_merchant_account_id, ''), clock_offset_us,
	profile, created_at, updated_at, onboarding, claim_expires_at, claimed_at`

func scanMerchant(row interface{ Scan(...any) error }) (m remit.MerchantAccount, err error) {
	var env, profile, onboarding string
	var offset, created, updated int64
	var claimExpires, claimed sql.NullInt64
	err = row.Scan(&m.ID, &m.OrganizationID, &env, &m.ExternalRef, &m.DisplayName, &m.LegalEntityType, &m.Country,
		&m.MerchantMode, &m.DefaultCurrency, &m.Status, &m.PlatformEnabled, &m.PlatformMerchantAccountID, &offset,
		&profile, &created, &updated, &onboarding, &claimExpires, &claimed)
	if err != nil {
		return m, err
	}
	m.Environment = remit.Environment(env)
	m.ClockOffset = time.Duration(offset) * time.Microsecond
	m.Profile = json.RawMessage(profile)
	m.CreatedAt, m.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	if onboarding != "" {
		if err := json.Unmarshal([]byte(onboarding), &m.Onboarding); err != nil {
			return m, fmt.Errorf("merchant account %s: onboarding: %w", m.ID, err)
		}
	}
	m.ClaimExpiresAt, m.ClaimedAt = nullTime(claimExpires), nullTime(claimed)
	return m, nil
}

func nullTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := remit.FromMicros(v.Int64)
	return &t
}

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return remit.Micros(*t)
}

// CreateMerchantAccount inserts a merchant account. A duplicate external reference within the
// organization and environment is a conflict.
func (q Q) CreateMerchantAccount(ctx context.Context, m remit.MerchantAccount) error {
	if len(m.Profile) == 0 {
		m.Profile = json.RawMessage("{}")
	}
	var platform any
	if m.PlatformMerchantAccountID != "" {
		platform = m.PlatformMerchantAccountID
	}
	_, err := q.exec(ctx, `INSERT INTO merchant_accounts (id, organization_id, environment, external_ref, display_name,
		legal_entity_type, country, merchant_mode, default_currency, status, platform_enabled, platform_merchant_account_id,
		clock_offset_us, profile, created_at, updated_at, claim_expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		m.ID, m.OrganizationID, string(m.Environment), m.ExternalRef, m.DisplayName, m.LegalEntityType, m.Country,
		m.MerchantMode, m.DefaultCurrency, m.Status, m.PlatformEnabled, platform, int64(m.ClockOffset/time.Microsecond),
		string(m.Profile), remit.Micros(m.CreatedAt), remit.Micros(m.UpdatedAt), nullMicros(m.ClaimExpiresAt))
	if IsUniqueViolation(err) {
		return duplicate("external_ref")
	}
	return wrapErr(err, "store.CreateMerchantAccount")
}

// GetMerchantAccount returns the merchant account with id, or not_found. Locked, it takes the
// row lock (PostgreSQL), serializing changes to the account (its clock, its state).
func (q Q) GetMerchantAccount(ctx context.Context, id string, read Read) (remit.MerchantAccount, error) {
	query := `SELECT ` + merchantColumns + ` FROM merchant_accounts WHERE id = $1` + q.lockFor(read)
	m, err := scanMerchant(q.QueryRow(ctx, query, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, remit.NotFound("merchant account", id, "")
	}
	return m, wrapErr(err, "store.GetMerchantAccount")
}

// SetMerchantClockOffset stores the sandbox clock offset of a merchant account.
func (q Q) SetMerchantClockOffset(ctx context.Context, id string, offset time.Duration, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE merchant_accounts SET clock_offset_us = $2, updated_at = $3 WHERE id = $1`,
		id, int64(offset/time.Microsecond), remit.Micros(now))
	return wrapErr(err, "store.SetMerchantClockOffset")
}

// --- events outbox ---

// InsertEvent appends an event to the outbox. Call it in the transaction of the change.
func (q Q) InsertEvent(ctx context.Context, e remit.Event, objectID string) error {
	_, err := q.exec(ctx, `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.ID, e.MerchantAccountID, string(e.Environment), e.Type, objectID, string(e.Data), remit.Micros(e.CreatedAt))
	return wrapErr(err, "store.InsertEvent")
}

// ListEventsByObject returns a merchant account's events about one object, oldest first.
func (q Q) ListEventsByObject(ctx context.Context, merchantAccountID, objectID string) ([]remit.Event, error) {
	rows, err := q.Query(ctx, `SELECT id, merchant_account_id, environment, type, data, created_at FROM events
		WHERE merchant_account_id = $1 AND object_id = $2 ORDER BY created_at, id`, merchantAccountID, objectID)
	if err != nil {
		return nil, wrapErr(err, "store.ListEventsByObject")
	}
	defer rows.Close()
	var out []remit.Event
	for rows.Next() {
		var e remit.Event
		var env, data string
		var created int64
		if err := rows.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created); err != nil {
			return nil, wrapErr(err, "store.ListEventsByObject")
		}
		e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
		out = append(out, e)
	}
	return out, wrapErr(rows.Err(), "store.ListEventsByObject")
}

// --- jobs ---

// InsertJob schedules work on a merchant account's clock.
func (q Q) InsertJob(ctx context.Context, j remit.Job, now time.Time) error {
	if len(j.Payload) == 0 {
		j.Payload = json.RawMessage("{}")
	}
	_, err := q.exec(ctx, `INSERT INTO jobs (id, merchant_account_id, kind, due_at, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		j.ID, j.MerchantAccountID, j.Kind, remit.Micros(j.DueAt), string(j.Payload), remit.Micros(now))
	return wrapErr(err, "store.InsertJob")
}

// ClaimDueJob locks and returns the earliest pending job of the merchant account due at or before
// upTo, or ok=false. Several processes never claim the same job (SKIP LOCKED on PostgreSQL; the
// single writer on SQLite).
func (q Q) ClaimDueJob(ctx context.Context, merchantAccountID string, upTo time.Time) (j remit.Job, ok bool, err error) {
	var due int64
	var payload string
	err = q.QueryRow(ctx, `SELECT id, merchant_account_id, kind, due_at, payload, attempts FROM jobs
		WHERE status = 'pending' AND merchant_account_id = $1 AND due_at <= $2
		ORDER BY due_at, id LIMIT 1`+q.SkipLocked(), merchantAccountID, remit.Micros(upTo)).
		Scan(&j.ID, &j.MerchantAccountID, &j.Kind, &due, &payload, &j.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return j, false, nil
	}
	if err != nil {
		return j, false, wrapErr(err, "store.ClaimDueJob")
	}
	j.DueAt, j.Payload = remit.FromMicros(due), json.RawMessage(payload)
	return j, true, nil
}

// FinishJob marks a job done (errMsg empty) or failed.
func (q Q) FinishJob(ctx context.Context, id string, now time.Time, errMsg string) error {
	status := "done"
	if errMsg != "" {
		status = "failed"
	}
	_, err := q.exec(ctx, `UPDATE jobs SET status = $2, attempts = attempts + 1, last_error = $3, done_at = $4 WHERE id = $1`,
		id, status, errMsg, remit.Micros(now))
	return wrapErr(err, "store.FinishJob")
}

// MerchantsWithDueJobs lists merchant accounts that have a pending job due by their own clock at
// real time now.
func (q Q) MerchantsWithDueJobs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT DISTINCT j.merchant_account_id FROM jobs j JOIN merchant_accounts m ON m.id = j.merchant_account_id
		WHERE j.status = 'pending' AND j.due_at <= $1 + m.clock_offset_us LIMIT $2`, remit.Micros(now), limit)
	if err != nil {
		return nil, wrapErr(err, "store.MerchantsWithDueJobs")
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, wrapErr(err, "store.MerchantsWithDueJobs")
		}
		ids = append(ids, id)
	}
	return ids, wrapErr(rows.Err(), "store.MerchantsWithDueJobs")
}

// --- counters ---

// NextNumber returns the next value (1, 2, ...) of a gap-free counter. Call it inside the
// transaction that uses the number: the row lock serializes concurrent callers, and a rollback
// returns the number.
func (q Q) NextNumber(ctx context.Context, scope, name string) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `INSERT INTO counters (scope, name, value) VALUES ($1, $2, 1)
		ON CONFLICT (scope, name) DO UPDATE SET value = counters.value + 1 RETURNING value`, scope, name).Scan(&v)
	return v, wrapErr(err, fmt.Sprintf("store.NextNumber(%s)", name))
}

// --- settings ---

// Setting returns the named setting, creating it with create() the first time. Concurrent
// first calls agree on one value.
func (q Q) Setting(ctx context.Context, name string, create func() string) (string, error) {
	if _, err := q.exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, create()); err != nil {
		return "", wrapErr(err, "store.Setting")
	}
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v)
	return v, wrapErr(err, "store.Setting")
}

// KeysetClause is the condition and order of a newest-first keyset page over (created_at, id):
// append it to a WHERE that already filters by merchant account. argN is the number of the first
// placeholder it may use. With a zero position (first page) the condition is empty.
//
// The condition is a row-value comparison, (created_at, id) < (t, id): both dialects turn it into
// one range of a (merchant_account_id[, filter], created_at, id) index, so a page costs the same at
// any depth. The equivalent "created_at < t OR (created_at = t AND id < x)" does not: PostgreSQL
// cannot bound an index scan with the OR and walks every newer row (25 ms at depth 100,000 vs
// 0.4 ms; docs/performance.md "Settlements paging").
func KeysetClause(argN int, afterCreated int64, afterID string) (cond string, args []any, order string) {
	order = " ORDER BY created_at DESC, id DESC"
	if afterID == "" {
		return "", nil, order
	}
	cond = fmt.Sprintf(" AND (created_at, id) < ($%d, $%d)", argN, argN+1)
	return cond, []any{afterCreated, afterID}, order
}
