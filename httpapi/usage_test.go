package httpapi_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	n, err := e.App.Usage.UsageInPeriod(ctx, e.App.DB.Read(ctx), remit.MerchantAccount{Environment: remit.Sandbox, ID: merchantAccountID},
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

func appUsage(id, customerID, meterID string, qty int64, at time.Time) remit.UsageEventInput {
	return remit.UsageEventInput{EventID: id, CustomerID: customerID, MeterID: meterID, Quantity: qty, Timestamp: &at}
}

// Evaluation skips events below the smallest threshold still to cross; archiving that one, or
// crossing it, must leave the others evaluated. Another customer's usage crosses nothing here.
func TestUsageThresholdEvaluationOrder(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		ma := e.Tenant.Sandbox
		for id, n := range map[string]int{"t10": 10, "t20": 20, "t30": 30, "t30b": 30} {
			e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": id, "customerId": "c1", "meterId": "api", "threshold": n})
		}
		e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "c2-5", "customerId": "c2", "meterId": "api", "threshold": 5})
		e.Must(200, "POST", "/v1/usage-thresholds/t10/archive", map[string]any{})
		send := func(id, customer string, qty int) {
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": id, "customerId": customer, "meterId": "api", "quantity": qty})
		}
		crossed := func() []string {
			var out []string
			for _, id := range []string{"t10", "t20", "t30", "t30b", "c2-5"} {
				if e.Must(200, "GET", "/v1/usage-thresholds/"+id, nil).Data()["crossedAt"] != nil {
					out = append(out, id)
				}
			}
			return out
		}
		send("a", "c1", 15) // past the archived 10: nothing
		if got := crossed(); len(got) != 0 {
			t.Fatalf("after 15: crossed %v", got)
		}
		send("b", "c1", 5) // exactly 20
		if got := crossed(); !slices.Equal(got, []string{"t20"}) {
			t.Fatalf("after 20: crossed %v", got)
		}
		send("c", "c1", 9) // 29
		if got := crossed(); !slices.Equal(got, []string{"t20"}) {
			t.Fatalf("after 29: crossed %v", got)
		}
		send("d", "c1", 100) // 129: both 30s at once
		if got := crossed(); !slices.Equal(got, []string{"t20", "t30", "t30b"}) {
			t.Fatalf("after 129: crossed %v", got)
		}
		evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), ma, "t30")
		if err != nil || len(evs) != 2 {
			t.Fatalf("t30 events %v %v", evs, err)
		}
		// A new threshold below the total is crossed at creation; one above waits.
		e.Must(201, "POST", "/v1/usage-thresholds", map[string]any{"thresholdId": "t200", "customerId": "c1", "meterId": "api", "threshold": 200})
		send("e", "c1", 70)
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t200", nil).Data(); g["crossedAt"] != nil {
			t.Fatalf("199 crossed 200: %v", g)
		}
		send("f", "c1", 1)
		if g := e.Must(200, "GET", "/v1/usage-thresholds/t200", nil).Data(); g["crossedAt"] == nil {
			t.Fatalf("200 did not cross 200: %v", g)
		}
		if got := crossed(); slices.Contains(got, "c2-5") {
			t.Fatal("c1's usage crossed c2's threshold")
		}

		// The total stops at the int64 range: the event is refused and nothing is counted.
		send("big", "c2", 1)
		r := usageEvent(e, map[string]any{"eventId": "huge", "customerId": "c2", "meterId": "api", "quantity": int64(9223372036854775807)})
		wantFields(t, r, "body:quantity:total_out_of_range")
		if n := usageTotal(t, e, ma, "c2", "api"); n != 1 {
			t.Fatalf("c2 total %d, want 1", n)
		}
		if g := e.Must(200, "GET", "/v1/usage-thresholds/c2-5", nil).Data(); g["crossedAt"] != nil {
			t.Fatalf("refused event crossed: %v", g)
		}
	})
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
			if _, err := e.App.Usage.CreateUsageEvent(ctx, m, appUsage("in-tx", "c1", "api", 1000, h0.Add(2*time.Hour))); err != nil {
				return err
			}
			n, err := e.App.Usage.UsageInPeriod(ctx, tx.Q, remit.MerchantAccount{Environment: remit.Sandbox, ID: ma}, "c1", "api", h0.Add(2*time.Hour), h0.Add(3*time.Hour))
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

