package httpapi_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
)

// runFixed runs fn on every configured store with a fixed clock of its own, so that the sandbox
// clock moves only when a test moves it and every time can be compared exactly.
func runFixed(t *testing.T, fn func(t *testing.T, e *testkit.Env, clock *remit.FixedClock)) {
	t.Helper()
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			clock := remit.NewFixedClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
			opts := foundationOptions()
			opts.Clock = clock
			e := testkit.Start(t, s, opts)
			fn(t, e, clock)
		})
	}
}

func jsonBody(s string) testkit.Opt { return testkit.Raw([]byte(s), "application/json") }

func reason(r *testkit.Response) any { return r.ErrorDetails()["reason"] }

func wantReplay(t *testing.T, first, again *testkit.Response) {
	t.Helper()
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("not replayed: %d %s", again.Status, again.Body)
	}
	if again.Status != first.Status || string(again.Body) != string(first.Body) {
		t.Fatalf("replay differs:\n%d %s\n%d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if again.Header.Get("Request-Id") != first.Header.Get("Request-Id") {
		t.Fatalf("replay Request-Id %q, first %q", again.Header.Get("Request-Id"), first.Header.Get("Request-Id"))
	}
}

func wantFresh(t *testing.T, r *testkit.Response) {
	t.Helper()
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("unexpected replay: %s", r.Body)
	}
}

func idempotencyRows(t *testing.T, e *testkit.Env, key string) int {
	t.Helper()
	var n int
	if err := e.App.DB.SQL().QueryRow(`SELECT count(*) FROM idempotency_keys WHERE idem_key = $1`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdempotencyReplay: the same key and a JSON-equal body replay the first answer, status and
// body, and the work happens once.
func TestIdempotencyReplay(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		start := clockNow(t, e)
		first := e.Must(201, "POST", advancePath, nil, testkit.Key("k-replay"), jsonBody(`{"seconds":60}`))
		wantFresh(t, first)
		// JSON-equal bodies: white space, number spelling.
		for _, b := range []string{`{"seconds":60}`, " {\n\t\"seconds\" : 60.0 }\n", `{"seconds":6e1}`, `{"seconds":600E-1}`, `{"seconds":60.000}`} {
			wantReplay(t, first, e.Do("POST", advancePath, nil, testkit.Key("k-replay"), jsonBody(b)))
		}
		if got := clockNow(t, e).Sub(start); got != 60*time.Second {
			t.Fatalf("clock moved %v, want exactly 60s (the work ran once)", got)
		}

		// Another body: 409 idempotency_key_reused, and nothing happens.
		for _, b := range []string{`{"seconds":61}`, `{"seconds":6.1e1}`, `{"to":"2031-01-01T00:00:00Z"}`, `{}`} {
			r := e.Do("POST", advancePath, nil, testkit.Key("k-replay"), jsonBody(b))
			wantError(t, e, r, 409, "conflict")
			if reason(r) != "idempotency_key_reused" {
				t.Fatalf("body %s: reason %v", b, reason(r))
			}
			wantFresh(t, r)
		}
		// Different string spellings of one instant are different bodies.
		to := start.Add(time.Hour)
		e.Must(201, "POST", advancePath, map[string]any{"to": to.Format(time.RFC3339)}, testkit.Key("k-to"))
		r := e.Do("POST", advancePath, map[string]any{"to": to.In(time.FixedZone("", 3600)).Format(time.RFC3339)}, testkit.Key("k-to"))
		wantError(t, e, r, 409, "conflict")
		if got := clockNow(t, e).Sub(start); got != time.Hour {
			t.Fatalf("clock moved %v, want 1h", got)
		}

		// Another route with the same key: 409 idempotency_key_reused, both ways.
		r = e.Do("POST", "/v1/customers", map[string]any{"name": "Other route"}, testkit.Key("k-replay"))
		wantError(t, e, r, 409, "conflict")
		if reason(r) != "idempotency_key_reused" {
			t.Fatalf("key reused on another route: reason %v", reason(r))
		}
		e.Must(201, "POST", "/v1/customers", map[string]any{"name": "Route"}, testkit.Key("k-route"))
		r = e.Do("POST", advancePath, nil, testkit.Key("k-route"), jsonBody(`{"seconds":60}`))
		wantError(t, e, r, 409, "conflict")
		if reason(r) != "idempotency_key_reused" {
			t.Fatalf("reason %v", reason(r))
		}
		if got := clockNow(t, e).Sub(start); got != time.Hour {
			t.Fatalf("clock moved %v after conflicts, want 1h", got)
		}
	})
}

