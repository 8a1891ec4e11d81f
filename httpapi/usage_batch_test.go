package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// batchAnswer is the data of a batch's answer.
type batchAnswer struct {
	Object string `json:"object"`
	Items  []struct {
		EventID *string         `json:"eventId"`
		Status  string          `json:"status"`
		Error   json.RawMessage `json:"error"`
	} `json:"items"`
	Created, Duplicates, Rejected int
}

// postBatch posts a batch of events (each marshalled to JSON as it is) and decodes its answer.
func postBatch(t *testing.T, e *testkit.Env, events []any, opts ...testkit.Opt) (*testkit.Response, batchAnswer) {
	t.Helper()
	r := e.Do("POST", "/v1/usage-events/batch", map[string]any{"events": events}, opts...)
	var a batchAnswer
	if r.Status == 200 {
		r.Decode(t, &a)
	}
	return r, a
}

// comparableError is an error body without what differs between two requests: the request ID, and
// the merchant clock's reading in an in_future message.
func comparableError(t *testing.T, body []byte) string {
	t.Helper()
	var env map[string]map[string]any
	if err := json.Unmarshal(body, &env); err != nil || env["error"] == nil {
		t.Fatalf("not an error envelope: %s", body)
	}
	delete(env["error"], "requestId")
	b, _ := json.Marshal(env)
	return regexp.MustCompile(`\(now [^)]*\)`).ReplaceAllString(string(b), "(now …)")
}

// A batch mixing created, duplicate, conflicting and broken events answers each as the single
// route answers the same event alone, records the valid ones, and counts each kind.
func TestUsageBatchJudgesEachAsTheSingleRoute(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		newCatalogKit(t, e).customer("c2")
		ts := rfc(time.Now().Add(-time.Hour).Truncate(time.Microsecond))
		ev := func(id string, q int, extra ...any) map[string]any {
			b := map[string]any{"eventId": id, "customerId": "c1", "meterId": "m", "quantity": q, "timestamp": ts}
			for i := 0; i+1 < len(extra); i += 2 {
				if extra[i+1] == nil {
					delete(b, extra[i].(string))
				} else {
					b[extra[i].(string)] = extra[i+1]
				}
			}
			return b
		}
		e.Must(201, "POST", "/v1/usage-events", ev("pre", 5))
		future := rfc(clockNow(t, e).Add(time.Hour))
		events := []any{
			ev("new1", 10), // created
			ev("pre", 5),   // duplicate of an earlier request
			ev("pre", 6),   // conflict: 409
			map[string]any{"eventId": "bad id", "customerId": "c1", "quantity": -1, "extra": true}, // 422, every field
			ev("ghost-event", 1, "customerId", "ghost"),                                            // 404
			ev("later", 1, "timestamp", future),                                                    // the engine's 422
			json.RawMessage(`7`),                                                                   // not an object: 400
			ev("bad-props", 1, "properties", map[string]any{"k": 5}),                               // 422 on properties.k
			ev("new2", 20), // created
			ev("new1", 10), // duplicate within the batch
			ev("new1", 11), // conflict within the batch
			ev("long-key", 1, "properties", map[string]any{strings.Repeat("k", 41): "v"}), // 422 beyond the contract (kept problems)
			ev("big1", 1, "customerId", "c2", "quantity", int64(math.MaxInt64-10)),        // created
			ev("big2", 11, "customerId", "c2"),                                            // 422 total_out_of_range, after its insert
		}
		r, a := postBatch(t, e, events)
		if r.Status != 200 {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
		want := []string{"created", "duplicate", "rejected", "rejected", "rejected", "rejected", "rejected", "rejected", "created", "duplicate", "rejected",
			"rejected", "created", "rejected"}
		if len(a.Items) != len(want) || a.Object != "usage_event_batch" {
			t.Fatalf("answer %s", r.Body)
		}
		for i, it := range a.Items {
			if it.Status != want[i] || (it.Status == "rejected") != (it.Error != nil) {
				t.Fatalf("item %d: %s %s, want %s\n%s", i, it.Status, it.Error, want[i], r.Body)
			}
		}
		if a.Created != 3 || a.Duplicates != 2 || a.Rejected != 9 {
			t.Fatalf("counts %d %d %d\n%s", a.Created, a.Duplicates, a.Rejected, r.Body)
		}
		if a.Items[0].EventID == nil || *a.Items[0].EventID != "new1" || a.Items[6].EventID != nil {
			t.Fatalf("eventIds: %s", r.Body)
		}
		// Each rejected event's error is the body the single route answers for it alone, now.
		for i, it := range a.Items {
			if it.Status != "rejected" {
				continue
			}
			raw, _ := json.Marshal(events[i])
			single := e.Do("POST", "/v1/usage-events", nil, testkit.Raw(raw, "application/json"))
			if single.Status < 400 {
				t.Fatalf("item %d alone: %d %s", i, single.Status, single.Body)
			}
			if got, wantBody := comparableError(t, it.Error), comparableError(t, single.Body); got != wantBody {
				t.Errorf("item %d: the batch answered\n  %s\nthe single route\n  %s", i, got, wantBody)
			}
		}
		// Only the created events counted: 5 + 10 + 20.
		if n := usageTotal(t, e, e.Tenant.Sandbox, "c1", "m"); n != 35 {
			t.Fatalf("total %d, want 35", n)
		}
		if n := usageTotal(t, e, e.Tenant.Sandbox, "c2", "m"); n != math.MaxInt64-10 {
			t.Fatalf("c2's total %d, want %d", n, int64(math.MaxInt64-10))
		}
		e.Must(200, "GET", "/v1/usage-events/new2", nil)
		if r := e.Do("GET", "/v1/usage-events/later", nil); r.Status != 404 {
			t.Fatalf("a rejected event was recorded: %d %s", r.Status, r.Body)
		}
	})
}

