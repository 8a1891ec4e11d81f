package reliability_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestBillingDay is the billing day of docs/reliability.md "The billing day": subscriptions that
// all fall due at one clock advance are renewed, finalized and charged through the sandbox (50 ms
// a charge) while `serve` processes are killed (SIGKILL) in the middle, one while the renewal jobs
// run and one while their invoices are charged, and the store shows every subscription renewed
// exactly once: one renewal invoice each for the period, finalized once, paid by exactly one
// charge, none twice, none missing. On PostgreSQL three processes share the work and two of them
// die; on SQLite the one process dies and is started again, twice.
func TestBillingDay(t *testing.T) {
	bin := testkit.BuildRemit(t)
	t.Run("sqlite", func(t *testing.T) {
		billingDay(t, bin, testkit.NewStoreURL(t, testkit.SQLite), 1, 200)
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("REMIT_TEST_POSTGRES_URL") == "" {
			if os.Getenv("REMIT_CI") != "" {
				t.Fatal("REMIT_TEST_POSTGRES_URL is needed")
			}
			t.Skip("needs REMIT_TEST_POSTGRES_URL")
		}
		billingDay(t, bin, testkit.NewStoreURL(t, testkit.Postgres), 3, 300)
	})
}

// dayRun is one billing day's processes and what the checks need.
type dayRun struct {
	t     *testing.T
	bin   string
	env   []string
	tn    tenant
	db    *sql.DB
	procs []*testkit.Process
}

func billingDay(t *testing.T, bin, dbURL string, processes, n int) {
	env := append(os.Environ(),
		"REMIT_DATABASE_URL="+dbURL, "REMIT_REDIS_URL=", "REMIT_LOG_LEVEL=warn",
		"REMIT_RATE_LIMIT=1000000", "REMIT_RATE_BURST=1000000",
		"REMIT_SCHEDULER_INTERVAL=50ms", "REMIT_SANDBOX_PROCESSOR_LATENCY=50ms",
		// An attempt the killed process left processing is reconciled 2 s after it was recorded;
		// one it never sent fails and is retried by dunning a day later on the merchant clock.
		"REMIT_PROCESSOR_TIMEOUT=2s", "REMIT_RECONCILE_INTERVAL=200ms", "REMIT_DUNNING_SCHEDULE=1d",
		"REMIT_DATABASE_MAX_CONNS=8", // 3 × 8 beside the other tests on the shared server
	)
	r := &dayRun{t: t, bin: bin, env: env, tn: bootstrap(t, bin, env, "Billing day")}
	for range processes {
		r.procs = append(r.procs, testkit.StartServe(t, bin, env, testkit.FreeAddr(t)))
	}
	defer func() {
		if t.Failed() {
			for i, p := range r.procs {
				t.Logf("serve process %d logged:\n%s", i, p.Stderr.String())
			}
		}
	}()
	r.db = openStore(t, dbURL)
	c := r.client()
	firstEnds := r.subscribe(c, n)

	// The first invoices finalize an hour after acceptance and are charged.
	c.must(t, 201, r.tn, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 2 * 3600})
	r.waitSettled(c, "the first invoices paid", `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND status = 'paid'`, n)

	// The billing day: every subscription's period ends by the advance's target.
	var minEnd, last time.Time
	for _, end := range firstEnds {
		if end.After(last) {
			last = end
		}
		if minEnd.IsZero() || end.Before(minEnd) {
			minEnd = end
		}
	}
	target := last.Add(time.Hour + time.Minute) // past each renewal draft's automatic finalization
	advanced := make(chan struct{})
	go func() { // the process that runs the advance's jobs is the first killed: its answer never comes
		defer close(advanced)
		_, _ = newClient(r.procs[0].Base).do(context.Background(), r.tn, "POST", "/v1/test-helpers/clock/advance",
			map[string]any{"to": target.Format(time.RFC3339Nano)}, "")
	}()
	// A process dies while the renewals run (drafts made in batches of jobs), and another while
	// the renewal invoices are finalized and charged (charges in flight).
	renewedPaid := `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND status = 'paid' AND period_start >= $2`
	r.killWhen("a third of the subscriptions renewed", `SELECT COUNT(*) FROM subscriptions WHERE merchant_account_id = $1 AND current_period_start >= $2`,
		n/3, minEnd.UnixMicro())
	<-advanced
	r.killWhen("a quarter of the renewals paid", renewedPaid, n/4, minEnd.UnixMicro())
	c = r.client()
	r.waitSettled(c, "every renewal finalized", `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND status <> 'draft' AND period_start >= $2`,
		n, minEnd.UnixMicro())
	never := count(t, r.db, `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND status = 'open' AND period_start >= $2`,
		r.tn.sandbox(), minEnd.UnixMicro())
	t.Logf("%d renewal charges were never sent by the killed process (failed, retried by dunning)", never)
	// The attempts the killed process never sent failed (nothing was taken); dunning's retry a day
	// later charges them.
	c.must(t, 201, r.tn, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 2 * 24 * 3600})
	r.waitSettled(c, "every renewal paid", renewedPaid, n, minEnd.UnixMicro())
	r.checkOnce(firstEnds)
}

