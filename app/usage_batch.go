package app

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// CreateUsageEvents records a batch of usage events (POST /v1/usage-events/batch, docs/usage.md
// "Batches") in one transaction, each judged exactly as CreateUsageEvent judges it alone
// (recordUsageEvent, then the event's Judge), so that a refused event (an answer that is not a
// fault: 404, 409, 422) leaves nothing behind and the others are recorded. The outcomes are in the
// batch's order; the events are recorded in lockOrder. A repeat of an eventId, within the batch or
// of an event recorded before, is a duplicate when its values are the same and rejected (409)
// otherwise.
//
// The batch first runs in one savepoint with no savepoint per event (fast): an event refused before
// it wrote anything (its rules, a repeat) needs no rollback. When one is refused after writing (an
// unknown customer, which the insert's foreign key finds and which aborts a PostgreSQL
// transaction; a total out of range) or has a Judge, the batch is rolled back to that savepoint
// and runs again with a savepoint per event (careful), which rolls back just that event. Savepoints
// are what a SQLite batch spends its time on (each copies the pages it changes to the statement
// journal), so the common batch takes one.
//
// Errors: a fault (internal_error, a lost deadlock that the caller's transaction retries) fails the
// whole batch, nothing recorded; the events' own errors are in their outcomes.
func (us *Usage) CreateUsageEvents(ctx context.Context, m remit.MerchantAccount, events []remit.UsageBatchEvent) ([]remit.UsageBatchOutcome, error) {
	var out []remit.UsageBatchOutcome
	order := lockOrder(events)
	careful := slices.ContainsFunc(events, func(ev remit.UsageBatchEvent) bool { return ev.Judge != nil })
	err := us.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		out = make([]remit.UsageBatchOutcome, len(events)) // afresh on a retried transaction
		if !careful {
			err := tx.Savepoint(ctx, func() error { return us.recordBatch(ctx, tx, m, events, order, out, false) })
			if !errors.Is(err, errCareful) {
				return err
			}
		}
		return us.recordBatch(ctx, tx, m, events, order, out, true)
	})
	return out, err
}

// errCareful stops a batch's fast pass: an event was refused after it wrote.
var errCareful = errors.New("app: a usage batch needs a savepoint per event")

// recordBatch records the events in order into out; careful runs each in a savepoint of its own.
func (us *Usage) recordBatch(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, events []remit.UsageBatchEvent, order []int, out []remit.UsageBatchOutcome, careful bool) error {
	for _, i := range order {
		o, err := us.batchEvent(ctx, tx, m, events[i], careful)
		if err != nil {
			return err
		}
		out[i] = o
	}
	return nil
}

// lockOrder is the order in which a batch's events are recorded: by customer and meter (the
// running total whose row lock each event takes until the commit), keeping the batch's order within
// one, so that concurrent batches take those locks in one order and do not deadlock on PostgreSQL.
// When an eventId repeats within the batch the batch's own order is kept, so that the first copy
// is the one recorded and the repeat is judged against it, as the single route would judge them
// sent one after the other.
func lockOrder(events []remit.UsageBatchEvent) []int {
	order := make([]int, len(events))
	seen := make(map[string]bool, len(events))
	repeats := false
	for i, ev := range events {
		order[i] = i
		repeats = repeats || seen[ev.Input.EventID]
		seen[ev.Input.EventID] = true
	}
	if repeats {
		return order
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := events[a].Input, events[b].Input
		return cmp.Or(cmp.Compare(ea.CustomerID, eb.CustomerID), cmp.Compare(ea.MeterID, eb.MeterID))
	})
	return order
}

// batchEvent records one event of a batch, in a savepoint of its own when careful. The error is a
// fault that fails the batch, or errCareful (not careful: the event was refused after writing);
// the event's own refusal is its outcome.
func (us *Usage) batchEvent(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, ev remit.UsageBatchEvent, careful bool) (remit.UsageBatchOutcome, error) {
	var created, wrote bool
	record := func() error {
		var err error
		_, created, wrote, err = us.recordUsageEvent(ctx, tx, m, ev.Input)
		if ev.Judge != nil {
			err = ev.Judge(err)
		}
		return err
	}
	var err error
	if careful {
		err = tx.Savepoint(ctx, record)
	} else if err = record(); err != nil && wrote && remit.ErrorCode(err) != remit.EInternal {
		return remit.UsageBatchOutcome{}, errCareful
	}
	switch {
	case err == nil && created:
		return remit.UsageBatchOutcome{Status: remit.UsageBatchCreated}, nil
	case err == nil:
		return remit.UsageBatchOutcome{Status: remit.UsageBatchDuplicate}, nil
	case remit.ErrorCode(err) == remit.EInternal:
		return remit.UsageBatchOutcome{}, err
	}
	return remit.UsageBatchOutcome{Status: remit.UsageBatchRejected, Err: err}, nil
}
