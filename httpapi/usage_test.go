package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// usageEvent posts a usage event and returns the answer.
func usageEvent(e *testkit.Env, body map[string]any, opts ...testkit.Opt) *testkit.Response {
	e.T.Helper()
	return e.Do("POST", "/v1/usage-events", body, opts...)
}

// usageTotal is the customer's usage of the meter over all time, through the invoices' seam.
func usageTotal(t *testing.T, e *testkit.Env, merchantAccountID, customerID, meterID string) int64 {
	t.Helper()
	return usageIn(t, e, merchantAccountID, customerID, meterID, time.Unix(0, 0), time.Now().Add(24*time.Hour*365))
}

func usageIn(t *testing.T, e *testkit.Env, merchantAccountID, customerID, meterID string, from, to time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	n, err := e.App.UsageInPeriod(ctx, e.App.DB.Read(ctx), remit.Scope{Environment: remit.Sandbox, MerchantAccountID: merchantAccountID},
		customerID, meterID, from, to)
	if err != nil {
		t.Fatalf("UsageInPeriod: %v", err)
	}
	return n
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func TestUsageEventsRecordAndDeduplicate(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		ma := e.Tenant.Sandbox
		before := clockNow(t, e)

		// Timestamp defaults to the merchant clock.
		first := e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "api_calls", "quantity": 120}).Data()
		ts, _ := time.Parse(time.RFC3339Nano, first["timestamp"].(string))
		if first["object"] != "usage_event" || first["eventId"] != "u1" || num(first["quantity"]) != 120 || first["customerId"] != "c1" ||
			first["meterId"] != "api_calls" || first["environment"] != "sandbox" || first["merchantAccountId"] != ma ||
			ts.Before(before) || ts.After(clockNow(t, e)) || first["createdAt"] != first["timestamp"] {
			t.Fatalf("first event: %v", first)
		}

		// The same event again (a retry without timestamp, then with the recorded one): 201 with the
		// first event, counted once.
		again := e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "api_calls", "quantity": 120}).Data()
		withTS := e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "api_calls", "quantity": 120, "timestamp": first["timestamp"]}).Data()
		for _, d := range []map[string]any{again, withTS} {
			if fmt.Sprint(d) != fmt.Sprint(first) {
				t.Fatalf("repeat answered %v, want the first event %v", d, first)
			}
		}
		if n := usageTotal(t, e, ma, "c1", "api_calls"); n != 120 {
			t.Fatalf("total %d, want 120 (the repeat counted once)", n)
		}

		// The same eventId with other values: 409 naming what differs, nothing counted.
		r := usageEvent(e, map[string]any{"eventId": "u1", "customerId": "c2", "meterId": "api_calls", "quantity": 5, "timestamp": rfc(before.Add(-time.Hour))})
		if r.Status != 409 || r.ErrorCode() != "conflict" {
			t.Fatalf("conflicting repeat: %d %s", r.Status, r.Body)
		}
		d := r.ErrorDetails()
		if d["reason"] != "duplicate_id" || d["field"] != "eventId" || fmt.Sprint(d["mismatchedFields"]) != "[customerId quantity timestamp]" {
			t.Fatalf("details: %v", d)
		}
		if rec, _ := d["recorded"].(map[string]any); rec["customerId"] != "c1" || num(rec["quantity"]) != 120 {
			t.Fatalf("recorded: %v", d["recorded"])
		}
		r = usageEvent(e, map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "storage", "quantity": 120})
		if r.Status != 409 || fmt.Sprint(r.ErrorDetails()["mismatchedFields"]) != "[meterId]" {
			t.Fatalf("other meter: %d %s", r.Status, r.Body)
		}
		if n := usageTotal(t, e, ma, "c1", "api_calls") + usageTotal(t, e, ma, "c2", "api_calls") + usageTotal(t, e, ma, "c1", "storage"); n != 120 {
			t.Fatalf("total after conflicts %d, want 120", n)
		}

		// Quantity 0 is usage too; eventIds are per merchant account: another tenant's "u1" is its own.
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u0", "customerId": "c1", "meterId": "api_calls", "quantity": 0})
		other := e.NewTenant("Other", false)
		k.customer("c1", testkit.As(other))
		o := e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "api_calls", "quantity": 7}, testkit.As(other)).Data()
		if o["merchantAccountId"] != other.Sandbox || num(o["quantity"]) != 7 {
			t.Fatalf("other tenant's event: %v", o)
		}
		if usageTotal(t, e, ma, "c1", "api_calls") != 120 || usageTotal(t, e, other.Sandbox, "c1", "api_calls") != 7 {
			t.Fatal("totals leaked across merchant accounts")
		}

		// Production works the same way, with its own events.
		k.customer("c1", testkit.Production())
		p := e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c1", "meterId": "api_calls", "quantity": 3}, testkit.Production()).Data()
		if p["environment"] != "production" || p["merchantAccountId"] != e.Tenant.Production {
			t.Fatalf("production event: %v", p)
		}

		// Usage events write nothing to the outbox.
		if types := k.eventTypes(ma, "u1"); len(types) != 0 {
			t.Fatalf("usage event emitted %v", types)
		}

		// An Idempotency-Key replays like on every POST.
		body := map[string]any{"eventId": "u2", "customerId": "c1", "meterId": "api_calls", "quantity": 1}
		r1 := e.Must(201, "POST", "/v1/usage-events", body, testkit.Key("k-u2"))
		r2 := e.Must(201, "POST", "/v1/usage-events", body, testkit.Key("k-u2"))
		if r2.Header.Get("Idempotent-Replayed") != "true" || string(r1.Body) != string(r2.Body) {
			t.Fatalf("no replay: %s", r2.Body)
		}
		if n := usageTotal(t, e, ma, "c1", "api_calls"); n != 121 {
			t.Fatalf("total %d, want 121", n)
		}
	})
}

