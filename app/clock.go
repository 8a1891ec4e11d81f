package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The merchant clock (product.md "Sandbox clock"): real time plus everything the sandbox account
// has advanced it by. It only moves forward. Advancing runs every job that falls due up to the new
// time, in due order, each job in the transaction that marks it done.

// JobFunc runs one scheduled job inside tx. at is the job's due time, the moment it happens on the
// merchant clock.
type JobFunc func(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error

// RegisterJob installs the function that runs jobs of kind. Register every kind before serving.
func (a *App) RegisterJob(kind string, fn JobFunc) { a.jobs[kind] = fn }

// Schedule adds a job due at dueAt on the merchant account's clock, in the caller's transaction.
func (a *App) Schedule(ctx context.Context, tx *store.Tx, merchantAccountID, kind string, dueAt time.Time, payload any) error {
	if _, ok := a.jobs[kind]; !ok {
		return remit.Internal(fmt.Errorf("app.Schedule: no job function for kind %q", kind))
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return remit.Internal(err)
	}
	return tx.InsertJob(ctx, remit.Job{ID: remit.NewID("job"), MerchantAccountID: merchantAccountID, Kind: kind, DueAt: dueAt, Payload: raw}, a.Clock.Now())
}

// Now is the merchant account's current time.
func (a *App) Now(m remit.MerchantAccount) time.Time {
	return remit.MerchantNow(a.Clock, m.ClockOffset)
}

func (a *App) testClock(m remit.MerchantAccount) remit.TestClock {
	return remit.TestClock{Object: "test_clock", MerchantAccountID: m.ID, Environment: string(m.Environment), Now: a.Now(m), CreatedAt: m.CreatedAt}
}

func sandboxOnly(scope remit.Scope) error {
	if scope.Environment != remit.Sandbox {
		return remit.Errorf(remit.EForbidden, "Test clocks exist only in the sandbox environment; production runs on real time.")
	}
	return nil
}

// GetClock returns the sandbox clock of the scope's merchant account.
//
// Errors: forbidden (production).
func (a *App) GetClock(ctx context.Context, scope remit.Scope) (remit.TestClock, error) {
	if err := sandboxOnly(scope); err != nil {
		return remit.TestClock{}, err
	}
	m, err := a.DB.Read(ctx).GetMerchantAccount(ctx, scope.MerchantAccountID, false)
	if err != nil {
		return remit.TestClock{}, err
	}
	return a.testClock(m), nil
}

// maxAdvance bounds one advance so that time arithmetic cannot overflow.
const maxAdvance = 20 * 365 * 24 * time.Hour

// AdvanceClock moves the sandbox clock forward to `to`, or by `seconds`, and runs what fell due.
// Exactly one of to and seconds is given.
//
// Errors: forbidden (production), validation_failure (neither or both given, a time not in the
// future, more than 20 years).
func (a *App) AdvanceClock(ctx context.Context, scope remit.Scope, to *time.Time, seconds *int64) (remit.TestClock, error) {
	if err := sandboxOnly(scope); err != nil {
		return remit.TestClock{}, err
	}
	var out remit.TestClock
	err := a.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := tx.GetMerchantAccount(ctx, scope.MerchantAccountID, true)
		if err != nil {
			return err
		}
		now := a.Now(m)
		var p remit.Problems
		var target time.Time
		switch {
		case to != nil && seconds != nil:
			p.Body("to", "mutually_exclusive", "Give either 'to' or 'seconds', not both.")
			p.Body("seconds", "mutually_exclusive", "Give either 'to' or 'seconds', not both.")
		case to == nil && seconds == nil:
			p.Body("to", "required", "Give 'to' (a date-time) or 'seconds' (a positive integer) to advance the clock.")
		case to != nil:
			target = to.UTC()
			if !target.After(now) {
				p.Body("to", "not_in_future", fmt.Sprintf("The clock only moves forward: 'to' must be after the clock's current time %s.", now.Format(time.RFC3339Nano)))
			} else if target.Sub(now) > maxAdvance {
				p.Body("to", "too_far", "One advance may move the clock at most 20 years.")
			}
		default:
			if *seconds < 1 || time.Duration(*seconds) > maxAdvance/time.Second {
				p.Body("seconds", "out_of_range", fmt.Sprintf("seconds must be between 1 and %d (20 years).", int64(maxAdvance/time.Second)))
			} else {
				target = now.Add(time.Duration(*seconds) * time.Second)
			}
		}
		if err := p.Err(); err != nil {
			return err
		}
		m.ClockOffset += target.Sub(now)
		if err := tx.SetMerchantClockOffset(ctx, m.ID, m.ClockOffset, a.Clock.Now()); err != nil {
			return err
		}
		if err := a.runDueIn(ctx, tx, m.ID, target); err != nil {
			return err
		}
		out = a.testClock(m)
		return nil
	})
	return out, err
}