// TestIdempotencyNotRemembered: 401, 403 and 422 answers leave the key free, so a corrected
// retry with the same key runs.
func TestIdempotencyNotRemembered(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		start := clockNow(t, e)

		// 422 from the contract (before the key is claimed), then a corrected retry.
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 0}, testkit.Key("k-422a")), 422, "validation_failure")
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 10}, testkit.Key("k-422a")))

		// 422 from the engine (after the key was claimed: a time in the past), then a corrected
		// retry; the key now belongs to the corrected body.
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"to": start.Add(-time.Hour).Format(time.RFC3339)}, testkit.Key("k-422b")), 422, "validation_failure")
		if n := idempotencyRows(t, e, "k-422b"); n != 0 {
			t.Fatalf("a 422 left %d idempotency rows", n)
		}
		fixed := e.Must(201, "POST", advancePath, map[string]any{"seconds": 20}, testkit.Key("k-422b"))
		wantFresh(t, fixed)
		wantReplay(t, fixed, e.Do("POST", advancePath, map[string]any{"seconds": 20}, testkit.Key("k-422b")))
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"to": start.Add(-time.Hour).Format(time.RFC3339)}, testkit.Key("k-422b")), 409, "conflict")

		// 403 from the engine (the clock is sandbox-only) is not remembered: the production key
		// can be claimed afterwards with any body.
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 5}, testkit.Key("k-403"), testkit.Production()), 403, "forbidden")
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 5}, testkit.Key("k-403"), testkit.Production()), 403, "forbidden")
		if n := idempotencyRows(t, e, "k-403"); n != 0 {
			t.Fatalf("a 403 left %d idempotency rows", n)
		}
		wantFresh(t, e.Must(201, "POST", "/v1/customers", map[string]any{"name": "After 403"}, testkit.Key("k-403"), testkit.Production()))

		// 403 from the scope and 401 never touch the key.
		other := e.NewTenant("Other Org", false)
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 5}, testkit.Key("k-401-403"), testkit.Scope("sandbox", other.Sandbox)), 403, "forbidden")
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 5}, testkit.Key("k-401-403"), testkit.APIKey("")), 401, "unauthorized")
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 30}, testkit.Key("k-401-403")))

		// 501 (no handler) is not remembered either.
		wantError(t, e, e.Do("POST", "/v1/prices", validPrice(), testkit.Key("k-501")), 501, "not_implemented")
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 40}, testkit.Key("k-501")))

		if got := clockNow(t, e).Sub(start); got != 100*time.Second {
			t.Fatalf("clock moved %v, want 100s", got)
		}
	})
}

// TestIdempotencyScopedPerMerchantAccount: one key used by two merchant accounts of one
// organization names two independent requests.
func TestIdempotencyScopedPerMerchantAccount(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		second := newSandboxAccount(t, e, e.Tenant)
		asSecond := testkit.Scope("sandbox", second)
		startA, startB := clockNow(t, e), clockNow(t, e, asSecond)
		a := e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("shared"))
		b := e.Must(201, "POST", advancePath, map[string]any{"seconds": 120}, testkit.Key("shared"), asSecond)
		wantFresh(t, a)
		wantFresh(t, b)
		if a.Data()["merchantAccountId"] != e.Tenant.Sandbox || b.Data()["merchantAccountId"] != second {
			t.Fatalf("answers for the wrong accounts: %s / %s", a.Body, b.Body)
		}
		wantReplay(t, b, e.Do("POST", advancePath, map[string]any{"seconds": 120}, testkit.Key("shared"), asSecond))
		wantReplay(t, a, e.Do("POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("shared")))
		if got := clockNow(t, e).Sub(startA); got != 60*time.Second {
			t.Fatalf("account A moved %v", got)
		}
		if got := clockNow(t, e, asSecond).Sub(startB); got != 120*time.Second {
			t.Fatalf("account B moved %v", got)
		}
		// Another organization using the same key is independent too.
		other := e.NewTenant("Other Org", false)
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 7}, testkit.Key("shared"), testkit.As(other)))
	})
}