// Twenty copies of one event racing through two servers: one is recorded, all answer it.
func TestUsageEventConcurrentDuplicates(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		servers := []*testkit.Env{e, e2}
		ts := rfc(time.Now().Add(-time.Minute).Truncate(time.Microsecond))
		bodies := make([]string, 20)
		statuses := make([]int, 20)
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := servers[i%2].Do("POST", "/v1/usage-events", map[string]any{"eventId": "dup", "customerId": "c1", "meterId": "m", "quantity": 9, "timestamp": ts}, testkit.As(e.Tenant))
				statuses[i] = r.Status
				var d map[string]any
				r.Decode(t, &d)
				bodies[i] = fmt.Sprint(d)
			}()
		}
		wg.Wait()
		for i := range bodies {
			if statuses[i] != 201 || bodies[i] != bodies[0] {
				t.Fatalf("request %d: %d %s, want 201 %s", i, statuses[i], bodies[i], bodies[0])
			}
		}
		if n := usageTotal(t, e, e.Tenant.Sandbox, "c1", "m"); n != 9 {
			t.Fatalf("total %d, want 9", n)
		}
	})
}

func TestUsageEventValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		now := clockNow(t, e)
		ev := func(id string, extra map[string]any) map[string]any {
			b := map[string]any{"eventId": id, "customerId": "c1", "meterId": "m", "quantity": 1}
			for key, v := range extra {
				b[key] = v
			}
			return b
		}

		// Up to five minutes ahead of the merchant clock is accepted; more is 422.
		e.Must(201, "POST", "/v1/usage-events", ev("soon", map[string]any{"timestamp": rfc(now.Add(4 * time.Minute))}))
		wantFields(t, usageEvent(e, ev("later", map[string]any{"timestamp": rfc(now.Add(6 * time.Minute))})), "body:timestamp:in_future")
		// Long past is accepted.
		e.Must(201, "POST", "/v1/usage-events", ev("old", map[string]any{"timestamp": "2020-01-01T00:00:00Z"}))

		// The contract's rules, every problem at once.
		wantFields(t, usageEvent(e, map[string]any{"eventId": "bad id", "customerId": "c1", "quantity": -1, "extra": true}),
			"body:eventId:invalid_format", "body:meterId:required", "body:quantity:out_of_range", "body:extra:unknown_field")

		// An unknown customer, or another merchant account's, is 404 on customerId.
		for _, opt := range []testkit.Opt{testkit.As(e.Tenant), testkit.Production()} {
			r := usageEvent(e, ev("nobody", map[string]any{"customerId": "ghost"}), opt)
			if r.Status != 404 || r.ErrorDetails()["field"] != "customerId" {
				t.Fatalf("unknown customer: %d %s", r.Status, r.Body)
			}
		}
		other := e.NewTenant("Other", false)
		r := usageEvent(e, ev("theirs", nil), testkit.As(other))
		if r.Status != 404 || r.ErrorDetails()["field"] != "customerId" {
			t.Fatalf("another account's customer: %d %s", r.Status, r.Body)
		}

		// "Now" is the merchant clock: after advancing it a day, an event an hour ahead of real time
		// is in the past, and the default timestamp follows the clock.
		e.AdvanceClock(86400)
		e.Must(201, "POST", "/v1/usage-events", ev("tomorrow", map[string]any{"timestamp": rfc(time.Now().Add(time.Hour))}))
		d := e.Must(201, "POST", "/v1/usage-events", ev("default", nil)).Data()
		if ts, _ := time.Parse(time.RFC3339Nano, d["timestamp"].(string)); ts.Before(time.Now().Add(23 * time.Hour)) {
			t.Fatalf("default timestamp %v does not follow the merchant clock", ts)
		}
	})
}