// runDueIn runs, in due order and in the caller's transaction tx (a clock advance), every pending
// job of the merchant account due at or before upTo, including jobs that running ones schedule. A
// failing job fails the caller.
func (a *App) runDueIn(ctx context.Context, tx *store.Tx, merchantAccountID string, upTo time.Time) error {
	for {
		found, _, err := a.runNextJob(ctx, tx, merchantAccountID, upTo)
		if err != nil || !found {
			return err
		}
	}
}

// RunDue runs in the background, in due order, every pending job of the merchant account due at
// or before upTo, each in a transaction of its own, and returns how many ran. A failing job is
// marked failed, so it neither blocks later jobs nor repeats.
func (a *App) RunDue(ctx context.Context, merchantAccountID string, upTo time.Time) (int, error) {
	ran := 0
	for {
		var found bool
		var failedJob string
		err := a.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var err error
			found, failedJob, err = a.runNextJob(ctx, tx, merchantAccountID, upTo)
			return err
		})
		switch {
		case err != nil && failedJob != "":
			a.Log.Error("scheduled job failed", "jobId", failedJob, "err", err)
			_ = a.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return tx.FinishJob(ctx, failedJob, a.Clock.Now(), err.Error())
			})
			continue
		case err != nil:
			return ran, err
		case !found:
			return ran, nil
		}
		ran++
	}
}

// runNextJob claims the merchant account's next job due at or before upTo and runs it in tx.
// found is false when none is due; failedJob names the job whose function failed.
func (a *App) runNextJob(ctx context.Context, tx *store.Tx, merchantAccountID string, upTo time.Time) (found bool, failedJob string, err error) {
	job, ok, err := tx.ClaimDueJob(ctx, merchantAccountID, upTo)
	if err != nil || !ok {
		return false, "", err
	}
	m, err := tx.GetMerchantAccount(ctx, merchantAccountID, false)
	if err != nil {
		return true, "", err
	}
	fn := a.jobs[job.Kind]
	if fn == nil {
		return true, "", tx.FinishJob(ctx, job.ID, a.Clock.Now(), "no job function for kind "+job.Kind)
	}
	scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
	if err := fn(ctx, tx, scope, job, job.DueAt); err != nil {
		return true, job.ID, fmt.Errorf("job %s (%s): %w", job.ID, job.Kind, err)
	}
	return true, "", tx.FinishJob(ctx, job.ID, a.Clock.Now(), "")
}

// RunScheduler runs due jobs of every merchant account every interval until ctx ends, and purges
// expired idempotency keys once a minute.
func (a *App) RunScheduler(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	lastPurge := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.Tick(ctx)
		if time.Since(lastPurge) > time.Minute {
			lastPurge = time.Now()
			if _, err := a.PurgeIdempotency(ctx); err != nil && ctx.Err() == nil {
				a.Log.Error("purge idempotency keys", "err", err)
			}
		}
	}
}

// Tick runs the jobs that are due now on every merchant clock once.
func (a *App) Tick(ctx context.Context) {
	ids, err := a.DB.Read(ctx).MerchantsWithDueJobs(ctx, a.Clock.Now(), 100)
	if err != nil {
		if ctx.Err() == nil {
			a.Log.Error("scheduler: list due merchants", "err", err)
		}
		return
	}
	for _, id := range ids {
		m, err := a.DB.Read(ctx).GetMerchantAccount(ctx, id, false)
		if err != nil {
			continue
		}
		if _, err := a.RunDue(ctx, id, a.Now(m)); err != nil && ctx.Err() == nil {
			a.Log.Error("scheduler: run due jobs", "merchantAccountId", id, "err", err)
		}
	}
}

// jobContext decodes a job's payload into payload and loads the merchant account it runs for:
// the start of every JobFunc that acts on one resource.
func jobContext(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, payload any) (remit.MerchantAccount, error) {
	if err := json.Unmarshal(job.Payload, payload); err != nil {
		return remit.MerchantAccount{}, fmt.Errorf("job %s (%s): payload: %w", job.ID, job.Kind, err)
	}
	return tx.GetMerchantAccount(ctx, scope.MerchantAccountID, false)
}
