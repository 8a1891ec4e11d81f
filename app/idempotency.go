package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Idempotency (docs/api-conventions.md "Idempotency"): a key is scoped to the organization, environment and
// merchant account and remembered for 24 hours. The same key with a JSON-equal body on the same
// route replays the first response; another body or route is a conflict; a retry while the first
// is running is a conflict. The work of the first request and its remembered response commit in
// one transaction (FinishIdempotent runs inside it), so an effect is never applied twice nor its
// answer lost. Inside that transaction the key costs one read (ClaimIdempotent) and one write (the
// answer); an error answer that is final for the key (404, 409) is remembered after its work
// rolled back, in a transaction of its own (RememberIdempotent).

// IdempotencyScope is the key's namespace.
func IdempotencyScope(s remit.Scope) string {
	return s.OrganizationID + "|" + string(s.Environment) + "|" + s.MerchantAccountID
}

// StoredResponse is a remembered answer to replay.
type StoredResponse struct {
	Status int
	Body   []byte
}

// IdempotencyClaim is a request's hold on its Idempotency-Key, from ClaimIdempotent until
// FinishIdempotent (or HoldIdempotent, then RememberIdempotent or ForgetIdempotent).
type IdempotencyClaim struct {
	record   store.IdempotencyRecord
	replaces string // owner of the forgotten or dead record taken over ("" for a free key)
}

// Owner is the claim's owner token.
func (c IdempotencyClaim) Owner() string { return c.record.Owner }

func (co *core) newIdempotencyRecord(route, fingerprint string, now time.Time) store.IdempotencyRecord {
	return store.IdempotencyRecord{Route: route, BodyHash: fingerprint, Owner: remit.NewID("req"),
		LeaseUntil: now.Add(co.Config.IdempotencyLease), CreatedAt: now}
}

// takesOver reports whether the request rec may take over the key of existing: the same request
// (route and body) whose earlier attempt died in flight and whose lease ran out. Such an attempt
// never committed its work.
func (co *core) takesOver(existing, rec store.IdempotencyRecord, now time.Time) bool {
	return existing.State == "in_flight" && existing.Status == 0 && existing.LeaseUntil.Before(now) &&
		existing.Route == rec.Route && existing.BodyHash == rec.BodyHash
}

// ClaimIdempotent claims key for a request inside the request's own transaction tx, so that the
// claim, the work and the remembered answer commit together (one commit, one fsync) or not at all.
// fingerprint is BodyFingerprint of the request's body, computed by the caller before the
// transaction (on SQLite the transaction's function runs on the one writer's goroutine, so
// whatever can be done before it should be). It returns the claim to pass to FinishIdempotent, or
// a stored response to replay. Either way it writes nothing: the key's only write is the answer,
// which FinishIdempotent stores.
//
// Nothing else can take the key before tx ends: on SQLite write transactions run one at a time (a
// retry runs after this one committed and replays its answer); on PostgreSQL the key's advisory
// lock is held to the end of tx, and a request that cannot take it is answered 409 in flight at
// once instead of waiting. A request that dies before committing leaves nothing behind: a retry
// runs at once.
//
// Errors: conflict with details.reason idempotency_key_reused or idempotency_key_in_flight.
func (co *core) ClaimIdempotent(ctx context.Context, tx *store.Tx, scope remit.Scope, key, route, fingerprint string) (claim IdempotencyClaim, replay *StoredResponse, err error) {
	ns := IdempotencyScope(scope)
	ok, existing, found, err := tx.LockAndLookupIdempotency(ctx, ns, key)
	switch {
	case err != nil:
		return claim, nil, err
	case !ok:
		return claim, nil, errInFlight()
	}
	now := co.Clock.Now()
	rec := co.newIdempotencyRecord(route, fingerprint, now)
	switch {
	case !found:
		return IdempotencyClaim{record: rec}, nil, nil
	case existing.CreatedAt.Before(now.Add(-co.Config.IdempotencyRetention)) || co.takesOver(existing, rec, now):
		return IdempotencyClaim{record: rec, replaces: existing.Owner}, nil, nil
	}
	err = co.existingAnswer(ctx, scope, key, existing, rec, &replay)
	return claim, replay, err
}