func TestUsageThresholds(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		ma := e.Tenant.Sandbox

		// Create: caller-chosen or generated ID; duplicates, unknown customers and bounds.
		th := e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "t100", "customerId": "c1", "meterId": "api", "threshold": 100, "metadata": map[string]string{"plan": "pro"}}).Data()
		if th["object"] != "usage_threshold" || th["thresholdId"] != "t100" || th["status"] != "active" || th["crossedAt"] != nil ||
			th["archivedAt"] != nil || num(th["threshold"]) != 100 || th["environment"] != "sandbox" || th["merchantAccountId"] != ma ||
			th["metadata"].(map[string]any)["plan"] != "pro" {
			t.Fatalf("created: %v", th)
		}
		gen := e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"customerId": "c1", "meterId": "api", "threshold": 1000}).Data()
		genID := gen["thresholdId"].(string)
		if len(genID) < 5 || genID[:4] != "thr_" {
			t.Fatalf("generated id %q", genID)
		}
		r := e.Do("POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "t100", "customerId": "c1", "meterId": "other", "threshold": 5})
		if r.Status != 409 || r.ErrorDetails()["reason"] != "duplicate_id" || r.ErrorDetails()["field"] != "thresholdId" {
			t.Fatalf("duplicate: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/v1/usage-thresholds", map[string]any{"customerId": "ghost", "meterId": "api", "threshold": 5})
		if r.Status != 404 || r.ErrorDetails()["field"] != "customerId" {
			t.Fatalf("unknown customer: %d %s", r.Status, r.Body)
		}
		wantFields(t, e.Do("POST", "/v1/usage-thresholds", map[string]any{"customerId": "c1", "threshold": 0}),
			"body:meterId:required", "body:threshold:out_of_range")

		// Get: own 200; unknown or another account's 404.
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t100", nil).Data(); fmt.Sprint(g) != fmt.Sprint(th) {
			t.Fatalf("get %v, want %v", g, th)
		}
		other := e.NewTenant("Other", false)
		for _, opt := range []testkit.Opt{testkit.As(other), testkit.Production()} {
			if r := e.Do("GET", "/v1/usage-thresholds/t100", nil, opt); r.Status != 404 {
				t.Fatalf("foreign get: %d %s", r.Status, r.Body)
			}
			if r := e.Do("POST", "/v1/usage-thresholds/t100/archive", map[string]any{}, opt); r.Status != 404 {
				t.Fatalf("foreign archive: %d %s", r.Status, r.Body)
			}
		}
		e.Must(404, "GET", "/v1/usage-thresholds/nope", nil)
		e.Must(404, "POST", "/v1/usage-thresholds/nope/archive", map[string]any{})

		// Crossing: below, then reaching exactly, then beyond: one crossed event.
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e1", "customerId": "c1", "meterId": "api", "quantity": 60})
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e-other-meter", "customerId": "c1", "meterId": "web", "quantity": 500})
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t100", nil).Data(); g["crossedAt"] != nil {
			t.Fatalf("crossed at 60 (or by another meter): %v", g)
		}
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e2", "customerId": "c1", "meterId": "api", "quantity": 40})
		crossed := e.Must(200, "GET", "/v1/usage-thresholds/t100", nil).Data()
		if crossed["status"] != "active" || crossed["crossedAt"] == nil {
			t.Fatalf("not crossed at 100: %v", crossed)
		}
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e3", "customerId": "c1", "meterId": "api", "quantity": 40})
		if got := k.eventTypes(ma, "t100"); !slices.Equal(got, []string{"usage_threshold.created", "usage_threshold.crossed"}) {
			t.Fatalf("events %v", got)
		}
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t100", nil).Data(); g["crossedAt"] != crossed["crossedAt"] {
			t.Fatalf("crossedAt moved: %v", g)
		}
		// The crossed event carries the threshold as it became.
		evs, _ := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), ma, "t100")
		if want := fmt.Sprintf(`"crossedAt":"%s"`, crossed["crossedAt"]); !strings.Contains(string(evs[1].Data), want) {
			t.Fatalf("crossed event data %s lacks %s", evs[1].Data, want)
		}

		// Archive a crossed (still active) threshold; twice is 409 with the state.
		a := e.Must(200, "POST", "/v1/usage-thresholds/t100/archive", map[string]any{}).Data()
		if a["status"] != "archived" || a["archivedAt"] == nil || a["crossedAt"] != crossed["crossedAt"] {
			t.Fatalf("archived: %v", a)
		}
		r = e.Do("POST", "/v1/usage-thresholds/t100/archive", map[string]any{})
		if r.Status != 409 || r.ErrorDetails()["currentState"] != "archived" {
			t.Fatalf("archive twice: %d %s", r.Status, r.Body)
		}
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t100", nil).Data(); fmt.Sprint(g) != fmt.Sprint(a) {
			t.Fatalf("get after archive %v, want %v", g, a)
		}

		// An archived threshold is never crossed: archive the 1000 one before usage reaches it.
		e.Must(200, "POST", "/v1/usage-thresholds/"+genID+"/archive", map[string]any{})
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e4", "customerId": "c1", "meterId": "api", "quantity": 5000})
		if got := k.eventTypes(ma, genID); !slices.Equal(got, []string{"usage_threshold.created", "usage_threshold.archived"}) {
			t.Fatalf("archived threshold events %v", got)
		}
		if g := e.Must(200, "GET", "/v1/usage-thresholds/"+genID, nil).Data(); g["crossedAt"] != nil {
			t.Fatalf("archived threshold crossed: %v", g)
		}
		if got := k.eventTypes(ma, "t100"); !slices.Equal(got, []string{"usage_threshold.created", "usage_threshold.crossed", "usage_threshold.archived"}) {
			t.Fatalf("events %v", got)
		}

		// A threshold the total already reaches is crossed at creation (total is 5140 now).
		now := e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "reached", "customerId": "c1", "meterId": "api", "threshold": 5140}).Data()
		if now["crossedAt"] == nil || now["crossedAt"] != now["createdAt"] || now["status"] != "active" {
			t.Fatalf("already reached: %v", now)
		}
		if got := k.eventTypes(ma, "reached"); !slices.Equal(got, []string{"usage_threshold.created", "usage_threshold.crossed"}) {
			t.Fatalf("already reached events %v", got)
		}
		notYet := e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "next", "customerId": "c1", "meterId": "api", "threshold": 5141}).Data()
		if notYet["crossedAt"] != nil {
			t.Fatalf("5141 crossed at 5140: %v", notYet)
		}
		// A threshold on a meter without usage, and one event crossing two thresholds at once.
		e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "fresh", "customerId": "c1", "meterId": "new", "threshold": 1})
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "e5", "customerId": "c1", "meterId": "api", "quantity": 1})
		for _, id := range []string{"next"} {
			if got := k.eventTypes(ma, id); !slices.Equal(got, []string{"usage_threshold.created", "usage_threshold.crossed"}) {
				t.Fatalf("%s events %v", id, got)
			}
		}
		if got := k.eventTypes(ma, "fresh"); !slices.Equal(got, []string{"usage_threshold.created"}) {
			t.Fatalf("fresh events %v", got)
		}
	})
}