// The batch's own bounds: 1 to 1000 events, else 422 on events.
func TestUsageBatchBounds(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		// The path beside GET /v1/usage-events/{eventId}: GET reads the event named "batch" (none
		// here), another method is 405.
		if r := e.Do("GET", "/v1/usage-events/batch", nil); r.Status != 404 || r.ErrorCode() != "not_found" {
			t.Fatalf("GET /v1/usage-events/batch: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PUT", "/v1/usage-events/batch", map[string]any{}); r.Status != 405 || r.Header.Get("Allow") != "POST" {
			t.Fatalf("PUT /v1/usage-events/batch: %d %s (Allow %q)", r.Status, r.Body, r.Header.Get("Allow"))
		}
		wantFields(t, e.Do("POST", "/v1/usage-events/batch", map[string]any{"events": []any{}}), "body:events:invalid_count")
		wantFields(t, e.Do("POST", "/v1/usage-events/batch", map[string]any{}), "body:events:required")
		many := make([]any, 1001)
		for i := range many {
			many[i] = map[string]any{"eventId": fmt.Sprintf("e%d", i), "customerId": "c1", "meterId": "m", "quantity": 1}
		}
		wantFields(t, e.Do("POST", "/v1/usage-events/batch", map[string]any{"events": many}), "body:events:invalid_count")
		r, a := postBatch(t, e, many[:1000])
		if r.Status != 200 || a.Created != 1000 {
			t.Fatalf("1000 events: %d created %d", r.Status, a.Created)
		}
		if n := usageTotal(t, e, e.Tenant.Sandbox, "c1", "m"); n != 1000 {
			t.Fatalf("total %d, want 1000", n)
		}
	})
}

