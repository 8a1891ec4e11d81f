package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// IdempotencyRecord is a remembered Idempotency-Key.
type IdempotencyRecord struct {
	Route      string
	BodyHash   string
	State      string // in_flight | done
	Owner      string
	LeaseUntil time.Time
	Status     int
	Response   []byte
	CreatedAt  time.Time
}

// LookupIdempotency returns the record of (scope, key), if there is one, holding its row lock
// (PostgreSQL) to the end of the transaction.
func (q Q) LookupIdempotency(ctx context.Context, scope, key string) (rec IdempotencyRecord, found bool, err error) {
	var lease, created int64
	var resp string
	err = q.QueryRow(ctx, `SELECT route, body_hash, state, owner, lease_until, status, response, created_at
		FROM idempotency_keys WHERE scope = $1 AND idem_key = $2`+q.ForUpdate(), scope, key).
		Scan(&rec.Route, &rec.BodyHash, &rec.State, &rec.Owner, &lease, &rec.Status, &resp, &created)
	if found, err = foundOr(err, "store.LookupIdempotency"); !found {
		return rec, false, err
	}
	rec.LeaseUntil, rec.CreatedAt, rec.Response = remit.FromMicros(lease), remit.FromMicros(created), []byte(resp)
	return rec, true, nil
}

// LockAndLookupIdempotency takes the transaction's exclusive hold on (scope, key) without waiting
// and, if it got it, returns the key's record like LookupIdempotency. On PostgreSQL the hold is a
// transaction-level advisory lock on a 64-bit hash of the two: a concurrent request with the same
// key is still running when it cannot be taken (an unrelated key with the same hash is also
// refused, one chance in 2^64). Lock and lookup are one statement, one round trip: the lookup
// (and its row lock) runs only once the advisory lock is held. SQLite needs no lock: its write
// transactions run one at a time.
func (q Q) LockAndLookupIdempotency(ctx context.Context, scope, key string) (locked bool, rec IdempotencyRecord, found bool, err error) {
	if q.d != Postgres {
		rec, found, err = q.LookupIdempotency(ctx, scope, key)
		return true, rec, found, err
	}
	var route, bodyHash, state, owner, resp sql.NullString
	var lease, status, created sql.NullInt64
	err = q.QueryRow(ctx, `SELECT l.ok, k.route, k.body_hash, k.state, k.owner, k.lease_until, k.status, k.response, k.created_at
		FROM (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok) l
		LEFT JOIN LATERAL (SELECT route, body_hash, state, owner, lease_until, status, response, created_at
			FROM idempotency_keys WHERE scope = $2 AND idem_key = $3 AND l.ok FOR UPDATE) k ON true`,
		scope+"|"+key, scope, key).
		Scan(&locked, &route, &bodyHash, &state, &owner, &lease, &status, &resp, &created)
	if err != nil || !locked || !route.Valid {
		return locked, rec, false, wrapErr(err, "store.LockAndLookupIdempotency")
	}
	rec = IdempotencyRecord{Route: route.String, BodyHash: bodyHash.String, State: state.String, Owner: owner.String,
		LeaseUntil: remit.FromMicros(lease.Int64), Status: int(status.Int64), Response: []byte(resp.String), CreatedAt: remit.FromMicros(created.Int64)}
	return true, rec, true, nil
}

// StoreIdempotency writes the answer of the request rec.Owner under (scope, key) in one statement:
// a new record when replaces is empty (false if the key has a record by now), or in place of the
// record of owner replaces, the forgotten or dead request this one took over (false if that
// record changed since). The request's transaction found the key free (LookupIdempotency) and
// writes nothing else for it, so a new key costs one write.
func (q Q) StoreIdempotency(ctx context.Context, scope, key string, rec IdempotencyRecord, replaces string, status int, response []byte) (bool, error) {
	ok, err := q.writeIdempotency(ctx, "done", scope, key, rec, replaces, status, response)
	return ok, wrapErr(err, "store.StoreIdempotency")
}

