// Package ratelimit limits requests per API key with a token bucket: in process memory by
// default (golang.org/x/time/rate), or shared by every process through Redis (GCRA, via
// github.com/go-redis/redis_rate). If Redis stops answering, the Redis limiter falls back to the
// in-memory bucket for each request, so requests keep flowing and each process still enforces the
// limit on its own share of traffic (documented in docs/architecture.md).
package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Result is the outcome of one request against its key's bucket.
type Result struct {
	Allowed    bool
	Limit      int           // the bucket size (burst)
	Remaining  int           // requests allowed right now
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // when not allowed: until the next request may pass
}

// Limiter decides whether a request under key may pass.
type Limiter interface {
	Allow(ctx context.Context, key string) Result
}

// Refunder gives back the token an Allow took. A limit that counts only some outcomes (the
// dashboard's failed sign-ins) takes a token before the attempt, so that attempts made in
// parallel cannot pass it, and gives the token back when the outcome is not one it counts. A
// bucket never holds more than its burst.
type Refunder interface {
	Refund(ctx context.Context, key string)
}

// Memory is a per-process token bucket per key.
type Memory struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewMemory returns a limiter allowing perSecond requests per second per key with bursts of burst.
func NewMemory(perSecond float64, burst int) *Memory {
	return &Memory{rate: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}, sweep: time.Now()}
}

// Allow takes one token from key's bucket.
func (m *Memory) Allow(_ context.Context, key string) Result {
	now := time.Now()
	b := m.bucket(key, now)
	r := b.lim.ReserveN(now, 1)
	res := Result{Limit: m.burst}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		res.RetryAfter = d
	} else {
		res.Allowed = true
	}
	tokens := b.lim.TokensAt(now)
	res.Remaining = int(math.Max(0, math.Floor(tokens)))
	if missing := float64(m.burst) - tokens; missing > 0 && m.rate > 0 {
		res.Reset = time.Duration(missing / float64(m.rate) * float64(time.Second))
	}
	return res
}

// Refund gives one token back to key's bucket (Refunder). x/time/rate takes n tokens from the
// bucket's count; n = -1 adds one, and the next look at the bucket caps the count at its burst
// (TestMemoryRefund holds the library to that).
func (m *Memory) Refund(_ context.Context, key string) {
	now := time.Now()
	m.bucket(key, now).lim.ReserveN(now, -1)
}

// bucket is key's bucket, made full when the key is new or was forgotten.
func (m *Memory) bucket(key string, now time.Time) *bucket {
	m.mu.Lock()
	b := m.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(m.rate, m.burst)}
		m.buckets[key] = b
	}
	b.seen = now
	if now.Sub(m.sweep) > time.Minute { // forget idle keys: a full bucket needs no memory
		for k, v := range m.buckets {
			if now.Sub(v.seen) > time.Minute {
				delete(m.buckets, k)
			}
		}
		m.sweep = now
	}
	m.mu.Unlock()
	return b
}

// Redis is a token bucket per key shared through Redis.
type Redis struct {
	lim      *redis_rate.Limiter
	limit    redis_rate.Limit
	fallback *Memory
	log      *slog.Logger

	// After Redis fails, requests use the in-memory bucket without asking Redis until
	// retryAt (unix nanoseconds): an outage costs one failed attempt per RedisRetryInterval,
	// not a dial timeout on every request.
	retryAt atomic.Int64
	down    atomic.Bool
}

// RedisRetryInterval is how long the Redis limiter uses its in-memory fallback after a failure
// before it tries Redis again.
const RedisRetryInterval = time.Second

// NewRedis returns a limiter on the Redis server at url (redis://host:port/db).
func NewRedis(url string, perSecond float64, burst int, log *slog.Logger) (*Redis, *redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	opt.MaxRetries = -1   // no retries (0 means the default, 3)
	opt.DialerRetries = 1 // one dial per attempt (the default, 5 with 100 ms pauses, stalls a request for 0.5 s)
	client := redis.NewClient(opt)
	return &Redis{
		lim:      redis_rate.NewLimiter(client),
		limit:    redisLimit(perSecond, burst),
		fallback: NewMemory(perSecond, burst),
		log:      log,
	}, client, nil
}

// redisLimit is perSecond as redis_rate's whole number of requests per period: per second from
// one a second up (rounded), and one per period below (the dashboard's sign-ins: one in 12 s).
func redisLimit(perSecond float64, burst int) redis_rate.Limit {
	if perSecond > 0 && perSecond < 1 {
		return redis_rate.Limit{Rate: 1, Burst: burst, Period: time.Duration(float64(time.Second) / perSecond)}
	}
	return redis_rate.Limit{Rate: int(math.Max(1, math.Round(perSecond))), Burst: burst, Period: time.Second}
}

// Allow takes one token from key's shared bucket, or from the local one when Redis fails.
func (l *Redis) Allow(ctx context.Context, key string) Result {
	if time.Now().UnixNano() < l.retryAt.Load() {
		return l.fallback.Allow(ctx, key)
	}
	res, err := l.lim.Allow(ctx, "remit:rl:"+key, l.limit)
	if err != nil {
		l.failed(ctx, err)
		return l.fallback.Allow(ctx, key)
	}
	l.answers()
	out := Result{Allowed: res.Allowed > 0, Limit: l.limit.Burst, Remaining: res.Remaining, Reset: res.ResetAfter}
	if !out.Allowed {
		out.RetryAfter = res.RetryAfter
	}
	return out
}

// answers notes that Redis answered again after a failure.
func (l *Redis) answers() {
	if l.down.Swap(false) {
		l.log.Info("rate limiter: redis answers again, sharing the limit through it")
	}
}

// failed notes a failure of Redis (not the caller giving up): the in-memory bucket limits until
// RedisRetryInterval has passed.
func (l *Redis) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	l.retryAt.Store(time.Now().Add(RedisRetryInterval).UnixNano())
	if !l.down.Swap(true) {
		l.log.Warn("rate limiter: redis unavailable, using the in-process limiter", "err", err)
	}
}

// Refund gives one token back to key's shared bucket (Refunder), or to the local one while Redis
// fails. The GCRA takes a cost of -1 as a token given back, but keeps nothing when that would
// make the bucket full (it stores only a future "theoretical arrival time"): then the key is
// deleted, which is a full bucket. Between the two calls another process's Allow on the same key
// may be erased with it: at most one token more, only on a bucket that was nearly full.
func (l *Redis) Refund(ctx context.Context, key string) {
	if time.Now().UnixNano() < l.retryAt.Load() {
		l.fallback.Refund(ctx, key)
		return
	}
	res, err := l.lim.AllowN(ctx, "remit:rl:"+key, l.limit, -1)
	if err == nil && res.ResetAfter <= 0 {
		err = l.lim.Reset(ctx, "remit:rl:"+key)
	}
	if err != nil {
		l.failed(ctx, err)
		l.fallback.Refund(ctx, key)
		return
	}
	l.answers()
}