// One Idempotency-Key covers the whole batch: a replay answers the first answer and records
// nothing again; the same key with another batch is 409.
func TestUsageBatchIdempotencyKey(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		events := []any{
			map[string]any{"eventId": "a", "customerId": "c1", "meterId": "m", "quantity": 3},
			map[string]any{"eventId": "b", "customerId": "c1", "meterId": "m", "quantity": -3},
		}
		first, a := postBatch(t, e, events, testkit.Key("batch-1"))
		if first.Status != 200 || a.Created != 1 || a.Rejected != 1 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		again, _ := postBatch(t, e, events, testkit.Key("batch-1"))
		if again.Status != 200 || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s (replayed %q), want %s", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
		}
		if n := usageTotal(t, e, e.Tenant.Sandbox, "c1", "m"); n != 3 {
			t.Fatalf("total %d, want 3", n)
		}
		other, _ := postBatch(t, e, events[:1], testkit.Key("batch-1"))
		if other.Status != 409 || other.ErrorDetails()["reason"] != "idempotency_key_reused" {
			t.Fatalf("another batch under the key: %d %s", other.Status, other.Body)
		}
	})
}

// Concurrent batches through two servers with overlapping eventIds record each event once: the
// batches' created counts add up to the distinct events, and the total is theirs.
func TestUsageBatchConcurrentOverlap(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newCatalogKit(t, e).customer("c1")
		newCatalogKit(t, e).customer("c2")
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		servers := []*testkit.Env{e, e2}
		ts := rfc(time.Now().Add(-time.Minute).Truncate(time.Microsecond))
		const batches, per, distinct = 8, 60, 200
		created := make([]int, batches)
		statuses := make([]int, batches)
		var wg sync.WaitGroup
		for b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				events := make([]any, per)
				for i := range events {
					n := (b*37 + i*7) % distinct // overlapping between batches
					events[i] = map[string]any{"eventId": fmt.Sprintf("ov-%d", n), "customerId": []string{"c1", "c2"}[n%2],
						"meterId": "m", "quantity": n + 1, "timestamp": ts}
				}
				r := servers[b%2].Do("POST", "/v1/usage-events/batch", map[string]any{"events": events}, testkit.As(e.Tenant))
				statuses[b] = r.Status
				var a batchAnswer
				if r.Status == 200 {
					r.Decode(t, &a)
				}
				created[b] = a.Created
				if a.Rejected != 0 {
					t.Errorf("batch %d rejected events: %s", b, r.Body)
				}
			}()
		}
		wg.Wait()
		seen := map[int]bool{}
		var want int64
		for b := range batches {
			for i := range per {
				n := (b*37 + i*7) % distinct
				if !seen[n] {
					seen[n] = true
					want += int64(n + 1)
				}
			}
		}
		sum := 0
		for b := range batches {
			if statuses[b] != 200 {
				t.Fatalf("batch %d: %d", b, statuses[b])
			}
			sum += created[b]
		}
		if sum != len(seen) {
			t.Fatalf("created %d in all, want %d distinct events", sum, len(seen))
		}
		got := usageTotal(t, e, e.Tenant.Sandbox, "c1", "m") + usageTotal(t, e, e.Tenant.Sandbox, "c2", "m")
		if got != want {
			t.Fatalf("total %d, want %d", got, want)
		}
	})
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Every POST takes a gzip body (Content-Encoding: gzip): the batch and another route; the same
// Idempotency-Key replays across plain and gzip bodies of the same JSON; a body that is not gzip
// is 400, an unknown encoding 415.
func TestGzipBodies(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		gz := testkit.Header("Content-Encoding", "gzip")
		cust, _ := json.Marshal(map[string]any{"customerId": "gz1", "name": "Gzip customer"})
		r := e.Do("POST", "/v1/customers", nil, testkit.Raw(gzipped(t, cust), "application/json"), gz, testkit.Key("gz-cust"))
		if r.Status != 201 || r.Data()["customerId"] != "gz1" {
			t.Fatalf("gzip customer: %d %s", r.Status, r.Body)
		}
		again := e.Do("POST", "/v1/customers", nil, testkit.Raw(cust, "application/json"), testkit.Key("gz-cust"))
		if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the same JSON, plain, under the key: %d %s", again.Status, again.Body)
		}
		events := make([]any, 500)
		for i := range events {
			events[i] = map[string]any{"eventId": fmt.Sprintf("gz-%d", i), "customerId": "gz1", "meterId": "m", "quantity": 2}
		}
		batch, _ := json.Marshal(map[string]any{"events": events})
		body := gzipped(t, batch)
		r = e.Do("POST", "/v1/usage-events/batch", nil, testkit.Raw(body, "application/json"), gz)
		var a batchAnswer
		if r.Status == 200 {
			r.Decode(t, &a)
		}
		if r.Status != 200 || a.Created != 500 {
			t.Fatalf("gzip batch (%d bytes for %d of JSON): %d %s", len(body), len(batch), r.Status, r.Body)
		}
		if n := usageTotal(t, e, e.Tenant.Sandbox, "gz1", "m"); n != 1000 {
			t.Fatalf("total %d, want 1000", n)
		}
		for _, c := range []struct {
			enc  string
			body []byte
			want int
		}{
			{"gzip", cust, 400},                  // plain JSON said to be gzip
			{"gzip", gzipped(t, cust)[:20], 400}, // cut off
			{"br", cust, 415},
		} {
			r := e.Do("POST", "/v1/customers", nil, testkit.Raw(c.body, "application/json"), testkit.Header("Content-Encoding", c.enc))
			if r.Status != c.want || r.ErrorCode() != "bad_request" {
				t.Fatalf("Content-Encoding %s: %d %s, want %d bad_request", c.enc, r.Status, r.Body, c.want)
			}
		}
	})
}

