package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestSeveralProcesses runs three `serve` processes on one PostgreSQL store and one Redis behind a
// round-robin client, and checks what must hold across processes: an Idempotency-Key applies once
// whichever process each retry reaches; the rate limit is one bucket per key; invoice numbers are
// gap-free; each webhook delivery is sent once; sandbox clock advances (and the three schedulers)
// never run due work twice.
func TestSeveralProcesses(t *testing.T) {
	pgURL, redisURL := os.Getenv("REMIT_TEST_POSTGRES_URL"), os.Getenv("REMIT_TEST_REDIS_URL")
	if pgURL == "" || redisURL == "" {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatal("REMIT_TEST_POSTGRES_URL and REMIT_TEST_REDIS_URL are needed")
		}
		t.Skip("needs REMIT_TEST_POSTGRES_URL and REMIT_TEST_REDIS_URL")
	}
	bin := testkit.BuildRemit(t)
	dbURL := testkit.NewStoreURL(t, testkit.Postgres)

	var hookMu sync.Mutex
	hooks := map[string]int{} // webhook-id → times received
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		hooks[r.Header.Get("webhook-id")]++
		hookMu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(receiver.Close)

	const rate, burst = 20, 200
	env := append(os.Environ(),
		"REMIT_DATABASE_URL="+dbURL, "REMIT_REDIS_URL="+redisURL,
		fmt.Sprintf("REMIT_RATE_LIMIT=%d", rate), fmt.Sprintf("REMIT_RATE_BURST=%d", burst),
		"REMIT_SCHEDULER_INTERVAL=50ms", "REMIT_WEBHOOK_RETRY_SCHEDULE=1s,1s,1s", "REMIT_WEBHOOK_ALLOW_PRIVATE=true",
		"REMIT_LOG_LEVEL=warn", "REMIT_DATABASE_MAX_CONNS=8", // 3 × 8 beside the other tests on the shared server
	)
	tenants := map[string]tenant{}
	for _, name := range []string{"idempotency", "rate", "numbers", "hooks", "clock"} {
		tenants[name] = bootstrap(t, bin, env, "Multi "+name)
	}
	var bases []string
	var procs []*testkit.Process
	for range 3 {
		p := testkit.StartServe(t, bin, env, testkit.FreeAddr(t))
		procs = append(procs, p)
		bases = append(bases, p.Base)
	}
	defer func() { // what the processes logged explains a failure (a job that failed, and why)
		if t.Failed() {
			for i, p := range procs {
				t.Logf("serve process %d logged:\n%s", i, p.Stderr.String())
			}
		}
	}()
	c := newClient(bases...)
	db := openStore(t, dbURL)
	ctx := context.Background()

	t.Run("idempotency", func(t *testing.T) {
		tn := tenants["idempotency"]
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": "x", "name": "X"})
		const keys, copies = 15, 6
		answers := make([][]answer, keys)
		var wg sync.WaitGroup
		for k := range keys {
			answers[k] = make([]answer, copies)
			for i := range copies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a, err := c.do(ctx, tn, "POST", "/v1/customers/x/balance/grant", map[string]any{"currency": "USD", "amount": 100 + k}, fmt.Sprintf("k%d", k))
					if err != nil {
						t.Errorf("grant: %v", err)
					}
					answers[k][i] = a
				}()
			}
		}
		wg.Wait()
		for k, as := range answers {
			var first []byte
			for _, a := range as {
				switch {
				case a.status == 201:
					if first == nil {
						first = a.body
					} else if string(a.body) != string(first) {
						t.Errorf("key k%d: two different successes:\n%s\n%s", k, first, a.body)
					}
				case a.status == 409 && a.errorReason() == "idempotency_key_in_flight":
				default:
					t.Errorf("key k%d: %d %s", k, a.status, a.body)
				}
			}
		}
		if n := count(t, db, `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1`, tn.sandbox()); n != keys {
			t.Errorf("%d grants from %d keys sent %d times each over 3 processes", n, keys, copies)
		}
	})

	t.Run("rate limit shared", func(t *testing.T) {
		tn := tenants["rate"]
		const n = 2 * burst
		var allowed, limited atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 16 {
					a, err := c.do(ctx, tn, "GET", "/v1/test-helpers/clock", nil, "")
					switch {
					case err != nil:
						t.Errorf("clock: %v", err)
					case a.status == 200:
						allowed.Add(1)
					case a.status == 429:
						limited.Add(1)
					default:
						t.Errorf("clock: %d %s", a.status, a.body)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start).Seconds()
		// One shared bucket: the burst plus what refilled meanwhile. Three per-process buckets
		// would have let every request through.
		if max := float64(burst) + rate*(elapsed+1); float64(allowed.Load()) > max || limited.Load() == 0 {
			t.Errorf("%d allowed, %d limited in %.1fs over 3 processes; one shared bucket allows at most %.0f", allowed.Load(), limited.Load(), elapsed, max)
		}
	})

	t.Run("gap-free numbers", func(t *testing.T) {
		tn := tenants["numbers"]
		b := &billing{tn: tn, auto: map[string]bool{}}
		c.must(t, 200, tn, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
			"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": "n", "name": "N"})
		c.must(t, 201, tn, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-n", "customerId": "n", "currency": "USD"})
		var invs []string
		for i := range 30 {
			invs = append(invs, b.draft(t, c, "n", int64(100+i)))
		}
		var wg sync.WaitGroup
		for _, inv := range invs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := c.do(ctx, tn, "POST", "/v1/invoices/"+inv+"/finalize", map[string]any{}, "")
				if err != nil || a.status != 200 {
					t.Errorf("finalize %s: %v %d %s", inv, err, a.status, a.body)
				}
			}()
		}
		wg.Wait()
		checkGapFree(t, db, tn.sandbox())
		if n := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = 'invoice.finalized'`, tn.sandbox()); n != len(invs) {
			t.Errorf("%d invoice.finalized events for %d invoices", n, len(invs))
		}
	})

	t.Run("webhooks once", func(t *testing.T) {
		tn := tenants["hooks"]
		c.must(t, 201, tn, "POST", "/v1/webhook-endpoints", map[string]any{"url": receiver.URL + "/hook", "enabledEvents": []string{"customer_balance.granted"}})
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": "h", "name": "H"})
		const grants = 40
		var wg sync.WaitGroup
		for i := range grants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if a, err := c.do(ctx, tn, "POST", "/v1/customers/h/balance/grant", map[string]any{"currency": "USD", "amount": 1 + i}, ""); err != nil || a.status != 201 {
					t.Errorf("grant: %v %d %s", err, a.status, a.body)
				}
			}()
		}
		wg.Wait()
		testkit.WaitFor(t, 30*time.Second, "every event delivered", func() bool {
			return count(t, db, `SELECT COUNT(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
				WHERE e.merchant_account_id = $1 AND d.status = 'succeeded'`, tn.sandbox()) == grants
		})
		attempts := count(t, db, `SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			JOIN events e ON e.id = d.event_id WHERE e.merchant_account_id = $1`, tn.sandbox())
		hookMu.Lock()
		defer hookMu.Unlock()
		got := 0
		for id, n := range hooks {
			got += n
			if n != 1 {
				t.Errorf("event %s delivered %d times", id, n)
			}
		}
		if got != grants || attempts != grants {
			t.Errorf("%d deliveries received, %d attempts recorded, for %d events", got, attempts, grants)
		}
	})

	t.Run("clock advances run due work once", func(t *testing.T) {
		tn := tenants["clock"]
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": "k", "name": "K"})
		now, err := time.Parse(time.RFC3339Nano, c.must(t, 200, tn, "GET", "/v1/test-helpers/clock", nil)["now"].(string))
		if err != nil {
			t.Fatal(err)
		}
		const grants = 20
		for i := range grants {
			eff := now.Add(time.Duration(i+1) * 3 * time.Minute)
			c.must(t, 201, tn, "POST", "/v1/customers/k/balance/grant", map[string]any{"currency": "USD", "amount": 10,
				"effectiveAt": eff.Format(time.RFC3339Nano), "expiresAt": eff.Add(30 * time.Minute).Format(time.RFC3339Nano)})
		}
		var wg sync.WaitGroup
		for range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if a, err := c.do(ctx, tn, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 600}, ""); err != nil || a.status != 201 {
					t.Errorf("advance: %v %d %s", err, a.status, a.body)
				}
			}()
		}
		wg.Wait()
		ma := tn.sandbox()
		for typ, want := range map[string]int{"customer_balance.grant_effective": grants, "customer_balance.expired": grants} {
			if n := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = $2`, ma, typ); n != want {
				t.Errorf("%d %s events, want %d", n, typ, want)
			}
			if n := count(t, db, `SELECT COUNT(DISTINCT object_id) FROM events WHERE merchant_account_id = $1 AND type = $2`, ma, typ); n != want {
				t.Errorf("%d distinct objects of %s events, want %d", n, typ, want)
			}
		}
		if n := count(t, db, `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'expiry'`, ma); n != grants {
			t.Errorf("%d expiry entries for %d grants", n, grants)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status <> 'done' AND due_at <= $2`, ma, now.Add(2*time.Hour).UnixMicro()); n != 0 {
			t.Errorf("%d due jobs left undone", n)
		}
		moved, err := time.Parse(time.RFC3339Nano, c.must(t, 200, tn, "GET", "/v1/test-helpers/clock", nil)["now"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if d := moved.Sub(now); d < 2*time.Hour || d > 2*time.Hour+time.Minute {
			t.Errorf("the clock moved %s, want 12 × 10 min", d)
		}
	})
}