// --- benchmarks ---

// BenchmarkUsageIngestion measures usage events through the HTTP API (auth, rate limit,
// validation, transaction, threshold evaluation, durable commit) for one customer and meter that
// also has an active threshold not yet reached, so every event runs the evaluation:
//
//   - parallel-64: events per second from ~64 concurrent clients;
//   - serial: the cost of one event at a time (its latency), with no prior events and with
//     1,000,000 prior events of the same customer and meter;
//   - engine-100-per-tx: the engine and store work of one event (app.CreateUsageEvent), 100 per
//     transaction, without HTTP and with one fsync per 100 events.
//
// Event IDs are random (like UUIDs), the worst case for the eventId index. Every event adds to
// the history, so give the engine benchmark fewer iterations than the HTTP ones. Run:
//
//	go test -run '^$' -bench 'UsageIngestion/sqlite/.*/(parallel|serial)' -benchtime 5000x ./httpapi/
//	go test -run '^$' -bench 'UsageIngestion/sqlite/.*/engine' -benchtime 200x ./httpapi/
//	REMIT_TEST_POSTGRES_URL=... go test -run '^$' -bench 'UsageIngestion/postgres' -benchtime 5000x ./httpapi/
//
// The 1,000,000 prior events are seeded once through the store in bulk into a file cached under
// os.TempDir()/remit-bench, keyed by a hash of the migrations; each run works on a copy. A smoke run
// (-benchtime 1x) seeds 10,000 instead.
func BenchmarkUsageIngestion(b *testing.B) {
	fresh := func(b *testing.B, s testkit.Store) (*testkit.Env, testkit.Tenant) {
		e := testkit.Start(b, s, testkit.Options{})
		ctx := context.Background()
		m := usageMerchant(b, e, e.Tenant.Sandbox)
		if _, err := e.App.Catalog.CreateCustomer(ctx, m, remit.Customer{CustomerID: "c1", Name: "Bench"}); err != nil {
			b.Fatal(err)
		}
		return e, e.Tenant
	}
	prior := usageBenchPrior()
	seeded := func(b *testing.B) (*testkit.Env, testkit.Tenant) {
		seed := usageSeed(b, prior)
		e := testkit.StartOn(b, testkit.SQLite, "sqlite:"+copyFile(b, seed.Path), testkit.Options{})
		return e, seed.Tenant
	}
	seededName := fmt.Sprintf("prior=%d", prior)
	envs := map[string]func(b *testing.B) (*testkit.Env, testkit.Tenant){
		"prior=0":  func(b *testing.B) (*testkit.Env, testkit.Tenant) { return fresh(b, testkit.SQLite) },
		seededName: seeded,
	}
	for _, name := range []string{"prior=0", seededName} {
		b.Run("sqlite/"+name, func(b *testing.B) {
			e, tenant := envs[name](b)
			post := usagePoster(b, e, tenant)
			// A threshold far above anything the benchmark reaches: evaluated by every event.
			if err := post(fmt.Sprintf(`{"thresholdId":"far","customerId":"c1","meterId":"api","threshold":%d}`, int64(1)<<60), "/v1/usage-thresholds"); err != nil {
				b.Fatal(err)
			}
			event := func() error {
				return post(fmt.Sprintf(`{"eventId":"%s","customerId":"c1","meterId":"api","quantity":1}`, randomID()), "/v1/usage-events")
			}
			b.Run("parallel-64", func(b *testing.B) {
				b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := event(); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
			// The same over five meters, one of each aggregation, in turn, each event with a
			// "user" property (what unique_count counts): meters of every aggregation in use.
			b.Run("parallel-64-meters", func(b *testing.B) {
				for _, mt := range []string{`{"meterId":"h_count","aggregation":"count"}`, `{"meterId":"h_max","aggregation":"max"}`,
					`{"meterId":"h_unique","aggregation":"unique_count","uniqueProperty":"user"}`, `{"meterId":"h_latest","aggregation":"latest"}`} {
					if err := post(mt, "/v1/meters"); err != nil {
						b.Fatal(err)
					}
				}
				meters := []string{"api", "h_count", "h_max", "h_unique", "h_latest"}
				var n atomic.Int64
				b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := n.Add(1)
						body := fmt.Sprintf(`{"eventId":"%s","customerId":"c1","meterId":"%s","quantity":%d,"properties":{"user":"u%d"}}`,
							randomID(), meters[i%int64(len(meters))], 1+i%10, i%1000)
						if err := post(body, "/v1/usage-events"); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					if err := event(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
			// The engine alone, 100 events per transaction: the store work of one event on the
			// single writer, with HTTP and most of the commit's fsync taken out.
			b.Run("engine-100-per-tx", func(b *testing.B) {
				ctx := context.Background()
				m := usageMerchant(b, e, tenant.Sandbox)
				for b.Loop() {
					err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
						for range 100 {
							if _, err := e.App.Usage.CreateUsageEvent(ctx, m, remit.UsageEventInput{EventID: randomID(), CustomerID: "c1", MeterID: "api", Quantity: 1}); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*100), "µs/event")
			})
			// The same over five meters, one of each aggregation, in turn, each event with a
			// "user" property (what unique_count counts).
			b.Run("engine-100-per-tx-meters", func(b *testing.B) {
				ctx := context.Background()
				m := usageMerchant(b, e, tenant.Sandbox)
				meters := []string{"api", "b_count", "b_max", "b_unique", "b_latest"}
				for _, mt := range []remit.Meter{{MeterID: "b_count", Aggregation: remit.AggCount}, {MeterID: "b_max", Aggregation: remit.AggMax},
					{MeterID: "b_unique", Aggregation: remit.AggUniqueCount, UniqueProperty: ptrTo("user")}, {MeterID: "b_latest", Aggregation: remit.AggLatest}} {
					if _, err := e.App.Usage.CreateMeter(ctx, m, mt); err != nil && remit.ErrorCode(err) != remit.EConflict {
						b.Fatal(err)
					}
				}
				n := 0
				for b.Loop() {
					err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
						for range 100 {
							n++
							in := remit.UsageEventInput{EventID: randomID(), CustomerID: "c1", MeterID: meters[n%len(meters)], Quantity: int64(1 + n%10),
								Properties: map[string]string{"user": fmt.Sprintf("u%d", n%1000)}}
							if _, err := e.App.Usage.CreateUsageEvent(ctx, m, in); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*100), "µs/event")
			})
		})
	}
	if slices.Contains(testkit.Stores(), testkit.Postgres) {
		// PostgreSQL: one customer and meter (every event waits for the previous one's commit on
		// the running total's row lock) and 64 customers (the locks do not meet).
		b.Run("postgres/prior=0", func(b *testing.B) {
			e, tenant := fresh(b, testkit.Postgres)
			m := usageMerchant(b, e, tenant.Sandbox)
			for i := range 64 {
				if _, err := e.App.Catalog.CreateCustomer(context.Background(), m, remit.Customer{CustomerID: fmt.Sprintf("s%d", i), Name: "Bench"}); err != nil {
					b.Fatal(err)
				}
			}
			post := usagePoster(b, e, tenant)
			for _, spread := range []int{1, 64} {
				b.Run(fmt.Sprintf("parallel-64/customers=%d", spread), func(b *testing.B) {
					var n atomic.Int64
					b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							customer := "c1"
							if spread > 1 {
								customer = fmt.Sprintf("s%d", n.Add(1)%int64(spread))
							}
							if err := post(fmt.Sprintf(`{"eventId":"%s","customerId":"%s","meterId":"api","quantity":1}`, randomID(), customer), "/v1/usage-events"); err != nil {
								b.Error(err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
				})
			}
		})
	}
}

// BenchmarkUsageInPeriod compares the period sum UsageInPeriod uses (hourly sums plus the raw
// events of the edge hours) with a plain SUM over the (merchant, customer, meter, ts) index, on
// 1,000,000 events spread evenly over 30 days (10,000 with -benchtime 1x). Run:
//
//	go test -run '^$' -bench UsageInPeriod ./httpapi/
func BenchmarkUsageInPeriod(b *testing.B) {
	seed := usageSeed(b, usageBenchPrior())
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+copyFile(b, seed.Path))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	a := app.New(db, remit.SystemClock{}, slog.New(slog.DiscardHandler), app.Config{})
	scope := remit.MerchantAccount{Environment: remit.Sandbox, ID: seed.Tenant.Sandbox}
	// Unaligned bounds: both edge hours are partial.
	from := seed.From.Add(17*time.Minute + 3*time.Second)
	for _, p := range []struct {
		name string
		to   time.Time
	}{{"30d", seed.To.Add(-23 * time.Minute)}, {"1d", from.Add(24 * time.Hour)}} {
		want, err := db.Read(ctx).SumUsageEvents(ctx, scope.ID, "c1", "api", remit.Micros(from), remit.Micros(p.to))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.name+"/hourly", func(b *testing.B) {
			for b.Loop() {
				n, err := a.Usage.UsageInPeriod(ctx, db.Read(ctx), scope, "c1", "api", from, p.to)
				if err != nil || n != want {
					b.Fatalf("got %d, %v; want %d", n, err, want)
				}
			}
			b.ReportMetric(float64(want), "events")
		})
		b.Run(p.name+"/raw-index", func(b *testing.B) {
			for b.Loop() {
				n, err := db.Read(ctx).SumUsageEvents(ctx, scope.ID, "c1", "api", remit.Micros(from), remit.Micros(p.to))
				if err != nil || n != want {
					b.Fatalf("got %d, %v; want %d", n, err, want)
				}
			}
			b.ReportMetric(float64(want), "events")
		})
	}
}

// usageBenchPrior is the number of prior events the benchmarks seed: 1,000,000, or 10,000 for a
// smoke run (-benchtime 1x, as CI runs every benchmark once), which need not wait minutes for it.
func usageBenchPrior() int {
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		return 10_000
	}
	return 1_000_000
}

func usageMerchant(b testing.TB, e *testkit.Env, id string) remit.MerchantAccount {
	m, err := e.App.DB.Read(context.Background()).GetMerchantAccount(context.Background(), id, store.Unlocked)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func randomID() string {
	var buf [16]byte
	_, _ = rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// usagePoster returns a function that POSTs a JSON body to a /v1 path as tenant and wants 201. It
// uses its own keep-alive client, and no contract check, so that the figure is the server's.
func usagePoster(b testing.TB, e *testkit.Env, tenant testkit.Tenant) func(body, path string) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	b.Cleanup(client.CloseIdleConnections)
	q := "?environment=sandbox&merchantAccountId=" + tenant.Sandbox
	return func(body, path string) error {
		req, err := http.NewRequest("POST", e.Server.URL+path+q, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tenant.APIKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != 201 {
			return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, out)
		}
		return nil
	}
}

// usageSeedUsers is the number of distinct "user" property values among the seeded events.
const usageSeedUsers = 50_000

type usageSeedFile struct {
	Path   string         `json:"-"`
	Tenant testkit.Tenant `json:"tenant"`
	From   time.Time      `json:"from"` // the seeded events' timestamps lie in [From, To)
	To     time.Time      `json:"to"`
	Events int            `json:"events"`
}

// usageSeed returns a SQLite store holding n usage events of customer c1 on meter api, spread
// evenly over the 30 days before it was made, seeded once and cached under os.TempDir(), keyed by
// n and a hash of the migrations (the schema version). Open a copy: runs must not change it.
func usageSeed(b testing.TB, n int) usageSeedFile {
	b.Helper()
	h := sha256.New()
	files, err := filepath.Glob("../store/migrations/*.sql")
	if err != nil || len(files) == 0 {
		b.Fatalf("migrations: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		h.Write([]byte(filepath.Base(f)))
		h.Write(data)
	}
	dir := filepath.Join(os.TempDir(), "remit-bench")
	base := filepath.Join(dir, fmt.Sprintf("usage-%d-%s", n, hex.EncodeToString(h.Sum(nil))[:12]))
	var seed usageSeedFile
	if data, err := os.ReadFile(base + ".json"); err == nil && json.Unmarshal(data, &seed) == nil {
		seed.Path = base + ".db"
		if _, err := os.Stat(seed.Path); err == nil {
			return seed
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	tmp := base + ".tmp"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(tmp + suffix)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+tmp)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a := app.New(db, remit.SystemClock{}, slog.New(slog.DiscardHandler), app.Config{})
	res, err := a.Merchants.Bootstrap(ctx, "Usage bench", false)
	if err != nil {
		b.Fatal(err)
	}
	m, err := db.Read(ctx).GetMerchantAccount(ctx, res.MerchantAccounts["sandbox"], store.Unlocked)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Catalog.CreateCustomer(ctx, m, remit.Customer{CustomerID: "c1", Name: "Bench"}); err != nil {
		b.Fatal(err)
	}
	seed.Tenant = testkit.Tenant{OrganizationID: res.OrganizationID, APIKey: res.APIKey, APIKeyID: res.APIKeyID,
		Sandbox: res.MerchantAccounts["sandbox"], Production: res.MerchantAccounts["production"]}
	seed.Events = n
	seed.To = time.Now().UTC().Truncate(time.Microsecond)
	seed.From = seed.To.Add(-30 * 24 * time.Hour)
	step := remit.Micros(seed.To) - remit.Micros(seed.From)
	created := remit.Micros(seed.To)
	const perStatement, perTx = 500, 100_000
	for lo := 0; lo < n; lo += perTx {
		err := db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			for i := lo; i < min(lo+perTx, n); i += perStatement {
				var sb strings.Builder
				sb.WriteString(`INSERT INTO usage_events (merchant_account_id, id, customer_id, meter_id, quantity, ts, created_at,
					properties, unique_value) VALUES `)
				var args []any
				for j := i; j < min(i+perStatement, n); j++ {
					if j > i {
						sb.WriteString(",")
					}
					p := len(args)
					fmt.Fprintf(&sb, "($%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
					ts := remit.Micros(seed.From) + int64(j)*step/int64(n)
					user := fmt.Sprintf("u%d", j%usageSeedUsers)
					args = append(args, m.ID, randomID(), "c1", "api", int64(1+j%10), ts, created, `{"user":"`+user+`"}`, user)
				}
				if _, err := tx.Exec(ctx, sb.String(), args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// The derived rows, as usage events would have left them: the meter (a sum meter with events),
	// usage_totals, usage_hourly (sum, count, max and latest of each hour) and the distinct values
	// of the "user" property (so that the meter may be switched to unique_count in a copy).
	err = db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for _, q := range []string{
			`INSERT INTO meters (merchant_account_id, id, name, aggregation, unique_property, implicit, has_events, created_at, updated_at)
				VALUES ($1, 'api', NULL, 'sum', NULL, TRUE, TRUE, $2, $2)`,
			`INSERT INTO usage_totals (merchant_account_id, customer_id, meter_id, total, event_count, updated_at)
				SELECT merchant_account_id, customer_id, meter_id, SUM(quantity), COUNT(*), $2 FROM usage_events
				WHERE merchant_account_id = $1 GROUP BY merchant_account_id, customer_id, meter_id`,
			`INSERT INTO usage_hourly (merchant_account_id, customer_id, meter_id, hour_start, quantity, event_count, max_quantity)
				SELECT merchant_account_id, customer_id, meter_id, ts / 3600000000 * 3600000000, SUM(quantity), COUNT(*), MAX(quantity)
				FROM usage_events WHERE merchant_account_id = $1 AND $2 > 0 GROUP BY merchant_account_id, customer_id, meter_id, ts / 3600000000`,
			// (voided_at IS NULL: the period index holds live events only)
			`UPDATE usage_hourly SET latest_ts = (SELECT MAX(ts) FROM usage_events e WHERE e.merchant_account_id = $1
				AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL
				AND e.ts >= usage_hourly.hour_start AND e.ts < usage_hourly.hour_start + 3600000000) WHERE merchant_account_id = $1 AND $2 > 0`,
			`UPDATE usage_hourly SET latest_quantity = (SELECT quantity FROM usage_events e WHERE e.merchant_account_id = $1
				AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL
				AND e.ts = usage_hourly.latest_ts LIMIT 1) WHERE merchant_account_id = $1 AND $2 > 0`,
			`INSERT INTO usage_unique_hourly (merchant_account_id, customer_id, meter_id, hour_start, value, events)
				SELECT merchant_account_id, customer_id, meter_id, ts / 3600000000 * 3600000000, unique_value, COUNT(*) FROM usage_events
				WHERE merchant_account_id = $1 AND $2 > 0 GROUP BY merchant_account_id, customer_id, meter_id, ts / 3600000000, unique_value`,
			`INSERT INTO usage_unique_values (merchant_account_id, customer_id, meter_id, value, events)
				SELECT merchant_account_id, customer_id, meter_id, unique_value, COUNT(*) FROM usage_events
				WHERE merchant_account_id = $1 AND $2 > 0 GROUP BY merchant_account_id, customer_id, meter_id, unique_value`,
		} {
			if _, err := tx.Exec(ctx, q, m.ID, created); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, base+".db"); err != nil {
		b.Fatal(err)
	}
	data, _ := json.Marshal(seed)
	if err := os.WriteFile(base+".json", data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d usage events into %s in %s", n, base+".db", time.Since(start).Round(time.Millisecond))
	seed.Path = base + ".db"
	return seed
}

// copyFile copies a (closed) SQLite file into the test's temporary folder.
func copyFile(b testing.TB, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "remit.db")
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return dst
}

// BenchmarkRefreshLargePeriod measures the refresh of a draft invoice whose usage line bills a
// period holding every seeded event (1,000,000 over 30 days; 10,000 in a smoke run) of one meter,
// once per aggregation: the meter of the seed is switched to each in a copy of the store. The
// target (docs/usage.md "How it is stored"): under 200 ms for sum, count, max and latest, under 2 s
// for unique_count, on SQLite. Run:
//
//	go test -run '^$' -bench RefreshLargePeriod -benchtime 10x ./httpapi/
func BenchmarkRefreshLargePeriod(b *testing.B) {
	seed := usageSeed(b, usageBenchPrior())
	for _, agg := range []string{remit.AggSum, remit.AggCount, remit.AggMax, remit.AggLatest, remit.AggUniqueCount} {
		b.Run(agg, func(b *testing.B) {
			e := testkit.StartOn(b, testkit.SQLite, "sqlite:"+copyFile(b, seed.Path), testkit.Options{})
			ctx := context.Background()
			unique := any(nil)
			if agg == remit.AggUniqueCount {
				unique = "user"
			}
			if err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE meters SET aggregation = $1, unique_property = $2`, agg, unique)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			m := usageMerchant(b, e, seed.Tenant.Sandbox)
			post := usagePoster(b, e, seed.Tenant)
			for _, x := range [][2]string{
				{"/v1/prices", `{"priceId":"api","productId":"api","name":"API","priceType":"usage_metered","currency":"USD","billingInterval":"month","meterId":"api","unitAmount":1}`},
				{"/v1/billing-accounts", `{"billingAccountId":"ba","customerId":"c1","currency":"USD"}`},
			} {
				if err := post(x[1], x[0]); err != nil && !strings.Contains(err.Error(), ": 200 ") {
					b.Fatal(err)
				}
			}
			from, to := seed.From, seed.To.Add(time.Microsecond)
			inv, err := e.App.Invoicing.CreateInvoice(ctx, m, remit.InvoiceDraftInput{CustomerID: "c1", BillingAccountID: "ba", Currency: "USD",
				PeriodStart: &from, PeriodEnd: &to, Lines: []remit.InvoiceLineInput{{PriceID: "api"}}})
			if err != nil {
				b.Fatal(err)
			}
			var quantity int64
			for b.Loop() {
				inv, err = e.App.Invoicing.RefreshInvoice(ctx, m, inv.InvoiceID)
				if err != nil {
					b.Fatal(err)
				}
				quantity = inv.Lines[0].Quantity
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refresh")
			b.ReportMetric(float64(quantity), "quantity")
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
