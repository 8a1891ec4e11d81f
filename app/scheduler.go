package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Scheduled work on merchant clocks (docs/architecture.md "Events (the outbox) and scheduled
// work"): a job is due at a time of its merchant account's clock and runs in the transaction that
// marks it done, from the scheduler loop or when a sandbox clock is advanced.

// JobFunc runs one scheduled job inside tx. at is the job's due time, the moment it happens on the
// merchant clock.
type JobFunc func(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error

// RegisterJob installs the function that runs jobs of kind. Register every kind before serving.
func (co *core) RegisterJob(kind string, fn JobFunc) { co.jobs[kind] = fn }

// Schedule adds a job due at dueAt on the merchant account's clock, in the caller's transaction.
func (co *core) Schedule(ctx context.Context, tx *store.Tx, scope remit.Scope, kind string, dueAt time.Time, payload any) error {
	err := co.insertJob(ctx, tx, "app.Schedule", scope, kind, dueAt, payload)
	if err != nil || scope.Environment != remit.Sandbox {
		return err
	}
	return co.dueAfterAdvance(ctx, tx, scope.MerchantAccountID, dueAt)
}

// ScheduleBackground adds a job as Schedule does, but never runs it before the write that
// schedules it answers, even when it is due at once: background work that a request only starts
// (a price migration's first batch), which the scheduler loop picks up within its interval.
func (co *core) ScheduleBackground(ctx context.Context, tx *store.Tx, scope remit.Scope, kind string, dueAt time.Time, payload any) error {
	return co.insertJob(ctx, tx, "app.ScheduleBackground", scope, kind, dueAt, payload)
}

// insertJob adds a job of kind (a registered one: an internal error names caller
// otherwise) due at dueAt, with payload as its JSON, in tx: Schedule's and ScheduleBackground's
// insert.
func (co *core) insertJob(ctx context.Context, tx *store.Tx, caller string, scope remit.Scope, kind string, dueAt time.Time, payload any) error {
	if _, ok := co.jobs[kind]; !ok {
		return remit.Internal(fmt.Errorf("%s: no job function for kind %q", caller, kind))
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return remit.Internal(err)
	}
	return tx.InsertJob(ctx, remit.Job{ID: remit.NewID("job"), MerchantAccountID: scope.MerchantAccountID, Kind: kind, DueAt: dueAt, Payload: raw}, co.Clock.Now())
}

// dueAfterAdvance closes a race of the sandbox clock: a write that read the clock before an
// advance committed, and commits after the advance ran what fell due, schedules a job the
// advance never saw (an automatic finalization an hour after the old time, days ago by the new
// one). The job's transaction reads the clock as it stands, under the row's share lock (an advance
// waits for it, or it for the advance); when the job is due by it, the jobs due then run once the
// transaction committed, before the write answers (a follow-up; the job runner's own batches look
// again anyway). Production clocks never move.
func (co *core) dueAfterAdvance(ctx context.Context, tx *store.Tx, merchantAccountID string, dueAt time.Time) error {
	offset, err := tx.SandboxClockShared(ctx, merchantAccountID)
	if err != nil {
		return err
	}
	now := remit.MerchantNow(co.Clock, offset)
	if dueAt.After(now) {
		return nil
	}
	if _, owned := ctx.Value(followUpsKey{}).(*followUps); !owned || ctx.Value(jobRunnerKey{}) != nil {
		// No owner to run it after the commit (the scheduler runs it within a second), or the job
		// runner scheduled it: its batch claims it next, in the same transaction.
		return nil
	}
	return co.after(ctx, func(ctx context.Context) (any, error) {
		if _, err := co.RunDue(ctx, merchantAccountID, now); err != nil {
			co.Log.ErrorContext(ctx, "due jobs after a clock advance", "merchantAccountId", merchantAccountID, "err", err.Error())
		}
		return nil, nil
	})
}

// Now is the merchant account's current time.
func (co *core) Now(m remit.MerchantAccount) time.Time {
	return remit.MerchantNow(co.Clock, m.ClockOffset)
}

// jobRunnerKey marks the context of the job runner's batches.
type jobRunnerKey struct{}

// jobBatch bounds the jobs one transaction of RunDue runs: fewer commits for a backlog (ten
// thousand renewals at one clock advance), while no transaction grows without bound and other
// writes get the writer between batches.
const jobBatch = 50

// followUpParallel bounds the job runner's follow-ups that run at once (docs/benchmarks.md "The
// billing day"): a batch's charges each wait on the processor, so they run side by side, and the
// runner's next batches run meanwhile, instead of fifty processor calls one after another between
// two batches.
const followUpParallel = 64

// RunDue runs in the background, in due order, every pending job of the merchant account due at
// or before upTo, in transactions of up to jobBatch jobs, each job in a savepoint of its own, and
// returns how many ran. One runner at a time works through an account's jobs (store.LockJobRunner),
// whichever process it is in. A failing job is rolled back to its savepoint (what it registered to
// run after the commit too) and tried again later (remit.JobRetryAt), so it neither blocks later
// jobs nor repeats at once; after its last attempt it is failed for good (docs/reliability.md,
// "Scheduled work that fails"). What a job left to do after its commit (a payment attempt's charge)
// runs beside the next batches, up to followUpParallel at once; RunDue returns once it all ran,
// and looks again when it did (an outcome may schedule a job that is due already: a dunning retry).
func (co *core) RunDue(ctx context.Context, merchantAccountID string, upTo time.Time) (int, error) {
	pool := newFollowUpPool(co, followUpParallel)
	ran := 0
	for {
		n, more, err := co.runDueBatch(ctx, merchantAccountID, upTo, pool)
		ran += n
		switch {
		case err != nil:
			pool.wait()
			return ran, err
		case more:
		case pool.wait() == 0:
			return ran, nil
		}
	}
}

// runDueBatch runs up to jobBatch due jobs in one transaction, hands each job's follow-ups (a
// payment attempt's charge) to pool once it committed, and reports whether more may be due (a
// batch that ended early or was full).
//
// A batch ends after a job that took a hot row (a document counter, a customer's lots:
// store.Tx.TookHotRows), so that the runner takes rows in the order API writes take them (the
// resource's own first, shared ones last, then the commit) and never holds a shared row while it
// locks the next job's. A batch that lost a deadlock anyway is run again whole (store.RetryTx).
func (co *core) runDueBatch(ctx context.Context, merchantAccountID string, upTo time.Time, pool *followUpPool) (int, bool, error) {
	ctx = remit.WithActor(ctx, remit.SystemActor) // a job's events are the system's, whoever's clock advance ran it
	jobCtx, fu := withFollowUps(context.WithValue(ctx, jobRunnerKey{}, true))
	var ran int
	var more bool
	var marks []int // where each job's follow-ups start
	err := co.DB.RetryTx(jobCtx, func(ctx context.Context, tx *store.Tx) error {
		fu.reset()
		ran, more, marks = 0, true, marks[:0]
		if err := tx.LockJobRunner(ctx, merchantAccountID); err != nil {
			return err
		}
		for ran < jobBatch {
			marks = append(marks, fu.mark())
			found, err := co.runNextJob(ctx, tx, fu, merchantAccountID, upTo)
			if err != nil || !found {
				more = false
				return err
			}
			ran++
			if tx.JobBatchEnded() {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	for _, group := range fu.split(marks) {
		pool.start(context.WithoutCancel(ctx), group)
	}
	return ran, more, nil
}

// runNextJob claims the merchant account's next job due at or before upTo and runs it in a
// savepoint of tx; found is false when none is due. A job that fails is rolled back to its
// savepoint and its failure recorded (failJob). The error is the batch's own: the store went away,
// or the transaction lost a deadlock; the whole batch then rolls back.
func (co *core) runNextJob(ctx context.Context, tx *store.Tx, fu *followUps, merchantAccountID string, upTo time.Time) (found bool, err error) {
	job, ok, err := tx.ClaimDueJob(ctx, merchantAccountID, upTo)
	if err != nil || !ok {
		return false, err
	}
	m, err := tx.GetMerchantAccount(ctx, merchantAccountID, store.Unlocked)
	if err != nil {
		return true, err
	}
	fn := co.jobs[job.Kind]
	if fn == nil {
		return true, co.failJob(ctx, tx, m, job, remit.Internal(fmt.Errorf("no job function for kind %q", job.Kind)))
	}
	scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
	mark := fu.mark()
	jerr := tx.Savepoint(ctx, func() error { return fn(ctx, tx, scope, job, job.ScheduledFor) })
	switch {
	case jerr == nil:
		return true, tx.FinishJob(ctx, job.ID, co.Clock.Now())
	case store.IsRetryable(jerr), store.IsUnavailable(jerr), ctx.Err() != nil:
		return true, jerr
	}
	fu.truncate(mark)
	return true, co.failJob(ctx, tx, m, job, jerr)
}

// failJob records a failed attempt of job: its next attempt later on the merchant clock
// (remit.JobRetryAt), or, after its last one, failed for good.
func (co *core) failJob(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, job remit.Job, jerr error) error {
	attempt := job.Attempts + 1
	retryAt, retry := remit.JobRetryAt(attempt, co.Now(m))
	co.Log.ErrorContext(ctx, "scheduled job failed", "jobId", job.ID, "kind", job.Kind, "merchantAccountId", m.ID, "attempt", attempt,
		"retries", retry, "err", jerr.Error())
	why := remit.JobFailure(jerr)
	if retry {
		return tx.FailJob(ctx, job.ID, co.Clock.Now(), why, &retryAt)
	}
	if err := tx.FailJob(ctx, job.ID, co.Clock.Now(), why, nil); err != nil {
		return err
	}
	finished := co.Clock.Now().UTC()
	job.Object, job.Environment, job.Status, job.Attempts, job.LastError, job.FinishedAt = "job", m.Environment, remit.JobFailed, attempt, &why, &finished
	return co.Emit(ctx, tx, scopeOf(m), co.Now(m), remit.EventJobFailed, job.ID, job)
}

// RunScheduler runs due jobs of every merchant account every interval until ctx ends, and purges
// expired idempotency keys once a minute.
func (co *core) RunScheduler(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	lastPurge := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		co.Tick(ctx)
		if time.Since(lastPurge) > time.Minute {
			lastPurge = time.Now()
			if _, err := co.PurgeIdempotency(ctx); err != nil && ctx.Err() == nil {
				co.Log.Error("purge idempotency keys", "err", err)
			}
		}
	}
}

// Tick runs the jobs that are due now on every merchant clock once.
func (co *core) Tick(ctx context.Context) {
	ids, err := co.DB.Read(ctx).MerchantsWithDueJobs(ctx, co.Clock.Now(), 100)
	if err != nil {
		if ctx.Err() == nil {
			co.Log.Error("scheduler: list due merchants", "err", err)
		}
		return
	}
	for _, id := range ids {
		m, err := co.DB.Read(ctx).GetMerchantAccount(ctx, id, store.Unlocked)
		if err != nil {
			continue
		}
		if _, err := co.RunDue(ctx, id, co.Now(m)); err != nil && ctx.Err() == nil {
			co.Log.Error("scheduler: run due jobs", "merchantAccountId", id, "err", err)
		}
	}
}

// jobContext decodes a job's payload into payload and loads the merchant account it runs for:
// the start of every JobFunc that acts on one resource.
func jobContext(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, payload any) (remit.MerchantAccount, error) {
	if err := json.Unmarshal(job.Payload, payload); err != nil {
		return remit.MerchantAccount{}, fmt.Errorf("job %s (%s): payload: %w", job.ID, job.Kind, err)
	}
	return tx.GetMerchantAccount(ctx, scope.MerchantAccountID, store.Unlocked)
}

// jobTarget is jobContext and the load of the one resource the job acts on (locked, by the
// caller's load): found is false, with no error, when the resource is gone and the job has
// nothing to do.
func jobTarget[P, T any](ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job,
	load func(m remit.MerchantAccount, p P) (T, error)) (m remit.MerchantAccount, p P, v T, found bool, err error) {
	if m, err = jobContext(ctx, tx, scope, job, &p); err != nil {
		return m, p, v, false, err
	}
	v, err = load(m, p)
	if remit.ErrorCode(err) == remit.ENotFound {
		return m, p, v, false, nil
	}
	return m, p, v, err == nil, err
}
