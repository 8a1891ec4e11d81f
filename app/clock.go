package app

import (
	"context"
	"fmt"
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

// maxAdvance bounds one advance so that time arithmetic cannot overflow.
const maxAdvance = 20 * 365 * 24 * time.Hour

// AdvanceClock moves the sandbox clock forward to `to`, or by `seconds`, and runs what fell due.
// Exactly one of to and seconds is given.
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
		if err := tx.SetMerchantClockOffset(ctx, m.ID, m.ClockOffset, tc.Clock.Now()); err != nil {
			return err
		}
		if err := tc.runDueIn(ctx, tx, m.ID, target); err != nil {
			return err
		}
		out = tc.testClock(m)
		return nil
	})
	return out, err
}
