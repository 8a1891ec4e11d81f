package remit

import (
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
