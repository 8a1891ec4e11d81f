package httpapi_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// Rate-limit tests count requests against the bucket's burst; they never wait for time to pass.
// The bucket refills at 1 request per second, so a machine slow enough to spend a second between
// requests could see one more request pass: drainBucket allows for exactly that and no more.

func rateConfig(redisURL string) *wire.Config {
	c := wire.Defaults()
	c.RateLimit, c.RateBurst, c.RedisURL = 1, 3, redisURL
	return &c
}

func headerInt(t *testing.T, r *testkit.Response, name string) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get(name))
	if err != nil {
		t.Fatalf("header %s = %q on %d %s", name, r.Header.Get(name), r.Status, r.Body)
	}
	return n
}

// sender sends GET /v1/test-helpers/clock to one server with some options.
type sender struct {
	e    *testkit.Env
	opts []testkit.Opt
}

// drained is the outcome of drainBucket.
type drained struct {
	r     *testkit.Response // the 429
	e     *testkit.Env      // the server that answered it
	start time.Time         // when the first request was sent
	exact bool              // exactly burst requests passed
}

// empty reports whether the bucket is certainly still empty: exactly its burst was used, and
// less than one second (one token at 1/s) has passed since the first request.
func (d drained) empty() bool { return d.exact && time.Since(d.start) < time.Second }

// drainBucket sends requests, each through the next sender in turn, until one is refused. It
// checks the headers of every answer and returns the 429 and the server that gave it.
func drainBucket(t *testing.T, burst int, senders ...sender) drained {
	t.Helper()
	start := time.Now()
	passed := 0
	for i := 0; i < burst+20; i++ {
		s := senders[i%len(senders)]
		r := s.e.Do("GET", clockPath, nil, s.opts...)
		if headerInt(t, r, "RateLimit-Limit") != burst {
			t.Fatalf("RateLimit-Limit %s, want %d", r.Header.Get("RateLimit-Limit"), burst)
		}
		if r.Status == 429 {
			// A refill of one token per elapsed second may let a request or two more through.
			if slack := int(time.Since(start).Seconds()) + 1; passed < burst || passed > burst+slack {
				t.Fatalf("%d requests passed before the 429 (burst %d, %v elapsed)", passed, burst, time.Since(start))
			}
			return drained{r: r, e: s.e, start: start, exact: passed == burst}
		}
		if r.Status != 200 {
			t.Fatalf("unexpected %d %s", r.Status, r.Body)
		}
		passed++
		// Remaining counts down as the burst is used, and Reset grows with what was used.
		if time.Since(start) < time.Second && passed <= burst {
			if got := headerInt(t, r, "RateLimit-Remaining"); got != burst-passed {
				t.Fatalf("request %d: RateLimit-Remaining %d, want %d", passed, got, burst-passed)
			}
			if got := headerInt(t, r, "RateLimit-Reset"); got < 1 || got > passed {
				t.Fatalf("request %d: RateLimit-Reset %d, want 1..%d", passed, got, passed)
			}
		}
	}
	t.Fatalf("no 429 after %d requests", burst+20)
	return drained{}
}

func want429(t *testing.T, r *testkit.Response, e *testkit.Env) {
	t.Helper()
	wantError(t, e, r, 429, "rate_limited")
	if ra := headerInt(t, r, "Retry-After"); ra < 1 {
		t.Fatalf("Retry-After %d", ra)
	}
	if got := headerInt(t, r, "RateLimit-Remaining"); got != 0 {
		t.Fatalf("429 with RateLimit-Remaining %d", got)
	}
	if headerInt(t, r, "RateLimit-Reset") < 1 {
		t.Fatalf("429 with RateLimit-Reset %s", r.Header.Get("RateLimit-Reset"))
	}
}

// TestRateLimit: per API key token bucket; the 4th quick request with burst 3 is 429 with
// Retry-After; another key of the same organization has its own bucket.
func TestRateLimit(t *testing.T) { rateLimitPerKey(t, "") }

// TestRateLimitRedis is TestRateLimit with the bucket in Redis.
func TestRateLimitRedis(t *testing.T) { rateLimitPerKey(t, redisURL(t)) }

