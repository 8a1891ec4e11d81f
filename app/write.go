package app

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/trace"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/store"
)

// Write is the one entry point of every write: it owns the write's store transaction and its
// Idempotency-Key (docs/architecture.md "A request, step by step").
//
// run does the work inside the transaction; answer turns its result (or error) into the answer
// the caller gets, which is also what a replay of the same key gets. With a key, the key is
// claimed inside the transaction (ClaimIdempotent: one read) and the answer stored there too
// (FinishIdempotent: one write), so the effect and the remembered answer commit together, in one
// commit, or not at all. An error of run rolls its work back. Work that registered follow-ups
// (followup.go: a payment attempt's charge) holds the key in flight until they answered.
// An error answer that is final for the key (remit.FinalForKey: not found, conflict) is remembered
// after the rollback, in a small transaction of its own (RememberIdempotent), so the common path
// needs no savepoint; any other error leaves the key free, so that a corrected retry runs.
//
// The returned error is the answer when it is not nil (the work rolled back, or the key belongs to
// another request); otherwise the Answer is (Replayed when it is a remembered one).
func (co *core) Write(ctx context.Context, w remit.WriteRequest, run remit.WorkFunc, answer remit.AnswerFunc) (a remit.Answer, err error) {
	ctx, span := telemetry.Start(ctx, "App.Write", trace.SpanKindInternal)
	defer func() { endWrite(span, w, a, err) }()
	idem := w.Key != "" && w.Scope.MerchantAccountID != ""
	var fingerprint string
	if idem {
		fingerprint = remit.BodyFingerprint(w.Body) // before the transaction, not on the SQLite writer
	}
	var out writeOutcome
	ctx, fu := withFollowUps(ctx)
	txErr := co.DB.RetryTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		out = writeOutcome{follow: fu}
		fu.reset()
		if !idem {
			return out.work(ctx, run, answer)
		}
		return co.idempotentWork(ctx, tx, w, fingerprint, run, answer, &out)
	})
	if out.final != nil && errors.Is(txErr, out.final) {
		// The work rolled back; its answer is final for the key: remember it. If that fails, the
		// client still gets its answer; a retry runs the work again.
		if err := co.RememberIdempotent(ctx, w.Scope, w.Key, out.claim, out.answer.Status, out.answer.Body); err != nil {
			co.Log.ErrorContext(ctx, "remember an idempotent answer", "status", out.answer.Status, "err", err.Error())
		}
	}
	switch {
	case out.claimErr != nil:
		return remit.Answer{}, out.claimErr
	case txErr != nil:
		return remit.Answer{}, txErr
	case out.replay != nil:
		return remit.Answer{Status: out.replay.Status, Body: out.replay.Body, Replayed: true}, nil
	case fu.pending():
		return co.followThrough(ctx, w, idem, fu, &out, answer)
	}
	return out.answer, nil
}

// endWrite ends a write's span with what it answered.
func endWrite(span trace.Span, w remit.WriteRequest, a remit.Answer, err error) {
	if !span.IsRecording() {
		return
	}
	telemetry.Strings(span, "remit.route", w.Route, "remit.merchant_account_id", w.Scope.MerchantAccountID)
	telemetry.SetInt(span, "remit.answer_status", a.Status)
	if a.Replayed {
		telemetry.Strings(span, "remit.idempotent_replay", "true")
	}
	telemetry.End(span, err)
}

// followThrough runs a write's follow-ups once its transaction committed (a payment attempt's
// charge, then the invoice as it left it) and answers with what they answer; with a key, the key
// held in flight by the transaction gets that answer (or is released for an answer that is not
// final, so a retry runs). The follow-ups run to the end even when the client went away: the
// outcome of a charge is recorded whoever waits for it.
func (co *core) followThrough(ctx context.Context, w remit.WriteRequest, idem bool, fu *followUps, out *writeOutcome, answer remit.AnswerFunc) (remit.Answer, error) {
	ctx = context.WithoutCancel(ctx)
	data, err := fu.run(ctx)
	if data == nil && err == nil {
		data = out.data
	}
	final := err == nil || remit.FinalForKey(err)
	if !idem {
		if !final {
			return remit.Answer{}, err
		}
		return answer(data, err), nil
	}
	if !final {
		if ferr := co.ForgetIdempotent(ctx, w.Scope, w.Key, out.claim); ferr != nil {
			co.Log.ErrorContext(ctx, "release an idempotency key", "err", ferr.Error())
		}
		return remit.Answer{}, err
	}
	a := answer(data, err)
	if rerr := co.RememberIdempotent(ctx, w.Scope, w.Key, out.claim, a.Status, a.Body); rerr != nil {
		co.Log.ErrorContext(ctx, "remember an idempotent answer", "status", a.Status, "err", rerr.Error())
	}
	return a, nil
}

