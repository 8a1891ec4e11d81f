package httpapi_test

import (
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// Two servers on one store (two processes on PostgreSQL in production): 20 concurrent requests
// with one Idempotency-Key, spread across both, apply the effect exactly once. The effect is the
// sandbox clock moving by exactly one hour.
func TestIdempotencyExactlyOnceAcrossServers(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			url := testkit.MigratedStoreURL(t, s)
			a := testkit.StartOn(t, s, url, testkit.Options{})
			b := testkit.StartOn(t, s, url, testkit.Options{})
			b.Tenant = a.Tenant // one organization, reached through either server

			before := clockNow(t, a)
			var wg sync.WaitGroup
			statuses := make([]int, 20)
			bodies := make([]string, 20)
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					srv := a
					if i%2 == 1 {
						srv = b
					}
					r := srv.Do("POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 3600}, testkit.Key("one-hour"))
					statuses[i], bodies[i] = r.Status, string(r.Body)
				}()
			}
			wg.Wait()
			var first string
			for i, st := range statuses {
				switch st {
				case 201:
					if first == "" {
						first = bodies[i]
					} else if bodies[i] != first {
						t.Fatalf("two different successful answers:\n%s\n%s", first, bodies[i])
					}
				case 409: // in flight: the first had not finished yet
				default:
					t.Fatalf("request %d: status %d: %s", i, st, bodies[i])
				}
			}
			if first == "" {
				t.Fatal("no request succeeded")
			}
			moved := clockNow(t, b).Sub(before)
			if moved < time.Hour || moved > time.Hour+time.Minute {
				t.Fatalf("clock moved by %s, want exactly one advance of 1h (plus the test's own time)", moved)
			}
			// After the race, the key replays from either server.
			r := b.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 3600}, testkit.Key("one-hour"))
			if r.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != first {
				t.Fatalf("replay through the other server differs: %s", r.Body)
			}
		})
	}
}
