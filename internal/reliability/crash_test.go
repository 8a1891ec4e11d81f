package reliability_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestCrashUnderIdempotentWrites drives concurrent idempotent writes (grants, invoice
// finalizations with card charges and receipts, credit notes) at a running `serve`, kills it with
// SIGKILL at a random moment, restarts it on the same store and retries every request whose
// answer was not seen with the same Idempotency-Key. Then: every acknowledged effect is present
// exactly once, every retried request was applied exactly once, every request replays its first
// answer, ledgers add up, numbers are gap-free and every committed change has its event.
//
// Short form: one crash per store. REMIT_SOAK=1: REMIT_SOAK_ROUNDS crashes (default 20) with a
// larger workload each.
func TestCrashUnderIdempotentWrites(t *testing.T) {
	bin := testkit.BuildRemit(t)
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			var dbURL string
			if s == testkit.SQLite {
				dbURL = "sqlite:" + filepath.Join(t.TempDir(), "remit.db")
			} else {
				dbURL = testkit.MigratedStoreURL(t, s)
			}
			crashRounds(t, bin, dbURL)
		})
	}
}

func crashRounds(t *testing.T, bin, dbURL string) {
	rounds, scale := 1, 2
	if soak() {
		rounds, scale = 20, 6
		if v := os.Getenv("REMIT_SOAK_ROUNDS"); v != "" {
			fmt.Sscan(v, &rounds)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	env := append(os.Environ(),
		"REMIT_DATABASE_URL="+dbURL,
		"REMIT_IDEMPOTENCY_LEASE=1s", // a request that died in flight holds its key this long
		"REMIT_RATE_LIMIT=100000", "REMIT_RATE_BURST=100000",
		"REMIT_LOG_LEVEL=warn",
		"REMIT_REDIS_URL=", "REMIT_DATABASE_MAX_CONNS=8",
	)
	tn := bootstrap(t, bin, env, "Crash Test")
	addr := testkit.FreeAddr(t)
	p := testkit.StartServe(t, bin, env, addr)
	c := newClient(p.Base)
	b := setupBilling(t, c, tn)

	var all []*op
	var stats crashStats
	for round := range rounds {
		ops := b.ops(t, c, round, scale, rng)
		killAt := int64(3 + rng.IntN(len(ops)*2/3))
		var answered atomic.Int64
		killed := make(chan struct{})
		var dead atomic.Bool
		runOps(c, tn, ops, 8, func() {
			if answered.Add(1) == killAt && !dead.Swap(true) {
				p.Kill(t)
				close(killed)
			}
		})
		if !dead.Swap(true) { // every answer came before the chosen moment: crash now
			p.Kill(t)
			close(killed)
		}
		<-killed
		if bytes.Contains([]byte(p.Stderr.String()), []byte("panic")) {
			t.Fatalf("serve panicked:\n%s", p.Stderr.String())
		}
		p = testkit.StartServe(t, bin, env, addr)

		// Retry every request whose answer was not seen, with its key.
		deadline := time.Now().Add(30 * time.Second)
		for _, o := range ops {
			stats.sent++
			if o.acked {
				stats.acked++
				continue
			}
			stats.lost++
			o.retried = true
			o.first = retryUntilAnswered(t, c, tn, o, deadline, &stats)
			stats.retried++
		}
		for _, o := range ops {
			o.objectID = objectIDOf(o, o.first)
		}
		// Every request, acknowledged or retried, now replays its answer.
		for _, o := range ops {
			a := retryUntilAnswered(t, c, tn, o, deadline, &stats)
			if a.status != o.first.status || a.header.Get("Idempotent-Replayed") != "true" ||
				(o.acked && !bytes.Equal(a.body, o.first.body)) {
				t.Fatalf("%s (key %s) does not replay its answer: %d %q\nfirst %d %s\nagain %s", o.path, o.key, a.status,
					a.header.Get("Idempotent-Replayed"), o.first.status, o.first.body, a.body)
			}
		}
		all = append(all, ops...)
		db := openStore(t, dbURL)
		checkStore(t, db, c, b, all)
		if t.Failed() {
			t.Fatalf("round %d (killed after %d answers) broke an invariant", round, killAt)
		}
	}
	t.Logf("%d rounds: %d requests, %d answered before the crash, %d without an answer (in flight at the kill, or sent while it was down) and retried, %d in-flight 409s while leases ran out",
		rounds, stats.sent, stats.acked, stats.lost, stats.inFlight409)
	if stats.lost == 0 {
		t.Errorf("no request was lost to the crash: the test did not test anything")
	}
}
