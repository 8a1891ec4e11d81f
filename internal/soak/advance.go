package soak

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
)

// advanceSeconds draws how far to move the clock: seconds to two hours (a subscription's first
// hour, when its first invoice is still a draft), hours to days, days to weeks, and one time in
// five a whole period (20–40 days), so that even a short run renews its monthly subscriptions.
func (c *client) advanceSeconds() int64 {
	switch r := c.rng.Float64(); {
	case r < 0.35:
		return c.between(1, 7200)
	case r < 0.6:
		return c.between(7200, 3*86400)
	case r < 0.8:
		return c.between(3*86400, 15*86400)
	default:
		return c.between(20*86400, 40*86400)
	}
}

// opAdvance moves the sandbox clock (one advance at a time; the other clients go on meanwhile)
// and then checks what must hold once everything due has run.
func opAdvance(ctx context.Context, c *client) bool {
	d := c.d
	if !d.advanceMu.TryLock() {
		return false
	}
	defer d.advanceMu.Unlock()
	secs := c.advanceSeconds()
	d.advancing.Add(1)
	start := time.Now()
	a := c.call(ctx, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": secs}, c.key())
	d.advancing.Add(-1)
	d.advanced.Add(1)
	rec := AdvanceRecord{At: start, Seconds: secs, Status: a.Status, Took: time.Since(start)}
	var clk remit.TestClock
	ok := c.want(a, "advance the clock", one(201)) && decode(a, &clk)
	if ok {
		d.m.setClock(clk.Now)
		d.advSecs.Add(secs)
	} else if clk, ok = c.readClock(ctx); !ok {
		d.recordAdvance(rec)
		return true
	}
	rec.ClockTo = clk.Now.Format(time.RFC3339)
	d.recordAdvance(rec)
	if a.Status == 201 && ctx.Err() == nil {
		c.afterAdvance(ctx, clk.Now, false)
	}
	return true
}

// readClock reads the sandbox clock (after an advance that failed: it may have moved).
func (c *client) readClock(ctx context.Context) (remit.TestClock, bool) {
	var clk remit.TestClock
	a := c.call(ctx, "GET", "/v1/test-helpers/clock", nil, "")
	if !c.want(a, "read the clock", one(200)) || !decode(a, &clk) {
		return clk, false
	}
	c.d.m.setClock(clk.Now)
	return clk, true
}

// afterAdvance checks, at clock time now (everything due up to it has run), that subscriptions
// renewed and drafts finalized themselves; every 10 s (or when all is set) the verification, the
// failed jobs and every balance too.
func (c *client) afterAdvance(ctx context.Context, now time.Time, all bool) {
	due := now.Add(-c.d.cfg.Grace)
	c.checkRenewals(ctx, due)
	c.checkDrafts(ctx, due)
	if !all && time.Since(c.d.lastHeavy) < 10*time.Second {
		return
	}
	c.d.lastHeavy = time.Now()
	c.checkVerification(ctx)
	c.checkFailedJobs(ctx)
	c.checkBalances(ctx, due)
}
