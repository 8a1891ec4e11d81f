package remit

import "context"

// WriteRequest names one write for the engine's write entry point, which owns the write's store
// transaction and its Idempotency-Key (docs/architecture.md "A request, step by step").
type WriteRequest struct {
	Scope Scope  // the key's namespace: organization, environment, merchant account
	Key   string // the Idempotency-Key; "" runs the work without one
	Route string // method and path; the same key on another route is refused
	Body  []byte // compared with the first request's body by JSON value
}

// Answer is what a write answers: a status and an encoded body, remembered with the key for
// replays. Replayed is set on a remembered answer.
type Answer struct {
	Status   int
	Body     []byte
	Replayed bool
}

// WorkFunc is a write's work: it runs inside the write's transaction and returns the resource.
type WorkFunc func(ctx context.Context) (any, error)

// AnswerFunc turns a write's outcome into its answer: the resource, or an error whose answer is
// final (FinalForKey).
type AnswerFunc func(data any, err error) Answer

// FinalForKey reports whether an error answer is final for its Idempotency-Key, and so is
// remembered and replayed: a reference that does not exist or a state conflict. Answers given
// before or instead of running the operation (auth, validation, rate limit, faults, not
// implemented) are not, so a corrected retry with the same key runs.
func FinalForKey(err error) bool {
	c := ErrorCode(err)
	return c == ENotFound || c == EConflict
}