// NewIdempotencyAtCommit writes a new record in state (done, as StoreIdempotency, or in_flight,
// as HoldIdempotency) for a key that was free, by the transaction that holds the key's lock
// (LockAndLookupIdempotency): the insert is sent with the COMMIT (Tx.Later), and if the key has a
// record by then the transaction fails with lost.
func (tx *Tx) NewIdempotencyAtCommit(ctx context.Context, state, scope, key string, rec IdempotencyRecord, status int, response []byte, lost error) error {
	err := tx.Later(ctx, lost, `INSERT INTO idempotency_keys (scope, idem_key, route, body_hash, state, owner, lease_until, status, response, created_at)
		VALUES ($1, $2, $3, $4, $10, $5, $6, $7, $8, $9)`,
		scope, key, rec.Route, rec.BodyHash, rec.Owner, remit.Micros(rec.LeaseUntil), status, string(response), remit.Micros(rec.CreatedAt), state)
	return wrapErr(err, "store.NewIdempotencyAtCommit")
}

// writeIdempotency writes the record of request rec.Owner in state under (scope, key), new or in
// place of the record of owner replaces (see StoreIdempotency), and reports whether it did.
func (q Q) writeIdempotency(ctx context.Context, state, scope, key string, rec IdempotencyRecord, replaces string, status int, response []byte) (bool, error) {
	var n int64
	var err error
	if replaces == "" {
		n, err = q.exec(ctx, `INSERT INTO idempotency_keys (scope, idem_key, route, body_hash, state, owner, lease_until, status, response, created_at)
			VALUES ($1, $2, $3, $4, $10, $5, $6, $7, $8, $9) ON CONFLICT (scope, idem_key) DO NOTHING`,
			scope, key, rec.Route, rec.BodyHash, rec.Owner, remit.Micros(rec.LeaseUntil), status, string(response), remit.Micros(rec.CreatedAt), state)
	} else {
		n, err = q.exec(ctx, `UPDATE idempotency_keys SET route = $4, body_hash = $5, state = $11, owner = $6, lease_until = $7,
			status = $8, response = $9, created_at = $10 WHERE scope = $1 AND idem_key = $2 AND owner = $3`,
			scope, key, replaces, rec.Route, rec.BodyHash, rec.Owner, remit.Micros(rec.LeaseUntil), status, string(response), remit.Micros(rec.CreatedAt), state)
	}
	return n == 1, err
}

// ForgetIdempotency deletes the record of (scope, key) that owner wrote, whatever its state.
func (q Q) ForgetIdempotency(ctx context.Context, scope, key, owner string) error {
	_, err := q.exec(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND idem_key = $2 AND owner = $3`, scope, key, owner)
	return wrapErr(err, "store.ForgetIdempotency")
}

// PurgeIdempotency deletes records created before cutoff and returns how many.
func (q Q) PurgeIdempotency(ctx context.Context, cutoff time.Time) (int64, error) {
	n, err := q.exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, remit.Micros(cutoff))
	return n, wrapErr(err, "store.PurgeIdempotency")
}

// HoldIdempotency writes the in-flight record of the request rec.Owner under (scope, key), with
// the provisional answer of its committed work (status, response): new when replaces is empty,
// else in place of the record of owner replaces. A request whose work continues after its
// transaction (a payment attempt's charge) holds its key this way until StoreIdempotency replaces
// the hold with the final answer; if it dies meanwhile, a retry gets the provisional answer once
// rec.LeaseUntil passed (its work committed: it must not run again).
func (q Q) HoldIdempotency(ctx context.Context, scope, key string, rec IdempotencyRecord, replaces string, status int, response []byte) (bool, error) {
	ok, err := q.writeIdempotency(ctx, "in_flight", scope, key, rec, replaces, status, response)
	return ok, wrapErr(err, "store.HoldIdempotency")
}
