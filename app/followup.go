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

// split takes the follow-ups registered so far, cut at marks (each job's first, in order), as one
// group per job that registered any.
func (f *followUps) split(marks []int) []*followUps {
	f.mu.Lock()
	fns := f.fns
	f.fns = nil
	f.mu.Unlock()
	var groups []*followUps
	for i, from := range marks {
		to := len(fns)
		if i+1 < len(marks) {
			to = marks[i+1]
		}
		if from < to {
			groups = append(groups, &followUps{fns: fns[from:to]})
		}
	}
	return groups
}

// followUpPool runs groups of follow-ups (each group in order) side by side, at most n at once.
type followUpPool struct {
	co      *core
	slots   chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	started int
}

func newFollowUpPool(co *core, n int) *followUpPool {
	return &followUpPool{co: co, slots: make(chan struct{}, n)}
}

// start runs group in a goroutine of its own once a slot is free (it waits for one).
func (p *followUpPool) start(ctx context.Context, group *followUps) {
	p.slots <- struct{}{}
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer func() { <-p.slots; p.wg.Done() }()
		if _, err := group.run(ctx); err != nil {
			p.co.Log.ErrorContext(ctx, "scheduled job's follow-up failed", "err", err.Error())
		}
	}()
}

// wait waits for every group started and returns how many were started since the last wait.
func (p *followUpPool) wait() int {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.started
	p.started = 0
	return n
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
