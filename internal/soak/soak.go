// Package soak is Remit's randomized soak: a seeded, model-based driver that runs random API
// operations (prices, customers, billing accounts with sandbox test cards, subscriptions through
// quotes and their changes, cancels, pauses and resumes, invoices, grants, usage events with
// duplicates and voids, credit notes, refunds, payments) from several concurrent clients, with
// sandbox clock advances between them, against a real server, and checks the invariants the docs
// promise after each advance and at the end. docs/reliability.md, "The randomized soak", says how
// to run it and what it checks.
//
// The model (model.go: what the driver believes is true) is kept apart from the operations
// (ops_*.go: what a careful user would do, and which answers the model expects) and the checks
// (checks.go: what must hold).
package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Config says what to run against.
type Config struct {
	Seed      int64
	Clients   int           // concurrent clients (default 4)
	Duration  time.Duration // how long the clients run operations (default 1 minute)
	Ops       int           // stop after this many operations as well (0: no limit)
	Customers int           // customers (default 20)
	Transport Transport
	Store     string // a label for the report (sqlite, postgres, a URL)

	// Logf, if set, receives progress lines.
	Logf func(format string, args ...any)
	// VerifyStore, if set, verifies the whole store as `remit verify` does; it answers whether
	// the store is ok and a description of its violations.
	VerifyStore func(ctx context.Context) (ok bool, detail string, err error)
	// ExplainServerError, if set, answers what the server logged for a request that answered
	// 5xx (by its request ID), to tell a deadlock from other faults.
	ExplainServerError func(requestID string) string
	// ServerErrors, if set, answers the error lines the server logged (failed jobs among them);
	// each is a finding at the end of the run.
	ServerErrors func() []string

	Grace time.Duration // how late a renewal or an auto-finalization may be (default 1 hour)
	Ring  int           // requests kept per client for a finding (default 30)
}

func (c Config) withDefaults() Config {
	if c.Clients <= 0 {
		c.Clients = 4
	}
	if c.Duration <= 0 && c.Ops <= 0 {
		c.Duration = time.Minute
	}
	if c.Customers <= 0 {
		c.Customers = 20
	}
	if c.Grace <= 0 {
		c.Grace = time.Hour
	}
	if c.Ring <= 0 {
		c.Ring = 30
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c
}

// driver runs one soak.
type driver struct {
	cfg   Config
	m     *Model
	t     *tally
	ops   []opSpec
	total int // sum of the ops' weights

	opsLeft   atomic.Int64 // when Config.Ops is set
	custNext  atomic.Int64 // customers created or being created
	advanceMu sync.Mutex   // one clock advance (and the checks after it) at a time
	advancing atomic.Int32 // advances in flight
	advanced  atomic.Int64 // advances answered
	advSecs   atomic.Int64
	advMu     sync.Mutex
	advLog    []AdvanceRecord // the last few
	lastHeavy time.Time       // the last verification and balance round (under advanceMu)
	jobsRoute atomic.Int32    // 0 unknown, 1 present, 2 missing
}

// Run runs a soak and answers what it did and found. It stops after Config.Duration (or
// Config.Ops operations) or when ctx is done, then runs the final checks.
func Run(ctx context.Context, cfg Config) Report {
	cfg = cfg.withDefaults()
	d := &driver{cfg: cfg, m: newModel(), t: newTally()}
	d.ops = operations()
	for _, o := range d.ops {
		d.total += o.weight
	}
	d.opsLeft.Store(int64(cfg.Ops))
	start := time.Now()
	c0 := d.newClient(0)
	if d.setup(ctx, c0) {
		d.runClients(ctx)
		cfg.Logf("soak %s: operations done after %s; final checks", cfg.Store, time.Since(start).Round(time.Second))
		d.finalChecks(ctx, c0)
	}
	r := Report{Seed: cfg.Seed, Store: cfg.Store, Clients: cfg.Clients, Customers: cfg.Customers, Elapsed: time.Since(start),
		Advances: int(d.advanced.Load()), Advanced: time.Duration(d.advSecs.Load()) * time.Second}
	d.t.report(&r)
	return r
}

// runClients runs the clients until the duration is over. An operation under way then is
// finished, not cut: a request cut in the middle (an advance above all, whose due work would be
// left to the scheduler) is not what a careful user does.
func (d *driver) runClients(ctx context.Context) {
	stop := time.Now().Add(d.cfg.Duration)
	more := func() bool { return ctx.Err() == nil && (d.cfg.Duration <= 0 || time.Now().Before(stop)) && d.takeOp() }
	var wg sync.WaitGroup
	for i := 1; i <= d.cfg.Clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := d.newClient(i)
			for more() {
				c.runOne(ctx)
			}
		}()
	}
	wg.Wait()
}