// TestIdempotencyConcurrent: 20 identical requests racing with one key have exactly one effect;
// every answer is that one success, its replay, or 409 in flight.
func TestIdempotencyConcurrent(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		start := clockNow(t, e)
		const n = 20
		res := make([]*testkit.Response, n)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				res[i] = e.Do("POST", advancePath, map[string]any{"seconds": 3600}, testkit.Key("race"))
			}()
		}
		close(gate)
		wg.Wait()

		var success *testkit.Response
		replays, inFlight := 0, 0
		for _, r := range res {
			if r == nil {
				t.Fatal("a request did not complete")
			}
			if r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "" {
				if success != nil {
					t.Fatalf("two requests did the work:\n%s\n%s", success.Body, r.Body)
				}
				success = r
			}
		}
		if success == nil {
			t.Fatal("no request did the work")
		}
		for _, r := range res {
			switch {
			case r == success:
			case r.Status == 201:
				wantReplay(t, success, r)
				replays++
			case r.Status == 409:
				wantError(t, e, r, 409, "conflict")
				if reason(r) != "idempotency_key_in_flight" {
					t.Fatalf("409 with reason %v", reason(r))
				}
				inFlight++
			default:
				t.Fatalf("unexpected answer %d %s", r.Status, r.Body)
			}
		}
		t.Logf("%s: 1 success, %d replays, %d in flight", e.Store, replays, inFlight)
		if got := clockNow(t, e).Sub(start); got != time.Hour {
			t.Fatalf("clock moved %v, want exactly 1h", got)
		}
		wantReplay(t, success, e.Do("POST", advancePath, map[string]any{"seconds": 3600}, testkit.Key("race")))
	})
}

// TestIdempotencyInFlight: while a request holds its key, a retry is 409 in flight; a request that
// died leaves a lease that the same request takes over once it expires, never another body.
func TestIdempotencyInFlight(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		scope := sandboxScope(e.Tenant)
		start := clockNow(t, e)
		// A record in flight, as an earlier version of Remit left it when its request died.
		holdKey(t, e, scope, "held", advanceRoute, `{"seconds":60}`, clock.Now())
		r := e.Do("POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("held"))
		wantError(t, e, r, 409, "conflict")
		if reason(r) != "idempotency_key_in_flight" {
			t.Fatalf("reason %v", reason(r))
		}
		r = e.Do("POST", advancePath, map[string]any{"seconds": 61}, testkit.Key("held"))
		wantError(t, e, r, 409, "conflict")
		if reason(r) != "idempotency_key_reused" {
			t.Fatalf("reason %v", reason(r))
		}

		// The holder's lease (1 minute) runs out: the same request takes the key over and runs
		// once; another body still may not.
		clock.Add(61 * time.Second)
		r = e.Do("POST", advancePath, map[string]any{"seconds": 61}, testkit.Key("held"))
		wantError(t, e, r, 409, "conflict")
		taken := e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("held"))
		wantFresh(t, taken)
		wantReplay(t, taken, e.Do("POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("held")))
		if got := clockNow(t, e).Sub(start); got != 121*time.Second {
			t.Fatalf("clock moved %v, want 61s real + 60s advanced", got)
		}
	})
}

