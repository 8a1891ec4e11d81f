package app

import (
	"context"
	"errors"
	"sync"

	"github.com/remit-billing/remit"
)

// Follow-ups (docs/payments.md "Payments as intents"): work that must run after a transaction
// commits and outside any, such as a processor call for a payment attempt the transaction
// recorded. The engine code that needs one registers it (co.after) in the transaction it runs in;
// whoever owns that transaction (App.Write, the scheduler, a clock advance) runs the follow-ups
// once it committed (runFollowUps), and drops them when it rolled back. So no processor call ever
// runs with a transaction open or a row lock held.

// FollowUp is work that runs after its transaction committed, with none open. A result (data or
// error) replaces the write's answer (the invoice as the processor left it); nil and nil leave it.
type FollowUp func(ctx context.Context) (any, error)

type followUps struct {
	mu  sync.Mutex
	fns []FollowUp
}

type followUpsKey struct{}

// withFollowUps returns ctx carrying a new, empty collector, for the owner of a transaction.
func withFollowUps(ctx context.Context) (context.Context, *followUps) {
	f := &followUps{}
	return context.WithValue(ctx, followUpsKey{}, f), f
}

// after registers fn to run once the transaction in ctx committed.
func (co *core) after(ctx context.Context, fn FollowUp) error {
	f, ok := ctx.Value(followUpsKey{}).(*followUps)
	if !ok {
		return remit.Internal(errors.New("app: a follow-up was registered where no transaction owner runs them"))
	}
	f.mu.Lock()
	f.fns = append(f.fns, fn)
	f.mu.Unlock()
	return nil
}

// reset drops what an attempt of the transaction registered (it is about to run again, or rolled
// back).
func (f *followUps) reset() { f.mu.Lock(); f.fns = nil; f.mu.Unlock() }

// mark and truncate drop what was registered after a mark (a job rolled back to its savepoint, a
// transaction about to run again). On a nil collector (no owner in the context) they do nothing.
func (f *followUps) mark() int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.fns)
}

func (f *followUps) truncate(n int) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.fns = f.fns[:n]
	f.mu.Unlock()
}

// pending reports whether follow-ups wait to run.
func (f *followUps) pending() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.fns) > 0 }

// run runs the follow-ups in order, with ctx cut loose from the transaction, and returns the last
// one's result. It stops at the first error.
func (f *followUps) run(ctx context.Context) (any, error) {
	f.mu.Lock()
	fns := f.fns
	f.fns = nil
	f.mu.Unlock()
	var data any
	for _, fn := range fns {
		d, err := fn(ctx)
		if err != nil {
			return d, err
		}
		if d != nil {
			data = d
		}
	}
	return data, nil
}