func errInFlight() error {
	return remit.Errorf(remit.EConflict, "A request with this Idempotency-Key is still being processed. Retry after it completes.").
		With("reason", "idempotency_key_in_flight")
}

// existingAnswer is what a request gets for a key another request holds: a conflict, or (nil
// error) the remembered answer in *replay.
func (co *core) existingAnswer(ctx context.Context, scope remit.Scope, key string, existing, rec store.IdempotencyRecord, replay **StoredResponse) error {
	if existing.Route != rec.Route || existing.BodyHash != rec.BodyHash {
		return remit.Errorf(remit.EConflict, "This Idempotency-Key was already used with a different request body or route. Use a new key for a new request.").
			With("reason", "idempotency_key_reused")
	}
	// A hold with a provisional answer (HoldIdempotent) is replayed once its lease ran out: its
	// work committed, and the request that held it died before its follow-ups answered.
	held := existing.State == "in_flight" && existing.Status != 0 && existing.LeaseUntil.Before(rec.CreatedAt)
	if existing.State != "done" && !held {
		return errInFlight()
	}
	resp, err := co.openResponse(ctx, scope, key, existing.Response)
	if err != nil {
		return remit.Internal(fmt.Errorf("idempotency: open the remembered response: %w", err))
	}
	*replay = &StoredResponse{Status: existing.Status, Body: resp}
	return nil
}

// The remembered answer may carry a shown-once secret (a webhook signing secret, a setup session's
// token, a claim URL), so it is stored sealed (app/sealing.go), bound to its scope and key.
func idempotencyAAD(scope remit.Scope, key string) []byte {
	return []byte(IdempotencyScope(scope) + "\x00" + key)
}

func (co *core) sealResponse(ctx context.Context, scope remit.Scope, key string, body []byte) ([]byte, error) {
	s, err := co.seal(ctx, purposeIdempotency, idempotencyAAD(scope, key), body)
	return []byte(s), err
}

// openResponse opens a remembered answer. Answers remembered in plain text before they were
// sealed (at most one retention period ago) are JSON envelopes and replay as they are.
func (co *core) openResponse(ctx context.Context, scope remit.Scope, key string, stored []byte) ([]byte, error) {
	if !isSealed(string(stored)) {
		return stored, nil
	}
	return co.open(ctx, purposeIdempotency, idempotencyAAD(scope, key), string(stored))
}

// HoldIdempotent writes the claim's key as in flight inside tx, with the provisional answer of the
// committed work, for a request whose work continues after tx commits (Write's follow-ups), and
// makes the claim the hold's owner, so that RememberIdempotent or ForgetIdempotent later replaces
// or drops that very record. A retry after the hold's lease ran out (the request died before its
// follow-ups answered) replays the provisional answer: the work committed and must not run again.
func (co *core) HoldIdempotent(ctx context.Context, tx *store.Tx, scope remit.Scope, key string, claim *IdempotencyClaim, status int, body []byte) error {
	if claim.replaces == "" { // a free key: its hold is written with the commit, as FinishIdempotent's answer
		if err := co.newKeyAtCommit(ctx, tx, "in_flight", scope, key, *claim, status, body); err != nil {
			return err
		}
		claim.replaces = claim.record.Owner
		return nil
	}
	if err := co.writeKey(ctx, scope, key, body, func(sealed []byte) (bool, error) {
		return tx.HoldIdempotency(ctx, IdempotencyScope(scope), key, claim.record, claim.replaces, status, sealed)
	}); err != nil {
		return err
	}
	claim.replaces = claim.record.Owner
	return nil
}

