package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// Work a write queues and a worker does later — a webhook delivery of the event the write emitted
// — continues the write's trace: Keep remembers the span a piece of work was made in, under the
// work's ID (an event's evt_ ID), and Resume gives the worker a context whose parent is that span,
// so that the delivery's span is a child in the write's trace.
//
// The memory is this process's and bounded (carryCapacity IDs, the oldest forgotten first): a
// delivery made by another process on the same PostgreSQL store, after a restart, or so much later
// that the ID was forgotten (a retry hours later under heavy load) starts a trace of its own. That
// keeps the trace out of the store (no column, nothing written per event); the cost is that the
// link holds within one process, which is where a delivery is made in nearly every case (the
// process that committed the event wakes its own worker at once).

// carryCapacity is how many work IDs the memory holds: at thousands of events a second, several
// seconds of them, far longer than a first delivery attempt waits.
const carryCapacity = 1 << 15

var carried = newCarry(carryCapacity)

type carry struct {
	mu    sync.Mutex
	spans map[string]trace.SpanContext
	ring  []string // the IDs in the order kept; next is the slot the next one takes
	next  int
}

func newCarry(n int) *carry {
	return &carry{spans: make(map[string]trace.SpanContext, n), ring: make([]string, n)}
}

// Keep remembers the span of ctx as the parent of the work identified by id, while tracing is on
// and ctx carries a sampled span.
func Keep(ctx context.Context, id string) {
	if !On() {
		return
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return
	}
	carried.keep(id, sc)
}

func (c *carry) keep(id string, sc trace.SpanContext) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.ring[c.next]; old != "" {
		delete(c.spans, old)
	}
	c.ring[c.next] = id
	c.next = (c.next + 1) % len(c.ring)
	c.spans[id] = sc
}

// Resume returns ctx with the span Keep remembered for id as its (remote) parent, or ctx as it is
// when tracing is off or id is not remembered.
func Resume(ctx context.Context, id string) context.Context {
	if !On() {
		return ctx
	}
	carried.mu.Lock()
	sc, ok := carried.spans[id]
	carried.mu.Unlock()
	if !ok {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}
