package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The scheduled work of a merchant account, as its operators see it: GET /v1/jobs (the failed
// ones above all), one job, and an operator's retry of a job failed for good (docs/reliability.md,
// "Scheduled work that fails"). The runner is scheduler.go.

// ListJobs lists the merchant account's jobs newest first, filtered by status and kind, paged by
// cursor.
//
// Errors: validation_failure (status, limit, cursor).
func (js *Jobs) ListJobs(ctx context.Context, m remit.MerchantAccount, in remit.JobQuery) (remit.List[remit.Job], error) {
	return listByStatus(ctx, js.core, m, "jobs", in.ListQuery, in.Status, remit.JobStatuses, func(page store.ListPage) ([]remit.Job, error) {
		return js.DB.Read(ctx).ListJobs(ctx, m.ID, store.JobFilter{Status: in.Status, Kind: in.Kind, ListPage: page})
	})
}

// GetJob returns one job of the merchant account.
//
// Errors: not_found.
func (js *Jobs) GetJob(ctx context.Context, m remit.MerchantAccount, jobID string) (remit.Job, error) {
	return js.DB.Read(ctx).GetJob(ctx, m.ID, jobID, store.Unlocked)
}

// RetryJob puts a job failed for good back to pending, due now on the merchant clock: the
// scheduler (or the next clock advance) runs it once more; if that attempt fails too it is failed
// again at once. It emits job.retried.
//
// Errors: not_found; conflict (the job is not failed: details.currentState).
func (js *Jobs) RetryJob(ctx context.Context, m remit.MerchantAccount, jobID string) (remit.Job, error) {
	state := func(j *remit.Job) (string, remit.JobStatus) { return j.ID, j.Status }
	return transition(ctx, js.DB, remit.JobStates, remit.ActionRetry, state, lockedRow(m.ID, jobID, store.Q.GetJob), func(ctx context.Context, tx *store.Tx, j *remit.Job) error {
		now := js.Now(m)
		if err := tx.RequeueJob(ctx, j.ID, now); err != nil {
			return err
		}
		j.Status, j.DueAt, j.FinishedAt = remit.JobPending, now.UTC(), nil
		return js.Emit(ctx, tx, scopeOf(m), now, remit.EventJobRetried, j.ID, j)
	})
}

// FailedJobCounts is the number of jobs failed for good, by kind, over every merchant account
// (remit_jobs_failed).
func (js *Jobs) FailedJobCounts(ctx context.Context) (map[string]int, error) {
	return js.DB.Read(ctx).FailedJobCounts(ctx)
}
