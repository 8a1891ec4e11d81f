package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/remit-billing/remit"
)

// Jobs scheduled on merchant clocks.

// InsertJob schedules work on a merchant account's clock.
func (q Q) InsertJob(ctx context.Context, j remit.Job, now time.Time) error {
	if len(j.Payload) == 0 {
		j.Payload = json.RawMessage("{}")
	}
	_, err := q.exec(ctx, `INSERT INTO jobs (id, merchant_account_id, kind, due_at, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		j.ID, j.MerchantAccountID, j.Kind, remit.Micros(j.DueAt), string(j.Payload), remit.Micros(now))
	return wrapErr(err, "store.InsertJob")
}

// LockJobRunner makes tx the only runner of the merchant account's jobs until it ends: on
// PostgreSQL a transaction-level advisory lock, so that job batches of several processes (their
// schedulers, concurrent clock advances) run one after another in due order instead of locking
// the same rows in different orders (two jobs of one grant, taken by two batches, deadlocked). On
// SQLite the store's one writer already does this.
func (tx *Tx) LockJobRunner(ctx context.Context, merchantAccountID string) error {
	if tx.d != Postgres {
		return nil
	}
	_, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "job_runner|"+merchantAccountID)
	return wrapErr(err, "store.LockJobRunner")
}

// ClaimDueJob locks and returns the earliest pending job of the merchant account due at or before
// upTo, or ok=false. Several processes never claim the same job (SKIP LOCKED on PostgreSQL; the
// single writer on SQLite).
func (q Q) ClaimDueJob(ctx context.Context, merchantAccountID string, upTo time.Time) (j remit.Job, ok bool, err error) {
	j, err = scanJob(q.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs
		WHERE status = 'pending' AND merchant_account_id = $1 AND due_at <= $2
		ORDER BY due_at, id LIMIT 1`+q.SkipLocked(), merchantAccountID, remit.Micros(upTo)))
	ok, err = foundOr(err, "store.ClaimDueJob")
	return j, ok, err
}

const jobColumns = `id, merchant_account_id, kind, status, payload, COALESCE(scheduled_at, due_at), due_at, attempts, last_error, created_at, done_at`

// jobTable is the jobs table's reads.
var jobTable = accountTable[remit.Job]{from: "jobs", columns: jobColumns, kind: "job", scan: scanning(scanJob)}

func scanJob(row interface{ Scan(...any) error }) (remit.Job, error) {
	var j remit.Job
	var payload, lastError, status string
	var scheduled, due, created int64
	var done sql.NullInt64
	err := row.Scan(&j.ID, &j.MerchantAccountID, &j.Kind, &status, &payload, &scheduled, &due, &j.Attempts, &lastError, &created, &done)
	if err != nil {
		return j, err
	}
	if payload == "" || payload == "null" {
		payload = "{}" // a job scheduled without a payload acts on nothing named
	}
	j.Object, j.Status, j.Payload = "job", remit.JobStatus(status), json.RawMessage(payload)
	j.ScheduledFor, j.DueAt, j.CreatedAt = remit.FromMicros(scheduled), remit.FromMicros(due), remit.FromMicros(created)
	if done.Valid {
		t := remit.FromMicros(done.Int64)
		j.FinishedAt = &t
	}
	j.LastError = jobError(lastError)
	return j, nil
}

// jobError reads last_error: the API's words as JSON, or (from a version of Remit before job
// retries) a raw error, which may name internals and is answered as an internal error.
func jobError(s string) *remit.JobError {
	if s == "" {
		return nil
	}
	var e remit.JobError
	if json.Unmarshal([]byte(s), &e) != nil || e.Code == "" {
		e = remit.JobFailure(errors.New(s))
	}
	return &e
}

