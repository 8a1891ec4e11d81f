package remit

import (
	"fmt"
	"sync"
	"time"
)

// Clock is the one source of wall-clock time. Every time-based rule reads a merchant account's
// clock, which is this clock plus the account's sandbox offset (see MerchantNow).
type Clock interface {
	Now() time.Time
}

// SystemClock is real time in UTC.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now().UTC() }

// FixedClock is a settable clock for tests of pure rules.
type FixedClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFixedClock returns a clock standing at t.
func NewFixedClock(t time.Time) *FixedClock { return &FixedClock{t: t.UTC()} }

func (c *FixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock by d.
func (c *FixedClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// MerchantNow is the merchant account's time: real time plus everything its sandbox clock was
// advanced by. Production accounts never have an offset.
func MerchantNow(c Clock, offset time.Duration) time.Time {
	return c.Now().Add(offset).UTC()
}

// Micros converts a time to the storage form (Unix microseconds). Times are stored as integers in
// both stores so that SQL is shared and ordering is exact.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros converts the storage form back to a UTC time.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// TestClock is the sandbox clock resource.
type TestClock struct {
	Object            string    `json:"object"`
	MerchantAccountID string    `json:"merchantAccountId"`
	Environment       string    `json:"environment"`
	Now               time.Time `json:"now"`
	CreatedAt         time.Time `json:"createdAt"`
}

// MaxClockAdvance bounds one advance of a sandbox clock so that time arithmetic cannot overflow.
const MaxClockAdvance = 20 * 365 * 24 * time.Hour

// CheckClockAdvance records the problems of an advance request's shape: exactly one of to and
// seconds, seconds within 1 and 20 years. It needs no clock; ClockTarget applies the rest.
func CheckClockAdvance(to *time.Time, seconds *int64, p *Problems) {
	switch {
	case to != nil && seconds != nil:
		p.Body("to", "mutually_exclusive", "Give either 'to' or 'seconds', not both.")
		p.Body("seconds", "mutually_exclusive", "Give either 'to' or 'seconds', not both.")
	case to == nil && seconds == nil:
		p.Body("to", "required", "Give 'to' (a date-time) or 'seconds' (a positive integer) to advance the clock.")
	case seconds != nil && (*seconds < 1 || time.Duration(*seconds) > MaxClockAdvance/time.Second):
		p.Body("seconds", "out_of_range", fmt.Sprintf("seconds must be between 1 and %d (20 years).", int64(MaxClockAdvance/time.Second)))
	}
}

// ClockTarget is where an advance from now moves a sandbox clock, or the problems that keep it
// from moving (CheckClockAdvance, and: the clock only moves forward, by at most 20 years).
func ClockTarget(now time.Time, to *time.Time, seconds *int64, p *Problems) time.Time {
	before := p.Len()
	CheckClockAdvance(to, seconds, p)
	switch {
	case p.Len() > before:
		return now
	case to != nil:
		target := to.UTC()
		if !target.After(now) {
			p.Body("to", "not_in_future", fmt.Sprintf("The clock only moves forward: 'to' must be after the clock's current time %s.", now.Format(time.RFC3339Nano)))
		} else if target.Sub(now) > MaxClockAdvance {
			p.Body("to", "too_far", "One advance may move the clock at most 20 years.")
		}
		return target
	default:
		return now.Add(time.Duration(*seconds) * time.Second)
	}
}