// takeOp reports whether the operation budget allows one more.
func (d *driver) takeOp() bool {
	if d.cfg.Ops <= 0 {
		return true
	}
	return d.opsLeft.Add(-1) >= 0
}

func (d *driver) recordAdvance(a AdvanceRecord) {
	d.advMu.Lock()
	defer d.advMu.Unlock()
	d.advLog = append(d.advLog, a)
	if len(d.advLog) > 8 {
		d.advLog = d.advLog[len(d.advLog)-8:]
	}
}

func (d *driver) lastAdvances() []AdvanceRecord {
	d.advMu.Lock()
	defer d.advMu.Unlock()
	return append([]AdvanceRecord(nil), d.advLog...)
}

// client is one concurrent caller: its own random stream and its last requests.
type client struct {
	d    *driver
	id   int
	rng  *rand.Rand
	ring *ring
	seq  int
	op   string // the operation running
	// what the clock did around the operation: a 409 on a resource's state is expected when an
	// advance (which runs renewals, dunning, auto-finalization) overlapped it.
	advAtStart    int64
	inFlightStart bool
}

func (d *driver) newClient(id int) *client {
	return &client{d: d, id: id, rng: rand.New(rand.NewPCG(uint64(d.cfg.Seed), uint64(id))), ring: newRing(d.cfg.Ring)}
}

func (c *client) runOne(ctx context.Context) {
	o := c.pickOp()
	c.op = o.name
	c.advAtStart, c.inFlightStart = c.d.advanced.Load(), c.d.advancing.Load() > 0
	if o.run(ctx, c) {
		c.d.t.op(o.name)
	}
}

func (c *client) pickOp() opSpec {
	n := c.rng.IntN(c.d.total)
	for _, o := range c.d.ops {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return c.d.ops[len(c.d.ops)-1]
}

// overlapped reports whether a clock advance ran during the current operation.
func (c *client) overlapped() bool {
	return c.inFlightStart || c.d.advancing.Load() > 0 || c.d.advanced.Load() != c.advAtStart
}

// key answers a new Idempotency-Key.
func (c *client) key() string {
	c.seq++
	return fmt.Sprintf("soak-%d-%d-%d", c.d.cfg.Seed, c.id, c.seq)
}

// name answers a new ID with prefix p, unique in the run.
func (c *client) name(p string) string {
	c.seq++
	return fmt.Sprintf("%s-%d-%d-%d", p, c.d.cfg.Seed, c.id, c.seq)
}

// call sends one request, records it, and records every 5xx (and a lost answer) as a finding. A
// 429 (the server's rate limit) is sent again after its Retry-After, as a careful client does.
// touched are the histories of the resources the request concerns.
func (c *client) call(ctx context.Context, method, path string, body any, key string, touched ...*ring) Answer {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	for range 30 {
		a := c.send(ctx, method, path, raw, key, touched)
		if a.Status != 429 || ctx.Err() != nil {
			return a
		}
		wait := min(max(a.RetryAfter, 100*time.Millisecond), 10*time.Second)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return c.send(ctx, method, path, raw, key, touched)
}

// send sends one request once and records it.
func (c *client) send(ctx context.Context, method, path string, raw []byte, key string, touched []*ring) Answer {
	start := time.Now()
	ans, err := c.d.cfg.Transport.Send(ctx, method, path, raw, key)
	x := Exchange{At: start, Client: c.id, Op: c.op, Method: method, Path: path, Body: shorten(raw, 400),
		Status: ans.Status, Answer: shorten(ans.Body, 500), RequestID: ans.RequestID, Took: time.Since(start)}
	if err != nil {
		x.Answer = "no answer: " + err.Error()
	}
	c.ring.add(x)
	for _, h := range touched {
		if h != nil {
			h.add(x)
		}
	}
	if ctx.Err() != nil && err != nil {
		return ans // the run ended under the request
	}
	c.d.t.answer(ans.Status)
	switch {
	case err != nil:
		c.find(ClassOther, "no answer "+method+" "+routeOf(path), fmt.Sprintf("%s %s: no answer: %v", method, path, err))
	case ans.Status >= 500:
		c.serverError(method, path, ans)
	}
	return ans
}