// killWhen waits until query (its first argument the merchant account) counts at least want, then
// kills the first process with SIGKILL; the last one left is started again (SQLite: the store's one
// process, whose scheduler and reconciler carry on from the store).
func (r *dayRun) killWhen(what, query string, want int, args ...any) {
	t := r.t
	args = append([]any{r.tn.sandbox()}, args...)
	testkit.WaitFor(t, 60*time.Second, what, func() bool { return count(t, r.db, query, args...) >= want })
	at := count(t, r.db, query, args...)
	r.procs[0].Kill(t)
	t.Logf("%s: killed a process at %d (of %d processes)", what, at, len(r.procs))
	r.procs = r.procs[1:]
	if len(r.procs) == 0 {
		r.procs = append(r.procs, testkit.StartServe(t, r.bin, r.env, testkit.FreeAddr(t)))
	}
}

func (r *dayRun) client() *client {
	var bases []string
	for _, p := range r.procs {
		bases = append(bases, p.Base)
	}
	return newClient(bases...)
}

// subscribe makes n charge_automatically customers with a default card and one monthly
// subscription each, and returns each subscription's first period end.
func (r *dayRun) subscribe(c *client, n int) map[string]time.Time {
	t := r.t
	c.must(t, 200, r.tn, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "plan", "name": "Plan",
		"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 2000})
	ends := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				id, end := r.subscribeOne(c, i)
				mu.Lock()
				ends[id] = end
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(ends) != n {
		t.Fatalf("%d subscriptions for %d customers", len(ends), n)
	}
	return ends
}

func (r *dayRun) subscribeOne(c *client, i int) (string, time.Time) {
	t := r.t
	cus, ba := fmt.Sprintf("c%d", i), fmt.Sprintf("ba%d", i)
	c.must(t, 201, r.tn, "POST", "/v1/customers", map[string]any{"customerId": cus, "name": "Customer " + cus})
	c.must(t, 201, r.tn, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": ba, "customerId": cus, "currency": "USD",
		"collectionMethod": "charge_automatically"})
	setup := c.must(t, 201, r.tn, "POST", "/v1/customers/"+cus+"/payment-method-setup", map[string]any{"billingAccountId": ba, "setAsDefault": true})
	req, err := http.NewRequest(http.MethodPut, setup["url"].(string)+"&paymentMethod=pm_card_visa", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("portal payment method: %d", res.StatusCode)
	}
	q := c.must(t, 201, r.tn, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": cus,
		"billingAccountId": ba, "currency": "USD", "lines": []any{map[string]any{"priceId": "plan"}}})
	acc := c.must(t, 200, r.tn, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{})
	subID, _ := acc["subscriptionId"].(string)
	sub := c.must(t, 200, r.tn, "GET", "/v1/subscriptions/"+subID, nil)
	end, err := time.Parse(time.RFC3339Nano, sub["currentPeriodEnd"].(string))
	if err != nil {
		t.Fatalf("subscription %s: currentPeriodEnd: %v", subID, err)
	}
	return subID, end
}

