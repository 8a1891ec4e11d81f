package httpapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// dunningAccount makes customer id with a charge_automatically billing account (with dunning, when
// given) and a card that declines.
func dunningAccount(t *testing.T, e *testkit.Env, k payKit, id string, dunning map[string]any) {
	t.Helper()
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
	body := map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD", "collectionMethod": "charge_automatically"}
	if dunning != nil {
		body["dunning"] = dunning
	}
	e.Must(201, "POST", "/v1/billing-accounts", body)
	k.attach(id, "pm_card_chargeDeclined")
}

// The default schedule (3d, 5d, 7d after the first failure): each retry is a new attempt on the
// merchant clock, then the invoice is marked uncollectible; it can still be paid.
func TestDunningRetriesThenMarksUncollectible(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		dunningAccount(t, e, k, "c1", nil)
		inv := k.invoice("c1", 2000)
		id := inv["invoiceId"].(string)
		// The first failure is recorded a moment after the finalization: the schedule counts from it.
		first := ts(t, inv["nextPaymentAttemptAt"]).Add(-72 * time.Hour)
		if inv["status"] != "open" || num(inv["attemptCount"]) != 1 || inv["dunningStatus"] != "retrying" ||
			first.Before(ts(t, inv["finalizedAt"])) || first.Sub(ts(t, inv["finalizedAt"])) > time.Minute {
			t.Fatalf("after the first failure: %v %v %v (first %v)", inv["attemptCount"], inv["dunningStatus"], inv["nextPaymentAttemptAt"], first)
		}
		for n, day := range []int{3, 5} {
			advanceTo(e, first.Add(time.Duration(day)*24*time.Hour+time.Second))
			got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			next := []int{5, 7}[n]
			if num(got["attemptCount"]) != int64(n+2) || got["dunningStatus"] != "retrying" || !ts(t, got["nextPaymentAttemptAt"]).Equal(first.Add(time.Duration(next)*24*time.Hour)) {
				t.Fatalf("after retry %d: attempts %v next %v status %v", n+1, got["attemptCount"], got["nextPaymentAttemptAt"], got["dunningStatus"])
			}
		}
		advanceTo(e, first.Add(7*24*time.Hour+time.Second))
		got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if got["status"] != "uncollectible" || num(got["attemptCount"]) != 4 || got["dunningStatus"] != "exhausted" || got["nextPaymentAttemptAt"] != nil {
			t.Fatalf("exhausted: %v %v %v", got["status"], got["attemptCount"], got["dunningStatus"])
		}
		ps := k.payments(id, e.Tenant.Sandbox)
		if len(ps) != 4 || ps[1].Source != "dunning" || ps[3].Source != "dunning" {
			t.Fatalf("payments %+v", ps)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, id); !slices.Contains(ev, "invoice.marked_uncollectible") {
			t.Fatalf("events %v", ev)
		}
		// Nothing more is tried; an uncollectible invoice can still be paid.
		advanceTo(e, first.Add(30*24*time.Hour))
		if n := len(k.payments(id, e.Tenant.Sandbox)); n != 4 {
			t.Fatalf("attempts after exhaustion: %d", n)
		}
		if paid := e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true}).Data(); paid["status"] != "paid" {
			t.Fatalf("paid late: %v", paid["status"])
		}
	})
}

// A billing account's own policy: leave_open keeps the invoice open when the schedule runs out;
// a payment made another way stops the schedule.
func TestDunningOverrideAndStops(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newPayKit(t, e)
		dunningAccount(t, e, k, "c1", map[string]any{"schedule": []string{"1d", "2d"}, "finalAction": "leave_open"})
		ba := e.Must(200, "GET", "/v1/billing-accounts/ba-c1", nil).Data()
		if d := ba["dunning"].(map[string]any); d["finalAction"] != "leave_open" || len(d["schedule"].([]any)) != 2 {
			t.Fatalf("billing account dunning %v", ba["dunning"])
		}
		inv := k.invoice("c1", 1000)
		id := inv["invoiceId"].(string)
		first := ts(t, inv["finalizedAt"])
		advanceTo(e, first.Add(3*24*time.Hour))
		got := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
		if got["status"] != "open" || got["dunningStatus"] != "exhausted" || num(got["attemptCount"]) != 3 {
			t.Fatalf("leave_open: %v %v %v next %v first %v\n%+v", got["status"], got["dunningStatus"], got["attemptCount"], got["nextPaymentAttemptAt"], first, k.payments(id, e.Tenant.Sandbox))
		}

		// Paid out of band before its first retry: the retry does nothing.
		other := k.invoice("c1", 500)
		oid := other["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+oid+"/pay", map[string]any{"outOfBand": true})
		advanceTo(e, ts(t, other["finalizedAt"]).Add(3*24*time.Hour))
		got = e.Must(200, "GET", "/v1/invoices/"+oid, nil).Data()
		if got["status"] != "paid" || num(got["attemptCount"]) != 1 || got["nextPaymentAttemptAt"] != nil || got["dunningStatus"] != "none" {
			t.Fatalf("paid another way: %v %v %v", got["status"], got["attemptCount"], got["dunningStatus"])
		}
	})
}