// writeKey seals an answer for key and writes it with write, which reports whether the request
// still held the key; a request that lost it (a retry took it over, or another request stored an
// answer first) gets a conflict and its transaction must roll back.
func (co *core) writeKey(ctx context.Context, scope remit.Scope, key string, body []byte, write func(sealed []byte) (bool, error)) error {
	sealed, err := co.sealResponse(ctx, scope, key, body)
	if err != nil {
		return remit.Internal(err)
	}
	ok, err := write(sealed)
	if err != nil {
		return err
	}
	if !ok {
		return errKeyLost()
	}
	return nil
}

// errKeyLost answers a request whose key a retry took over (or another request answered) before
// it could store its answer: its transaction rolls back.
func errKeyLost() error {
	return remit.Errorf(remit.EConflict, "A retry of this request took over its Idempotency-Key; this attempt was not applied.").
		With("reason", "idempotency_key_in_flight")
}

// ForgetIdempotent drops, in a transaction of its own, the key the claim holds: its answer is not
// final, so a retry runs.
func (co *core) ForgetIdempotent(ctx context.Context, scope remit.Scope, key string, claim IdempotencyClaim) error {
	if claim.replaces == "" {
		return nil
	}
	return co.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return tx.ForgetIdempotency(ctx, IdempotencyScope(scope), key, claim.replaces)
	})
}

// FinishIdempotent remembers the response for key. Call it inside the request's transaction so it
// commits with the work; if the request lost its key (a retry took it over after its lease ran
// out, or another request stored an answer first) it fails and the transaction must roll back.
//
// A new record (the key was free) is written with the commit (store.Tx.Later): on PostgreSQL it
// travels with the COMMIT in one round trip, and the commit fails with the same conflict if the
// key has a record by then.
func (co *core) FinishIdempotent(ctx context.Context, tx *store.Tx, scope remit.Scope, key string, claim IdempotencyClaim, status int, body []byte) error {
	if claim.replaces != "" {
		return co.storeKey(ctx, tx, scope, key, claim, status, body)
	}
	return co.newKeyAtCommit(ctx, tx, "done", scope, key, claim, status, body)
}

// newKeyAtCommit writes a free key's first record in state with the commit (store.Tx.Later).
func (co *core) newKeyAtCommit(ctx context.Context, tx *store.Tx, state string, scope remit.Scope, key string, claim IdempotencyClaim, status int, body []byte) error {
	sealed, err := co.sealResponse(ctx, scope, key, body)
	if err != nil {
		return remit.Internal(err)
	}
	return tx.NewIdempotencyAtCommit(ctx, state, IdempotencyScope(scope), key, claim.record, status, sealed, errKeyLost())
}

// storeKey writes the answer for key now, reporting a lost key as FinishIdempotent does.
func (co *core) storeKey(ctx context.Context, tx *store.Tx, scope remit.Scope, key string, claim IdempotencyClaim, status int, body []byte) error {
	return co.writeKey(ctx, scope, key, body, func(sealed []byte) (bool, error) {
		return tx.StoreIdempotency(ctx, IdempotencyScope(scope), key, claim.record, claim.replaces, status, sealed)
	})
}

// RememberIdempotent stores, in a transaction of its own, the answer of a request whose work
// failed and rolled back but whose answer is final, such as 404 or a state conflict. If another
// request stored an answer for the key meanwhile, that one stays.
func (co *core) RememberIdempotent(ctx context.Context, scope remit.Scope, key string, claim IdempotencyClaim, status int, body []byte) error {
	// Not cancelled with the request: a client that went away must still find its answer.
	return co.DB.Tx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		err := co.storeKey(ctx, tx, scope, key, claim, status, body)
		if remit.ErrorCode(err) == remit.EConflict {
			return nil
		}
		return err
	})
}

// PurgeIdempotency forgets keys older than the retention period.
func (co *core) PurgeIdempotency(ctx context.Context) (int64, error) {
	return inTx(ctx, co.DB, func(ctx context.Context, tx *store.Tx) (int64, error) {
		return tx.PurgeIdempotency(ctx, co.Clock.Now().Add(-co.Config.IdempotencyRetention))
	})
}