// waitSettled waits until query (its first argument the merchant account) counts want, with no
// attempt left processing and no job due left pending.
func (r *dayRun) waitSettled(c *client, what, query string, want int, args ...any) {
	t := r.t
	args = append([]any{r.tn.sandbox()}, args...)
	testkit.WaitFor(t, 90*time.Second, what, func() bool {
		return count(t, r.db, query, args...) == want &&
			count(t, r.db, `SELECT COUNT(*) FROM payments WHERE merchant_account_id = $1 AND status = 'processing'`, r.tn.sandbox()) == 0
	})
	now, err := time.Parse(time.RFC3339Nano, c.must(t, 200, r.tn, "GET", "/v1/test-helpers/clock", nil)["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, what+": no due job pending", func() bool {
		return count(t, r.db, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status = 'pending' AND due_at <= $2`,
			r.tn.sandbox(), now.UnixMicro()) == 0
	})
}

// checkOnce checks the store: every subscription renewed once (one renewal invoice for the period
// that started at its first period's end, one subscription.renewed event, one next renewal
// pending), each renewal invoice finalized once and paid by exactly one succeeded charge with one
// receipt, and the numbers gap-free.
func (r *dayRun) checkOnce(firstEnds map[string]time.Time) {
	t := r.t
	ma := r.tn.sandbox()
	rows, err := r.db.Query(`SELECT subscription_id, id, period_start, status FROM invoices
		WHERE merchant_account_id = $1 AND subscription_id IS NOT NULL`, ma)
	if err != nil {
		t.Fatal(err)
	}
	renewal := map[string][]string{} // subscription → its invoices for the renewed period
	for rows.Next() {
		var sub, inv, status string
		var start int64
		if err := rows.Scan(&sub, &inv, &start, &status); err != nil {
			t.Fatal(err)
		}
		if end, ok := firstEnds[sub]; !ok {
			t.Errorf("invoice %s of an unknown subscription %s", inv, sub)
		} else if start == end.UnixMicro() {
			renewal[sub] = append(renewal[sub], inv)
			if status != "paid" {
				t.Errorf("renewal invoice %s of %s is %s", inv, sub, status)
			}
		}
	}
	rows.Close()
	for sub := range firstEnds {
		if got := len(renewal[sub]); got != 1 {
			t.Errorf("subscription %s: %d renewal invoices %v, want 1", sub, got, renewal[sub])
		}
	}
	perObject := func(what, query string, want int) {
		t.Helper()
		if bad := count(t, r.db, query, ma, want); bad != 0 {
			t.Errorf("%d renewal invoices or subscriptions without exactly %d %s", bad, want, what)
		}
	}
	for typ, objects := range map[string]string{"subscription.renewed": "subscriptions", "invoice.finalized": "invoices"} {
		filter := ""
		if objects == "invoices" {
			filter = " AND o.subscription_id IS NOT NULL"
		}
		perObject(typ+" events", `SELECT COUNT(*) FROM `+objects+` o WHERE o.merchant_account_id = $1`+filter+` AND (SELECT COUNT(*) FROM events e
			WHERE e.merchant_account_id = o.merchant_account_id AND e.object_id = o.id AND e.type = '`+typ+`') <> $2`, 1)
	}
	perObject("succeeded charges", `SELECT COUNT(*) FROM invoices i WHERE i.merchant_account_id = $1 AND i.subscription_id IS NOT NULL
		AND (SELECT COUNT(*) FROM payments p JOIN sandbox_charges s ON s.idempotency_ref = p.id
			WHERE p.merchant_account_id = i.merchant_account_id AND p.invoice_id = i.id AND s.status = 'succeeded') <> $2`, 1)
	perObject("succeeded payments", `SELECT COUNT(*) FROM invoices i WHERE i.merchant_account_id = $1 AND i.subscription_id IS NOT NULL
		AND (SELECT COUNT(*) FROM payments p WHERE p.merchant_account_id = i.merchant_account_id AND p.invoice_id = i.id
			AND p.status = 'succeeded') <> $2`, 1)
	perObject("receipts", `SELECT COUNT(*) FROM invoices i WHERE i.merchant_account_id = $1 AND i.subscription_id IS NOT NULL
		AND (SELECT COUNT(*) FROM payment_receipts rc WHERE rc.merchant_account_id = i.merchant_account_id AND rc.invoice_id = i.id) <> $2`, 1)
	perObject("pending next renewals", `SELECT COUNT(*) FROM subscriptions s WHERE s.merchant_account_id = $1
		AND (SELECT COUNT(*) FROM jobs j WHERE j.merchant_account_id = s.merchant_account_id AND j.kind = 'subscription.renew'
			AND j.status = 'pending' AND j.payload LIKE '%' || s.id || '%') <> $2`, 1)
	if got := count(t, r.db, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status = 'failed'`, ma); got != 0 {
		t.Errorf("%d jobs failed", got)
	}
	checkGapFree(t, r.db, ma)
}
