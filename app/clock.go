package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The merchant clock (docs/api-conventions.md "Sandbox clock"): real time plus everything the sandbox account
// has advanced it by. It only moves forward. Advancing runs every job that falls due up to the new
// time, in due order, each job in the transaction that marks it done.

func (tc *TestClocks) testClock(m remit.MerchantAccount) remit.TestClock {
	return remit.TestClock{Object: "test_clock", MerchantAccountID: m.ID, Environment: string(m.Environment), Now: tc.Now(m), CreatedAt: m.CreatedAt}
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
func (tc *TestClocks) GetClock(ctx context.Context, scope remit.Scope) (remit.TestClock, error) {
	if err := sandboxOnly(scope); err != nil {
		return remit.TestClock{}, err
	}
	m, err := tc.DB.Read(ctx).GetMerchantAccount(ctx, scope.MerchantAccountID, store.Unlocked)
	if err != nil {
		return remit.TestClock{}, err
	}
	return tc.testClock(m), nil
}

// AdvanceClock moves the sandbox clock forward to `to`, or by `seconds`, and runs what fell due.
// Exactly one of to and seconds is given. The clock moves in the request's transaction; the jobs
// that fell due then run in due order, each in a transaction of its own, a failing one marked
// failed (RunDue, a follow-up), exactly as the scheduler runs them in production: a large advance
// (ten thousand renewals) never holds the store's writer in one transaction, and the answer comes
// once they all ran.
//
// Errors: forbidden (production), validation_failure (neither or both given, a time not in the
// future, more than 20 years).
func (tc *TestClocks) AdvanceClock(ctx context.Context, scope remit.Scope, to *time.Time, seconds *int64) (remit.TestClock, error) {
	if err := sandboxOnly(scope); err != nil {
		return remit.TestClock{}, err
	}
	var out remit.TestClock
	err := tc.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := tx.GetMerchantAccount(ctx, scope.MerchantAccountID, store.Locked)
		if err != nil {
			return err
		}
		now := tc.Now(m)
		var p remit.Problems
		target := remit.ClockTarget(now, to, seconds, &p)
		if err := p.Err(); err != nil {
			return err
		}
		m.ClockOffset += target.Sub(now)
		if err := tx.SetMerchantClockOffset(ctx, m.ID, m.ClockOffset, tc.Clock.Now()); err != nil {
			return err
		}
		out = tc.testClock(m)
		return tc.after(ctx, func(ctx context.Context) (any, error) {
			// A failing job is marked failed and the others run (RunDue); a store fault stops the
			// run, and what is left runs from the scheduler: the clock has moved either way, so
			// the advance answers as done (a retry would move it again).
			if _, err := tc.RunDue(ctx, m.ID, target); err != nil {
				tc.Log.ErrorContext(ctx, "jobs of a clock advance stopped; the scheduler runs the rest", "merchantAccountId", m.ID, "err", err.Error())
			}
			return nil, nil
		})
	})
	return out, err
}