func rateLimitPerKey(t *testing.T, redisURL string) {
	testkit.RunWith(t, testkit.Options{Config: rateConfig(redisURL)}, func(t *testing.T, e *testkit.Env) {
		d := drainBucket(t, 3, sender{e: e})
		want429(t, d.r, d.e)
		// Writes are limited by the same bucket, before anything else happens.
		if r := e.Do("POST", advancePath, map[string]any{"seconds": 1}, testkit.Key("limited")); d.empty() {
			want429(t, r, e)
			if n := idempotencyRows(t, e, "limited"); n != 0 {
				t.Fatalf("a 429 claimed its Idempotency-Key")
			}
		}

		_, other, err := e.App.Access.CreateAPIKey(context.Background(), e.Tenant.OrganizationID, []remit.Environment{remit.Sandbox})
		if err != nil {
			t.Fatal(err)
		}
		// Unauthenticated requests are refused before the limiter and use no bucket.
		wantError(t, e, e.Do("GET", clockPath, nil, testkit.APIKey("")), 401, "unauthorized")
		// The other key starts with a full bucket of its own, while the first is still empty.
		d2 := drainBucket(t, 3, sender{e: e, opts: []testkit.Opt{testkit.APIKey(other)}})
		want429(t, d2.r, d2.e)
		if r := e.Do("GET", clockPath, nil); d.empty() {
			want429(t, r, e)
		} else {
			t.Logf("machine too slow for the strict checks: a token may have refilled")
		}
		if strings.Contains(e.Logs.String(), "redis unavailable") {
			t.Fatal("the limiter fell back to memory")
		}
	})
}

func redisURL(t *testing.T) string {
	u := os.Getenv("REMIT_TEST_REDIS_URL")
	if u == "" {
		t.Skip("REMIT_TEST_REDIS_URL not set (CI sets it)")
	}
	return u
}

// TestRateLimitRedisShared: two servers on one store sharing one Redis share each key's bucket.
func TestRateLimitRedisShared(t *testing.T) {
	url := redisURL(t)
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			a := testkit.Start(t, s, testkit.Options{Config: rateConfig(url)})
			b := testkit.StartOn(t, s, a.DBURL, testkit.Options{Config: rateConfig(url)})
			asA := []testkit.Opt{testkit.As(a.Tenant)}
			d := drainBucket(t, 3, sender{a, asA}, sender{b, asA})
			want429(t, d.r, d.e)
			ra, rb := a.Do("GET", clockPath, nil, asA...), b.Do("GET", clockPath, nil, asA...)
			if d.empty() {
				want429(t, ra, a)
				want429(t, rb, b)
			}
			// b's own tenant key is untouched on both servers.
			r := b.Must(200, "GET", clockPath, nil)
			if got := headerInt(t, r, "RateLimit-Remaining"); got != 2 {
				t.Fatalf("another key's RateLimit-Remaining %d, want 2", got)
			}
			if strings.Contains(a.Logs.String()+b.Logs.String(), "redis unavailable") {
				t.Fatal("the limiter fell back to memory although Redis is up")
			}
		})
	}
}

// TestRateLimitRedisFallback: when Redis does not answer, each server limits in memory and
// requests keep flowing.
func TestRateLimitRedisFallback(t *testing.T) {
	testkit.RunWith(t, testkit.Options{Config: rateConfig("redis://127.0.0.1:1/0")}, func(t *testing.T, e *testkit.Env) {
		d := drainBucket(t, 3, sender{e: e})
		want429(t, d.r, d.e)
		if !strings.Contains(e.Logs.String(), "redis unavailable") {
			t.Fatalf("no warning logged about the fallback:\n%s", e.Logs.String())
		}
	})
}

// TestRateLimitHeadersOnEveryAuthenticatedAnswer: every /v1 answer to a request whose key was
// authenticated carries the RateLimit-* headers, errors included (403, 404, 422); the answers the
// contract says carry none are those given before a key is read: 401, and 404 or 405 for a path
// or method the API does not have.
func TestRateLimitHeadersOnEveryAuthenticatedAnswer(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		has := func(r *testkit.Response) bool {
			return r.Header.Get("RateLimit-Limit") != "" && r.Header.Get("RateLimit-Reset") != ""
		}
		for _, c := range []struct {
			name string
			r    *testkit.Response
			want bool
		}{
			{"200", e.Do("GET", "/v1/test-helpers/clock", nil), true},
			{"404 for a resource", e.Do("GET", "/v1/invoices/inv_none", nil), true},
			{"422", e.Do("POST", "/v1/customers", map[string]any{}), true},
			{"403 in production", e.Do("GET", "/v1/test-helpers/clock", nil, testkit.Production()), true},
			{"401", e.Do("GET", "/v1/test-helpers/clock", nil, testkit.APIKey("")), false},
			{"404 for an unknown path", e.Do("GET", "/v1/nothing-here", nil), false},
			{"405", e.Do("DELETE", "/v1/test-helpers/clock", nil), false},
		} {
			if has(c.r) != c.want {
				t.Errorf("%s (%d): RateLimit headers %v, want %v", c.name, c.r.Status, has(c.r), c.want)
			}
		}
	})
}