func appUsage(id, customerID, meterID string, qty int64, at time.Time) app.UsageEventInput {
	return app.UsageEventInput{EventID: id, CustomerID: customerID, MeterID: meterID, Quantity: qty, Timestamp: &at}
}

// Fifty concurrent usage events through two servers on one store (two serve processes): the
// thresholds they reach are each crossed exactly once, the one they do not reach never.
func TestUsageThresholdCrossedOnceUnderConcurrency(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		ma := e.Tenant.Sandbox
		levels := map[string]int64{"t1": 1, "t49": 49, "t50": 50, "t51": 51, "t2a": 2, "t2b": 2}
		for id, n := range levels {
			e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": id, "customerId": "c1", "meterId": "api", "threshold": n})
		}
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		servers := []*testkit.Env{e, e2}
		statuses := make([]int, 50)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = servers[i%2].Do("POST", "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("ev-%02d", i), "customerId": "c1", "meterId": "api", "quantity": 1}, testkit.As(e.Tenant)).Status
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 201 {
				t.Fatalf("event %d: status %d", i, s)
			}
		}
		if n := usageTotal(t, e, ma, "c1", "api"); n != 50 {
			t.Fatalf("total %d, want 50", n)
		}
		for id, n := range levels {
			evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), ma, id)
			if err != nil {
				t.Fatal(err)
			}
			crossedEvents := 0
			for _, ev := range evs {
				if ev.Type == "usage_threshold.crossed" {
					crossedEvents++
				}
			}
			want := 0
			if n <= 50 {
				want = 1
			}
			if crossedEvents != want {
				t.Fatalf("threshold %s (%d): %d crossed events, want %d", id, n, crossedEvents, want)
			}
			g := e.Must(200, "GET", "/v1/usage-thresholds/"+id, nil).Data()
			if (g["crossedAt"] != nil) != (want == 1) {
				t.Fatalf("threshold %s: %v", id, g)
			}
		}
	})
}

