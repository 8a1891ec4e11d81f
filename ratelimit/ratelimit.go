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
	r := int(math.Max(1, math.Round(perSecond)))
	return &Redis{
		lim:      redis_rate.NewLimiter(client),
		limit:    redis_rate.Limit{Rate: r, Burst: burst, Period: time.Second},
		fallback: NewMemory(perSecond, burst),
		log:      log,
	}, client, nil
}

// Allow takes one token from key's shared bucket, or from the local one when Redis fails.
func (l *Redis) Allow(ctx context.Context, key string) Result {
	if time.Now().UnixNano() < l.retryAt.Load() {
		return l.fallback.Allow(ctx, key)
	}
	res, err := l.lim.Allow(ctx, "remit:rl:"+key, l.limit)
	if err != nil {
		if ctx.Err() == nil { // not the caller giving up: Redis is unwell
			l.retryAt.Store(time.Now().Add(RedisRetryInterval).UnixNano())
			if !l.down.Swap(true) {
				l.log.Warn("rate limiter: redis unavailable, using the in-process limiter", "err", err)
			}
		}
		return l.fallback.Allow(ctx, key)
	}
	if l.down.Swap(false) {
		l.log.Info("rate limiter: redis answers again, sharing the limit through it")
	}
	out := Result{Allowed: res.Allowed > 0, Limit: l.limit.Burst, Remaining: res.Remaining, Reset: res.ResetAfter}
	if !out.Allowed {
		out.RetryAfter = res.RetryAfter
	}
	return out
}
