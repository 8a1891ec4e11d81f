package store

import (
	"context"
	"fmt"
)

// Gap-free counters and settings.

// NextNumber returns the next value (1, 2, ...) of a gap-free counter. Call it inside the
// transaction that uses the number: the row lock serializes concurrent callers, and a rollback
// returns the number.
func (q Q) NextNumber(ctx context.Context, scope, name string) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `INSERT INTO counters (scope, name, value) VALUES ($1, $2, 1)
		ON CONFLICT (scope, name) DO UPDATE SET value = counters.value + 1 RETURNING value`, scope, name).Scan(&v)
	return v, wrapErr(err, fmt.Sprintf("store.NextNumber(%s)", name))
}

// Setting returns the named setting, creating it with create() the first time. Concurrent
// first calls agree on one value.
func (q Q) Setting(ctx context.Context, name string, create func() string) (string, error) {
	if _, err := q.exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, create()); err != nil {
		return "", wrapErr(err, "store.Setting")
	}
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v)
	return v, wrapErr(err, "store.Setting")
}
