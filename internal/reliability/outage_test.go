package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// TestPostgresOutage stops a private PostgreSQL under load and starts it again. While it is down,
// requests fail fast with 503 internal_error envelopes that reveal nothing, and /readyz says so;
// once it is back the same server recovers by itself (no restart), and retrying every request that
// failed with its Idempotency-Key applies each exactly once: no half-applied change remains.
//
// The shared PostgreSQL of the other tests is never stopped. Short form: one outage. REMIT_SOAK=1:
// REMIT_SOAK_ROUNDS outages (default 10).
func TestPostgresOutage(t *testing.T) {
	pg := startPrivatePostgres(t)
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.IdempotencyLease = time.Second
	e := testkit.StartOn(t, testkit.Postgres, pg.URL(), testkit.Options{Config: &cfg})
	tn := tenant{APIKey: e.Tenant.APIKey, MerchantAccounts: map[string]string{"sandbox": e.Tenant.Sandbox}}
	c := newClient(e.Server.URL)
	for _, cus := range []string{"a", "b"} {
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": cus, "name": "Customer " + cus})
	}

	rounds := 1
	if soak() {
		rounds = 10
		if v := soakRounds(); v > 0 {
			rounds = v
		}
	}
	var ops []*op
	var failed, fast, unavailable atomic.Int64
	for round := range rounds {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					cus := []string{"a", "b"}[i%2]
					o := &op{kind: "grant", method: "POST", path: "/v1/customers/" + cus + "/balance/grant",
						body: map[string]any{"currency": "USD", "amount": 10 + w}, key: fmt.Sprintf("r%d-w%d-%d", round, w, i), target: cus}
					start := time.Now()
					a, err := c.do(context.Background(), tn, o.method, o.path, o.body, o.key)
					took := time.Since(start)
					if err != nil {
						t.Errorf("no answer from the server: %v", err)
						return
					}
					o.first, o.acked = a, a.status/100 == 2
					mu.Lock()
					ops = append(ops, o)
					mu.Unlock()
					if a.status/100 == 2 {
						continue
					}
					failed.Add(1)
					if took < 5*time.Second {
						fast.Add(1)
					}
					if a.status == 503 {
						unavailable.Add(1)
					}
					wantOutageAnswer(t, a)
					// A read during the outage fails the same way.
					if r, err := c.do(context.Background(), tn, "GET", "/v1/customers/"+cus, nil, ""); err != nil || (r.status != 200 && r.status != 503) {
						t.Errorf("read during the outage: %v %d %s", err, r.status, r.body)
					} else if r.status == 503 {
						wantOutageAnswer(t, r)
					}
				}
			}()
		}
		testkit.WaitFor(t, 10*time.Second, "load before the outage", func() bool { mu.Lock(); defer mu.Unlock(); return len(ops) > 20*(round+1) })
		before := failed.Load()
		pg.stop(t)
		testkit.WaitFor(t, 20*time.Second, "requests to fail", func() bool { return failed.Load() > before+10 })
		if code := readyz(t, e.Server.URL); code != 503 {
			t.Errorf("/readyz during the outage: %d, want 503", code)
		}
		pg.start(t)
		testkit.WaitFor(t, 30*time.Second, "/readyz to recover", func() bool { return readyz(t, e.Server.URL) == 200 })
		testkit.WaitFor(t, 30*time.Second, "writes to succeed again", func() bool {
			a, err := c.do(context.Background(), tn, "GET", "/v1/customers/a", nil, "")
			return err == nil && a.status == 200
		})
		close(stop)
		wg.Wait()
	}

	// Every request that failed is retried with its key: applied exactly once.
	var stats crashStats
	deadline := time.Now().Add(30 * time.Second)
	for _, o := range ops {
		if !o.acked {
			o.retried = true
			o.first = retryUntilAnswered(t, c, tn, o, deadline, &stats)
		}
		o.objectID = objectIDOf(o, o.first)
	}
	db := openStore(t, pg.URL())
	b := &billing{tn: tn, customers: []string{"a", "b"}}
	checkStore(t, db, c, b, ops)
	if fast.Load() != failed.Load() || unavailable.Load() == 0 {
		t.Errorf("%d requests failed during the outage, %d of them fast (< 5 s), %d with 503", failed.Load(), fast.Load(), unavailable.Load())
	}
	t.Logf("%d outages: %d writes, %d failed during an outage (%d answered 503) and were retried", rounds, len(ops), failed.Load(), unavailable.Load())
}

// wantOutageAnswer: a failure during the outage is an internal_error envelope (503 when the store
// could not be reached, 500 for a statement cut off mid-way) whose message shows no internals.
func wantOutageAnswer(t *testing.T, a answer) {
	t.Helper()
	if (a.status != 503 && a.status != 500) || a.errorCode() != "internal_error" {
		t.Errorf("answer during the outage: %d %s", a.status, a.body)
		return
	}
	var env struct {
		Error struct {
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &env)
	low := strings.ToLower(fmt.Sprint(env.Error.Message, env.Error.Details))
	for _, leak := range []string{"sql", "pgx", "postgres", "dial", "127.0.0.1", "connect", "eof", "store."} {
		if strings.Contains(low, leak) {
			t.Errorf("answer during the outage leaks %q: %s", leak, a.body)
		}
	}
}

func readyz(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}
