package app

import (
	"errors"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/mail"
)

func TestEmailOutcome(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sched := []time.Duration{5 * time.Second, 5 * time.Minute}
	down := mail.Result{Err: errors.New("dial tcp: connection refused"), Temporary: true}
	for _, c := range []struct {
		name    string
		attempt int
		r       mail.Result
		jitter  float64
		status  remit.EmailStatus
		next    time.Duration // from now, when queued
	}{
		{"accepted", 1, mail.Result{}, 0.5, remit.EmailSent, 0},
		{"refused for good", 1, mail.Result{Err: errors.New("550 no such user")}, 0.5, remit.EmailFailed, 0},
		{"down: first wait, no jitter", 1, down, 0.5, remit.EmailQueued, 5 * time.Second},
		{"down: first wait, -10 %", 1, down, 0, remit.EmailQueued, 4500 * time.Millisecond},
		{"down: second wait, +10 %", 2, down, 1, remit.EmailQueued, 330 * time.Second},
		{"down: schedule used up", 3, down, 0.5, remit.EmailFailed, 0},
	} {
		o := EmailOutcome(c.attempt, c.r, sched, now, c.jitter)
		if o.Status != c.status {
			t.Errorf("%s: status %s, want %s", c.name, o.Status, c.status)
		}
		if (o.NextAttemptAt != nil) != (c.status == remit.EmailQueued) {
			t.Errorf("%s: next %v", c.name, o.NextAttemptAt)
		}
		if o.NextAttemptAt != nil && o.NextAttemptAt.Sub(now) != c.next {
			t.Errorf("%s: next in %v, want %v", c.name, o.NextAttemptAt.Sub(now), c.next)
		}
		if (o.Reason == "") != (c.r.Err == nil) {
			t.Errorf("%s: reason %q", c.name, o.Reason)
		}
	}
	long := EmailOutcome(1, mail.Result{Err: errors.New(string(make([]byte, 2000)) + "\nx")}, sched, now, 0)
	if len([]rune(long.Reason)) > 500 {
		t.Errorf("a reason of %d characters", len([]rune(long.Reason)))
	}
}
