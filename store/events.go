package store

import (
	"context"
	"encoding/json"

	"github.com/remit-billing/remit"
)

// The events outbox: events are written in the transaction of the change they describe.

// InsertEvent appends an event to the outbox. Call it in the transaction of the change.
func (q Q) InsertEvent(ctx context.Context, e remit.Event, objectID string) error {
	_, err := q.exec(ctx, `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.ID, e.MerchantAccountID, string(e.Environment), e.Type, objectID, string(e.Data), remit.Micros(e.CreatedAt))
	return wrapErr(err, "store.InsertEvent")
}

// ListEventsByObject returns a merchant account's events about one object, oldest first.
func (q Q) ListEventsByObject(ctx context.Context, merchantAccountID, objectID string) ([]remit.Event, error) {
	rows, err := q.Query(ctx, `SELECT id, merchant_account_id, environment, type, data, created_at FROM events
		WHERE merchant_account_id = $1 AND object_id = $2 ORDER BY created_at, id`, merchantAccountID, objectID)
	if err != nil {
		return nil, wrapErr(err, "store.ListEventsByObject")
	}
	defer rows.Close()
	var out []remit.Event
	for rows.Next() {
		var e remit.Event
		var env, data string
		var created int64
		if err := rows.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created); err != nil {
			return nil, wrapErr(err, "store.ListEventsByObject")
		}
		e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
		out = append(out, e)
	}
	return out, wrapErr(rows.Err(), "store.ListEventsByObject")
}
