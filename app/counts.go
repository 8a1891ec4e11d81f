package app

import (
	"context"
	"sync/atomic"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// counts are this process's counts of what it committed since it started: the counters of GET
// /metrics (docs/operations.md, "Metrics"). Each is bumped after its transaction commits
// (Tx.AfterCommit), so a change rolled back counts nothing; every process counts its own, and the
// sum over processes is the store's.
type counts struct {
	events map[remit.EventType]*envCount // every catalogued event type; never written after newCounts
	usage  envCount                      // usage events recorded (not a repeated eventId)
}

func newCounts() *counts {
	c := &counts{events: make(map[remit.EventType]*envCount, len(remit.EventTypes))}
	for _, t := range remit.EventTypes {
		c.events[t] = newEnvCount()
	}
	c.usage.init()
	return c
}

// envCount is one count per environment, with the function that bumps each made once, so that
// registering it to run after a commit allocates nothing.
type envCount struct {
	n   [2]atomic.Int64 // sandbox, production
	inc [2]func()
}

func newEnvCount() *envCount { c := &envCount{}; c.init(); return c }

func (c *envCount) init() {
	for i := range c.n {
		c.inc[i] = func() { c.n[i].Add(1) }
	}
}

// after counts one more in env once tx commits.
func (c *envCount) after(tx *store.Tx, env remit.Environment) {
	i := 0
	if env == remit.Production {
		i = 1
	}
	tx.AfterCommit(c.inc[i])
}

func (c *envCount) snapshot() map[remit.Environment]int64 {
	return map[remit.Environment]int64{remit.Sandbox: c.n[0].Load(), remit.Production: c.n[1].Load()}
}

// EventCounts is how many events of each type this process committed since it started, by
// environment (every catalogued type, 0 when none).
func (co *core) EventCounts() map[remit.EventType]map[remit.Environment]int64 {
	out := make(map[remit.EventType]map[remit.Environment]int64, len(co.counts.events))
	for t, c := range co.counts.events {
		out[t] = c.snapshot()
	}
	return out
}

// UsageIngested is how many usage events this process recorded since it started, by environment
// (a repeated eventId is not counted again).
func (co *core) UsageIngested() map[remit.Environment]int64 { return co.counts.usage.snapshot() }

// Backlog is the work waiting in the store now, over every merchant account (remit.Backlog).
func (co *core) Backlog(ctx context.Context) (remit.Backlog, error) {
	return co.DB.Read(ctx).Backlog(ctx, co.Clock.Now())
}