// FinishJob marks a job done.
func (q Q) FinishJob(ctx context.Context, id string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE jobs SET status = 'done', attempts = attempts + 1, last_error = '', done_at = $2 WHERE id = $1`,
		id, remit.Micros(now))
	return wrapErr(err, "store.FinishJob")
}

// FailJob records a failed attempt of a job: with retryAt, the job stays pending and its next
// attempt is due then (the moment it is for is kept); without, it is failed for good at now.
func (q Q) FailJob(ctx context.Context, id string, now time.Time, why remit.JobError, retryAt *time.Time) error {
	msg, err := json.Marshal(why)
	if err != nil {
		return wrapErr(err, "store.FailJob")
	}
	if retryAt != nil {
		_, err = q.exec(ctx, `UPDATE jobs SET attempts = attempts + 1, last_error = $2, scheduled_at = COALESCE(scheduled_at, due_at), due_at = $3
			WHERE id = $1`, id, string(msg), remit.Micros(*retryAt))
		return wrapErr(err, "store.FailJob")
	}
	_, err = q.exec(ctx, `UPDATE jobs SET status = 'failed', attempts = attempts + 1, last_error = $2, done_at = $3 WHERE id = $1`,
		id, string(msg), remit.Micros(now))
	return wrapErr(err, "store.FailJob")
}

// RequeueJob puts a job back to pending, due at dueAt (an operator's retry of a failed job).
func (q Q) RequeueJob(ctx context.Context, id string, dueAt time.Time) error {
	_, err := q.exec(ctx, `UPDATE jobs SET status = 'pending', scheduled_at = COALESCE(scheduled_at, due_at), due_at = $2, done_at = NULL
		WHERE id = $1`, id, remit.Micros(dueAt))
	return wrapErr(err, "store.RequeueJob")
}

// GetJob reads one job of the merchant account (locked: FOR UPDATE on PostgreSQL).
func (q Q) GetJob(ctx context.Context, merchantAccountID, id string, read Read) (remit.Job, error) {
	return jobTable.get(ctx, q, "store.GetJob", merchantAccountID, id, read)
}

// JobFilter is a jobs list's filters and page.
type JobFilter struct {
	Status, Kind string
	ListPage
}

// ListJobs returns the merchant account's jobs newest first, filtered, one more than Limit.
func (q Q) ListJobs(ctx context.Context, merchantAccountID string, f JobFilter) ([]remit.Job, error) {
	return jobTable.list(ctx, q, "store.ListJobs", merchantAccountID, f.ListPage, Eq{"status", f.Status}, Eq{"kind", f.Kind})
}

// FailedJobCounts is the number of jobs failed for good, by kind, over every merchant account.
func (q Q) FailedJobCounts(ctx context.Context) (map[string]int, error) {
	rows, err := q.Query(ctx, `SELECT kind, COUNT(*) FROM jobs WHERE status = 'failed' GROUP BY kind`)
	if err != nil {
		return nil, wrapErr(err, "store.FailedJobCounts")
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, wrapErr(err, "store.FailedJobCounts")
		}
		out[kind] = n
	}
	return out, wrapErr(rows.Err(), "store.FailedJobCounts")
}

// CountFailedJobs is the number of the merchant account's jobs failed for good (one range of the
// partial index jobs_failed).
func (q Q) CountFailedJobs(ctx context.Context, merchantAccountID string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status = 'failed'`, merchantAccountID).Scan(&n)
	return n, wrapErr(err, "store.CountFailedJobs")
}

// MerchantsWithDueJobs lists merchant accounts that have a pending job due by their own clock at
// real time now.
func (q Q) MerchantsWithDueJobs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return queryStrings(ctx, q, "store.MerchantsWithDueJobs", `SELECT DISTINCT j.merchant_account_id FROM jobs j JOIN merchant_accounts m ON m.id = j.merchant_account_id
		WHERE j.status = 'pending' AND j.due_at <= $1 + m.clock_offset_us LIMIT $2`, remit.Micros(now), limit)
}

// SandboxClockShared reads a sandbox merchant account's clock offset as it stands, holding the
// row's share lock to the end of tx on PostgreSQL: a clock advance (which updates the row) then
// waits for tx, or tx for it. On SQLite the one writer orders them already.
func (tx *Tx) SandboxClockShared(ctx context.Context, merchantAccountID string) (time.Duration, error) {
	lock := ""
	if tx.d == Postgres {
		lock = " FOR SHARE"
	}
	var us int64
	err := tx.QueryRow(ctx, `SELECT clock_offset_us FROM merchant_accounts WHERE id = $1`+lock, merchantAccountID).Scan(&us)
	return time.Duration(us) * time.Microsecond, wrapErr(err, "store.SandboxClockShared")
}

// InsertJobOnce schedules j unless a job of its ID exists already (a job whose ID names its
// work, scheduled by whichever change first needs it); inserted reports whether it was new.
func (q Q) InsertJobOnce(ctx context.Context, j remit.Job, now time.Time) (inserted bool, err error) {
	if len(j.Payload) == 0 {
		j.Payload = json.RawMessage("{}")
	}
	n, err := q.exec(ctx, `INSERT INTO jobs (id, merchant_account_id, kind, due_at, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`, j.ID, j.MerchantAccountID, j.Kind, remit.Micros(j.DueAt), string(j.Payload), remit.Micros(now))
	return n > 0, wrapErr(err, "store.InsertJobOnce")
}
