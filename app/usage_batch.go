package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// CreateUsageEvents records a batch of usage events (POST /v1/usage-events/batch, docs/usage.md
// "Batches") in one transaction, in the batch's order, each judged exactly as CreateUsageEvent
// judges it alone (recordUsageEvent, then the event's Judge): each runs in a savepoint of its own,
// so that a refused event (an answer that is not a fault: 404, 409, 422) rolls back only its own
// writes and the others are recorded. A repeat of an eventId, within the batch or of an event
// recorded before, is a duplicate when its values are the same and rejected (409) otherwise.
//
// Errors: a fault (internal_error, a lost deadlock that the caller's transaction retries) fails the
// whole batch, nothing recorded; the events' own errors are in their outcomes.
func (us *Usage) CreateUsageEvents(ctx context.Context, m remit.MerchantAccount, events []remit.UsageBatchEvent) ([]remit.UsageBatchOutcome, error) {
	var out []remit.UsageBatchOutcome
	err := us.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		out = make([]remit.UsageBatchOutcome, len(events)) // afresh on a retried transaction
		for i, ev := range events {
			o, err := us.batchEvent(ctx, tx, m, ev)
			if err != nil {
				return err
			}
			out[i] = o
		}
		return nil
	})
	return out, err
}

// batchEvent records one event of a batch in its own savepoint of tx. The error is a fault that
// fails the batch; the event's own refusal is its outcome.
func (us *Usage) batchEvent(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, ev remit.UsageBatchEvent) (remit.UsageBatchOutcome, error) {
	var created bool
	err := tx.Savepoint(ctx, func() error {
		var err error
		_, created, err = us.recordUsageEvent(ctx, tx, m, ev.Input)
		if ev.Judge != nil {
			err = ev.Judge(err)
		}
		return err
	})
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