// cancel_subscription: when the schedule runs out, the invoice is uncollectible and its
// subscription canceled.
func TestDunningCancelsTheSubscription(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		customerAt(t, e, "c", "US", "TX", true)
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-d", "customerId": "c", "currency": "USD",
			"dunning": map[string]any{"schedule": []string{"1d"}, "finalAction": "cancel_subscription"}})
		k.attachTo("c", "ba-d", "pm_card_chargeDeclined")
		q := e.Must(201, "POST", "/v1/quotes", with(quoteBody("subscription_creation", "c", line("plan")), "billingAccountId", "ba-d")).Data()
		acc := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
		start := ts(t, acc["acceptedAt"])
		advanceTo(e, start.Add(2*time.Hour))
		sub := k.sub(acc["subscriptionId"].(string))
		if sub["status"] != "past_due" {
			t.Fatalf("after the failed first charge: %v", sub["status"])
		}
		advanceTo(e, start.Add(28*time.Hour)) // the charge failed at the advance to start+2h; its retry is a day later
		sub = k.sub(acc["subscriptionId"].(string))
		if sub["status"] != "canceled" || k.invoice(acc["invoiceId"].(string))["status"] != "uncollectible" {
			inv := k.invoice(acc["invoiceId"].(string))
			t.Fatalf("after the schedule: %v %v %v %v %v", sub["status"], inv["status"], inv["attemptCount"], inv["dunningStatus"], inv["nextPaymentAttemptAt"])
		}
	})
}

// A dunning policy's bad input: every problem listed.
func TestDunningValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "C"})
		r := e.Do("POST", "/v1/billing-accounts", map[string]any{"customerId": "c1", "currency": "USD",
			"dunning": map[string]any{"schedule": []string{"5d", "3d", "61d", "x"}, "finalAction": "nope"}})
		for _, f := range []string{"dunning.finalAction", "dunning.schedule[1]", "dunning.schedule[2]", "dunning.schedule[3]"} {
			if r.Status != 422 || !hasField(r, f) {
				t.Fatalf("422 lacks %s: %d %s", f, r.Status, r.Body)
			}
		}
		r = e.Do("POST", "/v1/billing-accounts", map[string]any{"customerId": "c1", "currency": "USD", "dunning": map[string]any{"schedule": []string{}}})
		if r.Status != 422 || !hasField(r, "dunning.schedule") {
			t.Fatalf("empty schedule: %d %s", r.Status, r.Body)
		}
		eleven := []string{"1d", "2d", "3d", "4d", "5d", "6d", "7d", "8d", "9d", "10d", "11d"}
		if r := e.Do("POST", "/v1/billing-accounts", map[string]any{"customerId": "c1", "currency": "USD", "dunning": map[string]any{"schedule": eleven}}); r.Status != 422 {
			t.Fatalf("eleven retries: %d %s", r.Status, r.Body)
		}
	})
}

// Two servers on one store run the due jobs at once (the scheduler of two serve processes): the
// retry is one attempt, never two.
func TestDunningRetryRunsOnceAcrossServers(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			url := testkit.MigratedStoreURL(t, s)
			a := testkit.StartOn(t, s, url, testkit.Options{})
			b := testkit.StartOn(t, s, url, testkit.Options{})
			b.Tenant = a.Tenant
			k := newPayKit(t, a)
			dunningAccount(t, a, k, "c1", nil)
			id := k.invoice("c1", 1500)["invoiceId"].(string)
			// Move the clock past the first retry without running anything, then let both
			// servers run what is due, twice each, at once.
			ctx := context.Background()
			m := mustMerchant(t, a, a.Tenant.Sandbox)
			if err := a.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return tx.SetMerchantClockOffset(ctx, m.ID, m.ClockOffset+3*24*time.Hour+time.Minute, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
			upTo := clockNow(t, a)
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					srv := []*testkit.Env{a, b}[i%2]
					if _, err := srv.App.RunDue(ctx, m.ID, upTo); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			ps := k.payments(id, a.Tenant.Sandbox)
			inv := a.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			if len(ps) != 2 || ps[1].Source != "dunning" || num(inv["attemptCount"]) != 2 {
				t.Fatalf("attempts after the race: %d (%v)", len(ps), inv["attemptCount"])
			}
		})
	}
}
