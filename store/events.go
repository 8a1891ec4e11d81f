package store

import (
	"context"
	"slices"

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

// EventMark is the place the next appended event takes (for EventsAt).
func (tx *Tx) EventMark() int { return len(tx.events) }

// EventsAt runs fn and moves the events it appends to mark, ahead of those appended since: a step
// done last because it takes an account-wide hot row (docs/performance.md, "A PostgreSQL
// request's round trips") keeps its events' place in the order of what happened. The events from mark on get new
// IDs in their new order, because PostgreSQL's chaining pass orders a transaction's events by
// creation time and ID (chain.go); nothing refers to an event's ID before it commits.
func (tx *Tx) EventsAt(mark int, fn func() error) error {
	from := len(tx.events)
	if err := fn(); err != nil {
		return err
	}
	if mark >= from || from == len(tx.events) {
		return nil
	}
	moved := slices.Concat(tx.events[from:], tx.events[mark:from])
	tx.events = append(tx.events[:mark], moved...)
	for i := mark; i < len(tx.events); i++ {
		tx.events[i].ID = remit.NewID("evt")
	}
	return nil
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