// writeOutcome is what one attempt of a write's transaction found.
type writeOutcome struct {
	follow   *followUps // work to run once the transaction committed
	data     any        // run's result, answered after the follow-ups when there are some
	answer   remit.Answer
	claimErr error // the key is another request's: answered as is
	replay   *StoredResponse
	claim    IdempotencyClaim
	final    error // run's error whose answer is final for the key
}

// work runs the operation and builds the answer to send (and remember).
func (o *writeOutcome) work(ctx context.Context, run remit.WorkFunc, answer remit.AnswerFunc) error {
	data, err := run(ctx)
	if err != nil {
		return err
	}
	o.data = data
	if !o.follow.pending() {
		o.answer = answer(data, nil)
	}
	return nil
}

// idempotentWork claims the key in tx, then runs the work and stores its answer, or finds the
// remembered answer to replay.
func (co *core) idempotentWork(ctx context.Context, tx *store.Tx, w remit.WriteRequest, fingerprint string, run remit.WorkFunc, answer remit.AnswerFunc, out *writeOutcome) error {
	c, rep, err := co.ClaimIdempotent(ctx, tx, w.Scope, w.Key, w.Route, fingerprint)
	if err != nil {
		out.claimErr = err
		return err
	}
	if rep != nil {
		out.replay = rep
		return nil
	}
	out.claim = c
	if err := out.work(ctx, run, answer); err != nil {
		if remit.FinalForKey(err) {
			out.final, out.answer = err, answer(nil, err)
		}
		return err // everything rolls back
	}
	if out.follow.pending() {
		// The work continues after the commit: hold the key in flight until it answers, with the
		// answer of what this transaction commits in case the request dies before then.
		provisional := answer(out.data, nil)
		return co.HoldIdempotent(ctx, tx, w.Scope, w.Key, &out.claim, provisional.Status, provisional.Body)
	}
	return co.FinishIdempotent(ctx, tx, w.Scope, w.Key, c, out.answer.Status, out.answer.Body)
}

// inTx runs fn in one store transaction and returns what it returns. Inside a transaction it
// joins it; on its own, a transaction that lost a deadlock runs again (store.RetryTx), without
// what the lost attempt registered to run after the commit.
func inTx[T any](ctx context.Context, db *store.DB, fn func(ctx context.Context, tx *store.Tx) (T, error)) (T, error) {
	var out T
	fu, _ := ctx.Value(followUpsKey{}).(*followUps)
	mark := fu.mark()
	err := db.RetryTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		fu.truncate(mark)
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// change runs one state change in one transaction: load reads the resource with its row lock
// held, apply checks its state and changes it (persisting and emitting). It returns the resource
// as apply left it.
func change[T any](ctx context.Context, db *store.DB, load func(ctx context.Context, tx *store.Tx) (T, error), apply func(ctx context.Context, tx *store.Tx, v *T) error) (T, error) {
	return inTx(ctx, db, func(ctx context.Context, tx *store.Tx) (T, error) {
		v, err := load(ctx, tx)
		if err != nil {
			return v, err
		}
		return v, apply(ctx, tx, &v)
	})
}

// transition is change for a resource with a status table: after load, table asks whether the
// resource's state (state: its ID and status) allows action, and refuses with the table's 409
// before apply runs.
func transition[T any, S ~string](ctx context.Context, db *store.DB, table remit.StatusTable[S], action string, state func(*T) (string, S),
	load func(ctx context.Context, tx *store.Tx) (T, error), apply func(ctx context.Context, tx *store.Tx, v *T) error) (T, error) {
	return change(ctx, db, load, func(ctx context.Context, tx *store.Tx, v *T) error {
		id, status := state(v)
		if err := table.Check(id, status, action); err != nil {
			return err
		}
		return apply(ctx, tx, v)
	})
}

// lockedRow is the load of change, transition and update for one row of a merchant account, by
// its ID, with the row lock held: read is the store.Q method that reads it.
func lockedRow[T any](merchantAccountID, id string, read func(store.Q, context.Context, string, string, store.Read) (T, error)) func(ctx context.Context, tx *store.Tx) (T, error) {
	return func(ctx context.Context, tx *store.Tx) (T, error) {
		return read(tx.Q, ctx, merchantAccountID, id, store.Locked)
	}
}