// Archive racing usage through two servers: whatever the order, a threshold is crossed at most
// once, and never after its archive committed.
func TestUsageThresholdArchiveRacesUsage(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		ma := e.Tenant.Sandbox
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		for round := range 5 {
			id := fmt.Sprintf("race-%d", round)
			meter := "m" + id
			e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": id, "customerId": "c1", "meterId": meter, "threshold": 10})
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					srv := []*testkit.Env{e, e2}[i%2]
					if i == 10 {
						srv.Must(200, "POST", "/v1/usage-thresholds/"+id+"/archive", map[string]any{}, testkit.As(e.Tenant))
						return
					}
					srv.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("%s-%d", id, i), "customerId": "c1", "meterId": meter, "quantity": 1}, testkit.As(e.Tenant))
				}()
			}
			wg.Wait()
			evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), ma, id)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, ev := range evs {
				types = append(types, ev.Type)
			}
			ok := slices.Equal(types, []string{"usage_threshold.created", "usage_threshold.archived"}) ||
				slices.Equal(types, []string{"usage_threshold.created", "usage_threshold.crossed", "usage_threshold.archived"})
			if !ok {
				t.Fatalf("round %d: events %v", round, types)
			}
		}
	})
}

// UsageInPeriod sums exactly the events with from <= timestamp < to, at microsecond precision,
// across whole hours (hourly sums) and partial edge hours (raw events), for every pair of bounds
// drawn from the events' own timestamps, their neighbours and the hour boundaries.
func TestUsageInPeriod(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		ma := e.Tenant.Sandbox
		h0 := clockNow(t, e).Add(-48 * time.Hour).Truncate(time.Hour)
		offsets := []time.Duration{
			-time.Microsecond, 0, 30 * time.Minute, time.Hour - time.Microsecond, time.Hour, time.Hour + 17*time.Minute,
			6*time.Hour - time.Microsecond, 6 * time.Hour, 6*time.Hour + time.Microsecond, 10 * time.Hour, 10*time.Hour + 59*time.Minute,
		}
		type ev struct {
			at  time.Time
			qty int64
		}
		var events []ev
		for i, off := range offsets {
			at := h0.Add(off)
			q := int64(1) << i // distinct powers of two: a wrong sum says which events it took
			events = append(events, ev{at, q})
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("p%d", i), "customerId": "c1", "meterId": "api", "quantity": q, "timestamp": rfc(at)})
			// Noise on another meter and another customer at the same instants.
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("n%d", i), "customerId": "c1", "meterId": "web", "quantity": 1 << 20, "timestamp": rfc(at)})
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": fmt.Sprintf("o%d", i), "customerId": "c2", "meterId": "api", "quantity": 1 << 21, "timestamp": rfc(at)})
		}
		var bounds []time.Time
		for _, x := range events {
			bounds = append(bounds, x.at, x.at.Add(time.Microsecond), x.at.Add(-time.Microsecond), x.at.Add(500*time.Nanosecond))
		}
		for hr := -2; hr <= 13; hr++ {
			bounds = append(bounds, h0.Add(time.Duration(hr)*time.Hour))
		}
		checked := 0
		for _, from := range bounds {
			for _, to := range bounds {
				var want int64
				for _, x := range events {
					if !x.at.Before(from) && x.at.Before(to) {
						want += x.qty
					}
				}
				if got := usageIn(t, e, ma, "c1", "api", from, to); got != want {
					t.Fatalf("[%s, %s): got %d (%b), want %d (%b)", rfc(from), rfc(to), got, got, want, want)
				}
				checked++
			}
		}
		if checked < 1000 {
			t.Fatalf("only %d periods checked", checked)
		}
		if got := usageIn(t, e, ma, "c1", "api", h0.Add(-time.Hour), h0.Add(12*time.Hour)); got != 1<<len(offsets)-1 {
			t.Fatalf("whole range %d", got)
		}

		// Through a transaction: usage recorded in it counts there, and is gone if it rolls back.
		ctx := context.Background()
		m := mustMerchant(t, e, ma)
		errRollback := errors.New("roll back")
		err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := e.App.CreateUsageEvent(ctx, m, appUsage("in-tx", "c1", "api", 1000, h0.Add(2*time.Hour))); err != nil {
				return err
			}
			n, err := e.App.UsageInPeriod(ctx, tx.Q, remit.Scope{Environment: remit.Sandbox, MerchantAccountID: ma}, "c1", "api", h0.Add(2*time.Hour), h0.Add(3*time.Hour))
			if err != nil {
				return err
			}
			if n != 1000 {
				t.Errorf("inside the transaction: %d, want 1000", n)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		if n := usageIn(t, e, ma, "c1", "api", h0.Add(2*time.Hour), h0.Add(3*time.Hour)); n != 0 {
			t.Fatalf("after rollback: %d", n)
		}
		// Another merchant account sees none of it.
		if n := usageIn(t, e, e.Tenant.Production, "c1", "api", h0.Add(-time.Hour), h0.Add(12*time.Hour)); n != 0 {
			t.Fatalf("production account: %d", n)
		}
	})
}
