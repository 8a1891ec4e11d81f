package store

import (
	"context"

	"github.com/remit-billing/remit"
)

// The events outbox: events are written in the transaction of the change they describe.

// AppendEvent adds an event to the transaction's outbox. It is written when the transaction
// commits and gets its place in the merchant account's chain (sequence, hash) then (chain.go). An
// event appended inside a savepoint that is rolled back is dropped with it.
func (tx *Tx) AppendEvent(e remit.Event, objectID string) {
	if len(tx.events) == 0 {
		tx.BeforeCommit(tx.writeEvents)
	}
	tx.events = append(tx.events, pendingEvent{e, objectID})
}

type pendingEvent struct {
	remit.Event
	objectID string
}

// ListEventsByObject returns a merchant account's events about one object, oldest first.
func (q Q) ListEventsByObject(ctx context.Context, merchantAccountID, objectID string) ([]remit.Event, error) {
	return queryAll(ctx, q, "store.ListEventsByObject", scanEvent, nil, `SELECT `+eventColumns+` FROM events
		WHERE merchant_account_id = $1 AND object_id = $2 ORDER BY created_at, id`, merchantAccountID, objectID)
}
