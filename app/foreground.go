package app

import (
	"sync"
	"time"
)

// Foreground measures how busy this process's HTTP edge is: the share of the last window of real
// time (250 ms), or of the window under way, during which at least one request was being served. Background work that only
// takes CPU (the e-mail worker's rendering and sending) paces itself by it, so that the API comes
// first (docs/email.md, "While the API is busy"). It measures the machine, not the merchant's
// business, so it reads real time, not the merchant clock.
type Foreground struct {
	mu       sync.Mutex
	now      func() time.Time
	inflight int
	since    time.Time     // when inflight last went from 0 to 1 (or the current window began)
	start    time.Time     // the current window's start
	served   time.Duration // time with a request in flight in the current window, up to since
	last     float64       // the share of the last complete window
}

// foregroundWindow is the window Busy judges by, and foregroundBusy the share over which it is busy.
const (
	foregroundWindow = 250 * time.Millisecond
	foregroundBusy   = 0.5
)

// NewForeground returns a tracker reading now (time.Now outside tests).
func NewForeground(now func() time.Time) *Foreground {
	return &Foreground{now: now, start: now()}
}

// Serving marks a request in flight until the returned function is called.
func (f *Foreground) Serving() (done func()) {
	f.mu.Lock()
	now := f.now()
	f.roll(now)
	if f.inflight == 0 {
		f.since = now
	}
	f.inflight++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		now := f.now()
		f.roll(now)
		f.inflight--
		if f.inflight == 0 {
			f.served += now.Sub(f.since)
		}
		f.mu.Unlock()
	}
}

// Busy reports whether requests were in flight for more than half of the last complete window,
// or of the window under way once a fifth of it has passed (so that a burst is noticed within
// 50 ms, not only when its first window ends). A nil Foreground is never busy.
func (f *Foreground) Busy() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.roll(now)
	if f.last > foregroundBusy {
		return true
	}
	elapsed := now.Sub(f.start)
	if elapsed < foregroundWindow/5 {
		return false
	}
	served := f.served
	if f.inflight > 0 {
		served += now.Sub(f.since)
	}
	return float64(served)/float64(elapsed) > foregroundBusy
}

// Idle reports whether no request is in flight and none was served in the last complete window
// or in the window under way: then the e-mail worker may render on more than one core
// (EmailRenders). A nil Foreground is always idle.
func (f *Foreground) Idle() bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roll(f.now())
	return f.inflight == 0 && f.served == 0 && f.last == 0
}

// roll closes the windows that ended by now. Called with mu held.
func (f *Foreground) roll(now time.Time) {
	for now.Sub(f.start) >= foregroundWindow {
		end := f.start.Add(foregroundWindow)
		served := f.served
		if f.inflight > 0 {
			served += end.Sub(f.since)
			f.since = end
		}
		f.last = float64(served) / float64(foregroundWindow)
		f.served, f.start = 0, end
		if f.inflight == 0 && now.Sub(f.start) >= foregroundWindow {
			f.last, f.start = 0, now // idle for whole windows since
		}
	}
}