// holdKey stores an Idempotency-Key record in flight for the request (route, body), with a lease of
// one minute from now.
func holdKey(t *testing.T, e *testkit.Env, scope remit.Scope, key, route, body string, now time.Time) {
	t.Helper()
	_, err := e.App.DB.SQL().Exec(`INSERT INTO idempotency_keys (scope, idem_key, route, body_hash, state, owner, lease_until, status, response, created_at)
		VALUES ($1, $2, $3, $4, 'in_flight', 'req_holder', $5, 0, '', $6)`,
		app.IdempotencyScope(scope), key, route, remit.BodyFingerprint([]byte(body)), remit.Micros(now.Add(time.Minute)), remit.Micros(now))
	if err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencyRetention: keys are remembered 24 hours; after that the key is free again and
// PurgeIdempotency deletes the old rows.
func TestIdempotencyRetention(t *testing.T) {
	runFixed(t, func(t *testing.T, e *testkit.Env, clock *remit.FixedClock) {
		ctx := context.Background()
		first := e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("old"))
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("old-2"))
		clock.Add(23 * time.Hour)
		wantReplay(t, first, e.Do("POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("old")))
		wantError(t, e, e.Do("POST", advancePath, map[string]any{"seconds": 120}, testkit.Key("old")), 409, "conflict")
		e.Must(201, "POST", advancePath, map[string]any{"seconds": 60}, testkit.Key("recent"))

		clock.Add(2 * time.Hour) // 25 h after "old", 2 h after "recent"
		before := clockNow(t, e)
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 120}, testkit.Key("old")))
		if got := clockNow(t, e).Sub(before); got != 120*time.Second {
			t.Fatalf("the expired key's new request moved the clock %v", got)
		}

		if idempotencyRows(t, e, "old-2") != 1 || idempotencyRows(t, e, "recent") != 1 {
			t.Fatal("rows missing before the purge")
		}
		n, err := e.App.PurgeIdempotency(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || idempotencyRows(t, e, "old-2") != 0 {
			t.Fatalf("purge removed %d rows; old-2 left: %d", n, idempotencyRows(t, e, "old-2"))
		}
		if idempotencyRows(t, e, "recent") != 1 || idempotencyRows(t, e, "old") != 1 {
			t.Fatal("purge removed keys younger than 24 hours")
		}
		wantFresh(t, e.Must(201, "POST", advancePath, map[string]any{"seconds": 5}, testkit.Key("old-2")))
	})
}

// TestIdempotencyRemembersFinalErrors: a 404 or 409 from the operation is the key's final answer.
// Its work rolled back, and the answer is remembered on its own: a retry replays it even once the
// missing resource exists, and nothing of the failed attempt remains.
func TestIdempotencyRemembersFinalErrors(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			e := testkit.Start(t, s, testkit.Options{})
			grant := map[string]any{"entryId": "late-1", "currency": "USD", "amount": 25}
			first := e.Do("POST", "/v1/customers/cus_late/balance/grant", grant, testkit.Key("late-404"))
			wantError(t, e, first, 404, "not_found")
			if n := idempotencyRows(t, e, "late-404"); n != 1 {
				t.Fatalf("a 404 left %d idempotency rows, want 1", n)
			}
			e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "cus_late", "name": "Late"})
			wantReplay(t, first, e.Do("POST", "/v1/customers/cus_late/balance/grant", grant, testkit.Key("late-404")))

			// A new key runs; the same entryId again is a 409, remembered the same way.
			e.Must(201, "POST", "/v1/customers/cus_late/balance/grant", grant, testkit.Key("late-201"))
			dup := e.Do("POST", "/v1/customers/cus_late/balance/grant", grant, testkit.Key("late-409"))
			wantError(t, e, dup, 409, "conflict")
			wantReplay(t, dup, e.Do("POST", "/v1/customers/cus_late/balance/grant", grant, testkit.Key("late-409")))
			bal := e.Must(200, "GET", "/v1/customers/cus_late/balance", nil).Data()
			if entries := bal["entries"].([]any); len(entries) != 1 {
				t.Fatalf("%d ledger entries, want the one grant", len(entries))
			}
		})
	}
}
