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
