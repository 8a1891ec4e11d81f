package ratelimit_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit/ratelimit"
)

// The tests take a bucket's burst quickly and never wait for refills. The rate is one token per
// second, so a stall of a second between two calls could add one token: the checks allow exactly
// the tokens that elapsed time can explain.

func drain(t *testing.T, l ratelimit.Limiter, key string, burst int) {
	t.Helper()
	start := time.Now()
	for i := 1; i <= burst; i++ {
		r := l.Allow(context.Background(), key)
		if !r.Allowed || r.Limit != burst {
			t.Fatalf("call %d: %+v", i, r)
		}
		if time.Since(start) < time.Second && r.Remaining != burst-i {
			t.Fatalf("call %d: remaining %d, want %d", i, r.Remaining, burst-i)
		}
		if r.Reset <= 0 {
			t.Fatalf("call %d: reset %v", i, r.Reset)
		}
	}
	r := l.Allow(context.Background(), key)
	if r.Allowed && time.Since(start) < time.Second {
		t.Fatalf("call %d passed: %+v", burst+1, r)
	}
	if !r.Allowed && (r.RetryAfter <= 0 || r.RetryAfter > time.Second || r.Remaining != 0) {
		t.Fatalf("refused call: %+v", r)
	}
}

func TestMemory(t *testing.T) {
	m := ratelimit.NewMemory(1, 3)
	drain(t, m, "key_a", 3)
	drain(t, m, "key_b", 3) // another key has its own bucket
}

func redisURL(t *testing.T) string {
	u := os.Getenv("REMIT_TEST_REDIS_URL")
	if u == "" {
		t.Skip("REMIT_TEST_REDIS_URL not set (CI sets it)")
	}
	return u
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRedisShared(t *testing.T) {
	url := redisURL(t)
	a, ca, err := ratelimit.NewRedis(url, 1, 3, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	b, cb, err := ratelimit.NewRedis(url, 1, 3, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	key := "key_test_" + time.Now().Format("150405.000000000")
	start := time.Now()
	for i, l := range []ratelimit.Limiter{a, b, a} {
		if r := l.Allow(context.Background(), key); !r.Allowed {
			t.Fatalf("call %d refused: %+v", i+1, r)
		}
	}
	r := b.Allow(context.Background(), key)
	if time.Since(start) < time.Second && (r.Allowed || r.RetryAfter <= 0 || r.Remaining != 0) {
		t.Fatalf("4th call across two limiters: %+v", r)
	}
}

// TestRedisFallbackFailsFast: a Redis that does not work costs one attempt per retry interval;
// meanwhile the in-memory bucket limits, and one warning is logged.
func TestRedisFallbackFailsFast(t *testing.T) {
	// A "Redis" that accepts connections and closes them at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	var logs syncBuffer
	l, client, err := ratelimit.NewRedis("redis://"+ln.Addr().String()+"/0", 1, 3, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	start := time.Now()
	const calls = 50
	allowed := 0
	for range calls {
		if l.Allow(context.Background(), "key_x").Allowed {
			allowed++
		}
	}
	elapsed := time.Since(start)
	if allowed < 3 || allowed > 3+int(elapsed.Seconds())+1 {
		t.Fatalf("%d of %d calls allowed by the fallback (burst 3) in %v", allowed, calls, elapsed)
	}
	// One attempt, with one connection, per RedisRetryInterval.
	attempts := int64(elapsed/ratelimit.RedisRetryInterval) + 1
	if n := accepted.Load(); n < 1 || n > attempts {
		t.Fatalf("Redis was dialled %d times in %v for %d calls: no back-off", n, elapsed, calls)
	}
	if n := strings.Count(logs.String(), "redis unavailable"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
	ln.Close()
	wg.Wait()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Refund gives back the token an Allow took: the dashboard takes one per sign-in attempt and
// gives it back when the attempt succeeds, so only failures count. A bucket never holds more
// than its burst, however many tokens are given back. The rate is one token in 12 s (the
// dashboard's), so no token comes back by itself while the test runs.
func testRefund(t *testing.T, l interface {
	ratelimit.Limiter
	ratelimit.Refunder
}, key string) {
	t.Helper()
	ctx := context.Background()
	for i := range 6 { // six successes: each takes its token and gives it back
		if !l.Allow(ctx, key).Allowed {
			t.Fatalf("success %d refused", i+1)
		}
		l.Refund(ctx, key)
	}
	l.Refund(ctx, key) // a full bucket: nothing more to give back
	for i := range 3 {
		if !l.Allow(ctx, key).Allowed {
			t.Fatalf("failure %d refused", i+1)
		}
	}
	if r := l.Allow(ctx, key); r.Allowed || r.RetryAfter <= time.Second {
		t.Fatalf("a fourth failure, burst 3: %+v", r)
	}
	l.Refund(ctx, key)
	if !l.Allow(ctx, key).Allowed {
		t.Fatal("the token given back was not there")
	}
	if l.Allow(ctx, key).Allowed {
		t.Fatal("more than the token given back")
	}
}

func TestMemoryRefund(t *testing.T) { testRefund(t, ratelimit.NewMemory(1.0/12, 3), "key_r") }

func TestRedisRefund(t *testing.T) {
	l, client, err := ratelimit.NewRedis(redisURL(t), 1.0/12, 3, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	testRefund(t, l, "key_refund_"+time.Now().Format("150405.000000000"))
}

// A rate under one a second (the dashboard's sign-ins: one every 12 s) is kept through Redis as
// it is, not rounded up to one a second.
func TestRedisSlowRate(t *testing.T) {
	l, client, err := ratelimit.NewRedis(redisURL(t), 1.0/12, 2, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	key := "key_slow_" + time.Now().Format("150405.000000000")
	for range 2 {
		l.Allow(context.Background(), key)
	}
	if r := l.Allow(context.Background(), key); r.Allowed || r.RetryAfter < 10*time.Second || r.RetryAfter > 12*time.Second {
		t.Fatalf("the third call: %+v, want refused for about 12 s", r)
	}
}