// A gzip bomb (200 MB of zeros in about 200 KB) is 413 with the error envelope, and the server
// stops decompressing at the body limit: the whole test process (server included) allocates a few
// megabytes for it, not the 200 MB a full decompression would.
func TestGzipBomb(t *testing.T) {
	// 200 gzip members of one MiB of zeros each, one after the other: a gzip stream may hold several
	// (RFC 1952, 2.2) and a reader decompresses them all, so this is 200 MiB decompressed, built
	// without compressing 200 MiB under the race detector.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	zr, err := gzip.NewReader(bytes.NewReader(member.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, zr); err != nil || n != 1<<20 {
		t.Fatalf("a member decompresses to %d bytes (%v), want 1 MiB", n, err)
	}
	bomb := bytes.Repeat(member.Bytes(), 200)
	if len(bomb) >= 1<<20 {
		t.Fatalf("the bomb is %d bytes: it must fit the wire limit, so that only the decompressed limit refuses it", len(bomb))
	}
	// One store at a time (another store's server starting beside it would be counted), after a
	// small gzip body so that what the first one sets up is not counted either.
	testkit.RunWith(t, testkit.Options{Serial: true}, func(t *testing.T, e *testkit.Env) {
		var small bytes.Buffer
		zs := gzip.NewWriter(&small)
		_, _ = zs.Write([]byte(`{"events":[]}`))
		_ = zs.Close()
		e.Do("POST", "/v1/usage-events/batch", nil, testkit.Raw(small.Bytes(), "application/json"), testkit.Header("Content-Encoding", "gzip"))
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := e.Do("POST", "/v1/usage-events/batch", nil, testkit.Raw(bomb, "application/json"), testkit.Header("Content-Encoding", "gzip"))
		runtime.ReadMemStats(&after)
		if r.Status != 413 || r.ErrorCode() != "bad_request" {
			t.Fatalf("gzip bomb (%d bytes): %d %s, want 413 bad_request", len(bomb), r.Status, r.Body)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Fatalf("the bomb allocated %d MB in the process: decompressed past the limit", grew>>20)
		}
		t.Logf("a %d-byte bomb of 200 MB: 413, %d KB allocated in the process meanwhile", len(bomb), (after.TotalAlloc-before.TotalAlloc)>>10)
	})
}
