package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

func TestWebhookEndpoints(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{
			"url": "https://hooks.example.com/remit", "description": "main", "metadata": map[string]any{"team": "billing"},
		})
		ep := r.Data()
		if ep["object"] != "webhook_endpoint" || ep["status"] != "enabled" || !strings.HasPrefix(ep["endpointId"].(string), "we_") ||
			ep["environment"] != "sandbox" || ep["merchantAccountId"] != e.Tenant.Sandbox || ep["description"] != "main" {
			t.Fatalf("endpoint: %s", r.Body)
		}
		if ev, _ := ep["enabledEvents"].([]any); len(ev) != 1 || ev[0] != "*" {
			t.Fatalf("enabledEvents default: %v", ep["enabledEvents"])
		}
		secret, _ := ep["secret"].(string)
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if !strings.HasPrefix(secret, "whsec_") || err != nil || len(raw) < 24 {
			t.Fatalf("secret %q: %v (%d bytes)", secret, err, len(raw))
		}
		id := ep["endpointId"].(string)

		// The secret is shown once.
		got := e.Must(200, "GET", "/v1/webhook-endpoints/"+id, nil).Data()
		if _, ok := got["secret"]; ok || got["url"] != "https://hooks.example.com/remit" || got["metadata"].(map[string]any)["team"] != "billing" {
			t.Fatalf("get: %v", got)
		}

		// Caller-chosen IDs, duplicates, every problem at once.
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"endpointId": "ops-hook", "url": "https://hooks.example.com/ops", "enabledEvents": []string{"invoice.paid", "invoice.paid"}})
		r = e.Must(409, "POST", "/v1/webhook-endpoints", map[string]any{"endpointId": "ops-hook", "url": "https://hooks.example.com/ops"})
		if r.ErrorDetails()["reason"] != "duplicate_id" {
			t.Fatalf("duplicate: %s", r.Body)
		}
		ops := e.Must(200, "GET", "/v1/webhook-endpoints/ops-hook", nil).Data()
		if ev := ops["enabledEvents"].([]any); len(ev) != 1 {
			t.Fatalf("enabledEvents not deduplicated: %v", ev)
		}
		r = e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "ftp://x.example.com", "enabledEvents": []string{"*", "invoice.finalised"}})
		fe := r.FieldErrors()
		if !slices.Contains(fe, "body:url:invalid_scheme") || !slices.Contains(fe, "body:enabledEvents[1]:unknown_event_type") {
			t.Fatalf("problems: %v", fe)
		}
		e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://x.example.com", "extra": 1})

		// Paging, newest first.
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/third"})
		p1 := e.Must(200, "GET", "/v1/webhook-endpoints?limit=2", nil).Data()
		items := p1["items"].([]any)
		if len(items) != 2 || p1["hasMore"] != true || items[0].(map[string]any)["url"] != "https://hooks.example.com/third" {
			t.Fatalf("page 1: %v", p1)
		}
		p2 := e.Must(200, "GET", "/v1/webhook-endpoints?cursor="+p1["nextCursor"].(string), nil).Data()
		if items := p2["items"].([]any); len(items) != 1 || p2["hasMore"] != false || items[0].(map[string]any)["endpointId"] != id {
			t.Fatalf("page 2: %v", p2)
		}
		e.Must(422, "GET", "/v1/events?cursor="+p1["nextCursor"].(string), nil) // another list's cursor

		// Disable, then 409.
		d := e.Must(200, "POST", "/v1/webhook-endpoints/"+id+"/disable", map[string]any{}).Data()
		if d["status"] != "disabled" || d["disabledReason"] != "requested" || d["disabledAt"] == nil {
			t.Fatalf("disable: %v", d)
		}
		r = e.Must(409, "POST", "/v1/webhook-endpoints/"+id+"/disable", map[string]any{})
		if r.ErrorDetails()["currentState"] != "disabled" {
			t.Fatalf("second disable: %s", r.Body)
		}

		// Another organization sees none of it.
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/webhook-endpoints/"+id, nil, testkit.As(other))
		e.Must(404, "POST", "/v1/webhook-endpoints/"+id+"/disable", map[string]any{}, testkit.As(other))
		if items := e.Must(200, "GET", "/v1/webhook-endpoints", nil, testkit.As(other)).Data()["items"].([]any); len(items) != 0 {
			t.Fatalf("other tenant lists %d endpoints", len(items))
		}

		// Events: the endpoints' own, newest first, filtered by type, paged.
		evs := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.created", nil).Data()["items"].([]any)
		if len(evs) != 3 {
			t.Fatalf("created events: %d", len(evs))
		}
		first := evs[0].(map[string]any)
		obj := first["data"].(map[string]any)["object"].(map[string]any)
		if first["object"] != "event" || obj["url"] != "https://hooks.example.com/third" || obj["secret"] != nil {
			t.Fatalf("event: %v", first)
		}
		all := e.Must(200, "GET", "/v1/events?limit=1", nil).Data()
		if all["items"].([]any)[0].(map[string]any)["type"] != "webhook_endpoint.disabled" {
			t.Fatalf("newest event: %v", all)
		}
		typed := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.created&limit=2", nil).Data()
		e.Must(422, "GET", "/v1/events?cursor="+typed["nextCursor"].(string), nil) // the typed list's cursor
		rest := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.created&cursor="+typed["nextCursor"].(string), nil).Data()
		if len(rest["items"].([]any)) != 1 {
			t.Fatalf("typed page 2: %v", rest)
		}
		evID := first["eventId"].(string)
		if g := e.Must(200, "GET", "/v1/events/"+evID, nil).Data(); g["eventId"] != evID || g["type"] != "webhook_endpoint.created" {
			t.Fatalf("get event: %v", g)
		}
		e.Must(404, "GET", "/v1/events/"+evID, nil, testkit.As(other))
		e.Must(404, "GET", "/v1/events/"+evID+"/deliveries", nil, testkit.As(other))
		e.Must(404, "GET", "/v1/events/evt_nope", nil)
		// Dispatched once (by the chaining pass on PostgreSQL, by the worker on SQLite): one
		// delivery to each subscribed endpoint, however often dispatch runs.
		for range 2 {
			if _, err := e.App.Webhooks.DispatchEvents(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		ds, seen := deliveries(t, e, evID), map[any]bool{}
		for _, d := range ds {
			if d["trigger"] != "dispatch" || seen[d["endpointId"]] {
				t.Fatalf("deliveries once dispatched: %v", ds)
			}
			seen[d["endpointId"]] = true
		}
		if len(ds) == 0 {
			t.Fatal("the event was not dispatched")
		}
	})
}

func TestWebhookSignedDelivery(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		var mu sync.Mutex
		var verifyErrs []error
		var rc *receiver
		var secret string
		rc = newReceiver(t, func(h hit, n int) int {
			wh, err := standardwebhooks.NewWebhook(secret)
			if err == nil {
				err = wh.Verify(h.Body, h.Header)
			}
			mu.Lock()
			verifyErrs = append(verifyErrs, err)
			mu.Unlock()
			return 204
		})
		var epID string
		epID, secret = createEndpoint(t, e, rc.URL+"/hooks", "invoice.finalized")
		ids := emitEvents(t, e, "invoice.finalized", 2)
		emitEvents(t, e, "customer.created", 1) // not subscribed

		deliverUntil(t, e, "two deliveries", func() bool { return len(rc.Hits()) >= 2 })
		if n, _ := e.App.Webhooks.DeliverDue(context.Background()); n != 0 {
			t.Fatalf("%d more attempts after everything succeeded", n)
		}
		hits := rc.Hits()
		if len(hits) != 2 {
			t.Fatalf("receiver got %d requests, want 2 (the unsubscribed type must not be sent)", len(hits))
		}
		mu.Lock()
		for i, err := range verifyErrs {
			if err != nil {
				t.Errorf("request %d: Standard Webhooks verification failed: %v", i, err)
			}
		}
		mu.Unlock()
		// A wrong secret does not verify.
		bad, _ := standardwebhooks.NewWebhook("whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)))
		if bad.Verify(hits[0].Body, hits[0].Header) == nil {
			t.Fatal("a signature verified with the wrong secret")
		}
		for _, h := range hits {
			if !slices.Contains(ids, h.WebhookID) || h.Attempt != 1 || h.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("hit: %+v", h)
			}
			ts, _ := strconv.ParseInt(h.Header.Get("webhook-timestamp"), 10, 64)
			if d := time.Since(time.Unix(ts, 0)); d < -time.Second || d > time.Minute {
				t.Fatalf("webhook-timestamp %d is not now", ts)
			}
			// The body is the event as the API shows it.
			var body, api map[string]any
			_ = json.Unmarshal(h.Body, &body)
			api = e.Must(200, "GET", "/v1/events/"+h.WebhookID, nil).Data()
			if fmt.Sprint(body) != fmt.Sprint(api) {
				t.Fatalf("body %v\nAPI  %v", body, api)
			}
		}
		ds := deliveries(t, e, ids[0])
		if len(ds) != 1 {
			t.Fatalf("deliveries: %v", ds)
		}
		d := ds[0]
		hist := d["attemptHistory"].([]any)
		if d["status"] != "succeeded" || d["attempts"] != 1.0 || d["responseStatus"] != 204.0 || d["endpointId"] != epID ||
			d["trigger"] != "dispatch" || d["nextAttemptAt"] != nil || !strings.HasPrefix(d["deliveryId"].(string), "wd_") || len(hist) != 1 {
			t.Fatalf("delivery: %v", d)
		}
		a := hist[0].(map[string]any)
		if a["attempt"] != 1.0 || a["responseStatus"] != 204.0 || a["durationMs"] == nil || a["error"] != nil || a["attemptedAt"] == nil {
			t.Fatalf("attempt: %v", a)
		}
	})
}

func TestWebhookRetries(t *testing.T) {
	testkit.RunWith(t, testkit.Options{Config: fastConfig("10ms,10ms")}, func(t *testing.T, e *testkit.Env) {
		flaky := newReceiver(t, func(h hit, n int) int {
			if n <= 2 {
				return 500
			}
			return 200
		})
		down := newReceiver(t, func(hit, int) int { return 503 })
		createEndpoint(t, e, flaky.URL, "invoice.paid")
		createEndpoint(t, e, down.URL, "invoice.paid")
		id := emitEvents(t, e, "invoice.paid", 1)[0]

		deliverUntil(t, e, "both deliveries to finish", func() bool {
			ds := deliveries(t, e, id)
			return len(ds) == 2 && ds[0]["status"] != "pending" && ds[1]["status"] != "pending"
		})
		hits := flaky.Hits()
		if len(hits) != 3 {
			t.Fatalf("flaky receiver got %d attempts, want 3", len(hits))
		}
		for i, h := range hits {
			if h.WebhookID != id || h.Attempt != i+1 || h.Delivery != hits[0].Delivery {
				t.Fatalf("attempt %d: %+v", i+1, h)
			}
		}
		if n := len(down.Hits()); n != 3 {
			t.Fatalf("failing receiver got %d attempts, want 3 (1 + 2 retries)", n)
		}
		for _, d := range deliveries(t, e, id) {
			hist := d["attemptHistory"].([]any)
			var codes []any
			for _, a := range hist {
				codes = append(codes, a.(map[string]any)["responseStatus"])
			}
			switch d["deliveryId"] {
			case hits[0].Delivery:
				if d["status"] != "succeeded" || fmt.Sprint(codes) != "[500 500 200]" || d["lastError"] != nil {
					t.Fatalf("flaky delivery: %v", d)
				}
			default:
				if d["status"] != "failed" || d["attempts"] != 3.0 || fmt.Sprint(codes) != "[503 503 503]" || d["nextAttemptAt"] != nil ||
					!strings.Contains(d["lastError"].(string), "503") {
					t.Fatalf("failing delivery: %v", d)
				}
			}
		}
	})
}

func TestWebhookGoneDisablesEndpoint(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		gone := newReceiver(t, func(hit, int) int { return http.StatusGone })
		epID, _ := createEndpoint(t, e, gone.URL, "invoice.paid")
		id := emitEvents(t, e, "invoice.paid", 1)[0]
		deliverUntil(t, e, "the 410", func() bool { return len(gone.Hits()) == 1 })
		ep := e.Must(200, "GET", "/v1/webhook-endpoints/"+epID, nil).Data()
		if ep["status"] != "disabled" || ep["disabledReason"] != "gone" {
			t.Fatalf("endpoint after 410: %v", ep)
		}
		d := deliveries(t, e, id)[0]
		if d["status"] != "failed" || d["responseStatus"] != 410.0 || d["attempts"] != 1.0 {
			t.Fatalf("delivery after 410: %v", d)
		}
		dis := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.disabled", nil).Data()["items"].([]any)
		if len(dis) != 1 {
			t.Fatalf("webhook_endpoint.disabled events: %d", len(dis))
		}
		// No more deliveries to it; resending to it is a conflict.
		emitEvents(t, e, "invoice.paid", 1)
		if _, err := e.App.Webhooks.DeliverDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(gone.Hits()); n != 1 {
			t.Fatalf("disabled endpoint got %d requests", n)
		}
		r := e.Must(409, "POST", "/v1/events/"+id+"/resend", map[string]any{"endpointId": epID})
		if r.ErrorDetails()["currentState"] != "disabled" {
			t.Fatalf("resend to disabled: %s", r.Body)
		}
	})
}

func TestWebhookResend(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		a := newReceiver(t, nil)
		b := newReceiver(t, nil)
		_, secretA := createEndpoint(t, e, a.URL, "invoice.paid")
		epB, _ := createEndpoint(t, e, b.URL, "*")
		createEndpoint(t, e, a.URL+"/other", "invoice.voided") // not subscribed to invoice.paid
		id := emitEvents(t, e, "invoice.paid", 1)[0]
		deliverUntil(t, e, "first deliveries", func() bool { return len(a.Hits()) == 1 && len(b.Hits()) >= 1 })
		bBefore := len(b.Hits())

		// To one endpoint.
		r := e.Must(200, "POST", "/v1/events/"+id+"/resend", map[string]any{"endpointId": epB})
		list := r.Data()
		items := list["items"].([]any)
		if list["object"] != "list" || len(items) != 1 || list["hasMore"] != false {
			t.Fatalf("resend: %s", r.Body)
		}
		d := items[0].(map[string]any)
		if d["endpointId"] != epB || d["eventId"] != id || d["status"] != "pending" || d["trigger"] != "resend" {
			t.Fatalf("resend delivery: %v", d)
		}
		deliverUntil(t, e, "the resend", func() bool { return len(b.Hits()) == bBefore+1 })
		if len(a.Hits()) != 1 {
			t.Fatal("resend to B reached A")
		}
		last := b.Hits()[bBefore]
		if last.WebhookID != id || last.Delivery != d["deliveryId"] || last.Attempt != 1 {
			t.Fatalf("resent request: %+v", last)
		}

		// To every subscribed enabled endpoint.
		r = e.Must(200, "POST", "/v1/events/"+id+"/resend", map[string]any{})
		if items := r.Data()["items"].([]any); len(items) != 2 {
			t.Fatalf("resend to all: %s", r.Body)
		}
		deliverUntil(t, e, "resend to all", func() bool { return len(a.Hits()) == 2 && len(b.Hits()) == bBefore+2 })
		first, again := a.Hits()[0], a.Hits()[1]
		if again.WebhookID != first.WebhookID || again.Delivery == first.Delivery {
			t.Fatalf("resend keeps webhook-id and makes a new delivery: %+v %+v", first, again)
		}
		t1, _ := strconv.ParseInt(first.Header.Get("webhook-timestamp"), 10, 64)
		t2, _ := strconv.ParseInt(again.Header.Get("webhook-timestamp"), 10, 64)
		if t2 < t1 {
			t.Fatalf("resend timestamp %d before the first %d", t2, t1)
		}
		wh, _ := standardwebhooks.NewWebhook(secretA)
		if err := wh.Verify(again.Body, again.Header); err != nil {
			t.Fatalf("resent signature: %v", err)
		}
		if ds := deliveries(t, e, id); len(ds) != 5 {
			t.Fatalf("event has %d deliveries, want 5 (2 dispatched, 1 + 2 resent)", len(ds))
		}

		// Not found: unknown event, unknown or foreign endpoint.
		e.Must(404, "POST", "/v1/events/evt_nope/resend", map[string]any{})
		r = e.Must(404, "POST", "/v1/events/"+id+"/resend", map[string]any{"endpointId": "we_nope"})
		if r.ErrorDetails()["field"] != "endpointId" {
			t.Fatalf("unknown endpoint: %s", r.Body)
		}
		other := e.NewTenant("Other", false)
		otherEp := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": a.URL}, testkit.As(other)).Data()["endpointId"].(string)
		e.Must(404, "POST", "/v1/events/"+id+"/resend", map[string]any{"endpointId": otherEp})
		e.Must(404, "POST", "/v1/events/"+id+"/resend", map[string]any{}, testkit.As(other))
		e.Must(422, "POST", "/v1/events/"+id+"/resend", map[string]any{"endpoint": epB})
	})
}

func TestWebhookURLSafety(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		prod := testkit.Production()
		cases := []struct{ url, reason string }{
			{"http://hooks.example.com/remit", "https_required"},
			{"https://127.0.0.1/hook", "private_address"},
			{"https://127.1.2.3:8443/hook", "private_address"},
			{"https://10.1.2.3/hook", "private_address"},
			{"https://172.20.0.1/hook", "private_address"},
			{"https://192.168.1.10/hook", "private_address"},
			{"https://169.254.169.254/latest/meta-data", "private_address"},
			{"https://100.64.0.1/hook", "private_address"},
			{"https://0.0.0.0/hook", "private_address"},
			{"https://[::1]/hook", "private_address"},
			{"https://[fe80::1]/hook", "private_address"},
			{"https://[fd00::1]/hook", "private_address"},
			{"https://[::ffff:127.0.0.1]/hook", "private_address"},
			{"https://[64:ff9b::a00:1]/hook", "private_address"},
			{"https://localhost/hook", "private_address"},
			{"https://api.localhost/hook", "private_address"},
			{"not a url", "invalid_url"},
			{"/relative/path", "invalid_url"},
			{"ftp://hooks.example.com/", "invalid_scheme"},
			{"https://256.0.0.1/", "invalid_url"},
		}
		// Every other spelling of a refused address, as browsers and inet_aton read hosts
		// (remit.TestWebhookTargetSpellings holds the whole table of the rule).
		for _, host := range []string{
			"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0", "127.0.0.1.", "167772161", "0xc0.0xa8.1.10",
			"2852039166", "１２７.０.０.１", "[2002:7f00:1::]", "[2002:a9fe:a9fe::]", "[64:ff9b::7f00:1]",
			"[::ffff:7f00:1]", "[::127.0.0.1]", "[::]", "[fe80::1%25eth0]", "[fc00::1]", "[2001::1]",
		} {
			cases = append(cases, struct{ url, reason string }{"https://" + host + "/hook", "private_address"})
		}
		for _, c := range cases {
			r := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": c.url}, prod)
			if fe := r.FieldErrors(); !slices.Contains(fe, "body:url:"+c.reason) {
				t.Errorf("%s: %v, want reason %s", c.url, fe, c.reason)
			}
		}
		// The spellings of the finding, with http: both problems.
		for _, host := range []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0", "[2002:7f00:1::]"} {
			fe := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "http://" + host + "/"}, prod).FieldErrors()
			if !slices.Contains(fe, "body:url:https_required") || !slices.Contains(fe, "body:url:private_address") {
				t.Errorf("http://%s/ in production: %v", host, fe)
			}
		}
		// http to a private address in production: both problems.
		fe := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "http://10.0.0.1/"}, prod).FieldErrors()
		if !slices.Contains(fe, "body:url:https_required") || !slices.Contains(fe, "body:url:private_address") {
			t.Errorf("http private in production: %v", fe)
		}
		// A public https address is fine in production; private ones are fine in the sandbox.
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://93.184.216.34/hook"}, prod)
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "http://127.0.0.1:9/hook"})
		// An address in another spelling is stored as it is dialled.
		if u := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://1572395042:8443/hook"}, prod).Data()["url"]; u != "https://93.184.216.34:8443/hook" {
			t.Errorf("stored url %v", u)
		}
		if u := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "http://0x7f000001:9/hook"}).Data()["url"]; u != "http://127.0.0.1:9/hook" {
			t.Errorf("stored sandbox url %v", u)
		}
	})
}

// TestWebhookHostResolvedBeforeTheTransaction: a production endpoint's host name is looked up
// once, before the request's transaction (a slow lookup must not hold the store's writer), and the
// check inside uses that answer.
func TestWebhookHostResolvedBeforeTheTransaction(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	answers := map[string][]netip.Addr{
		"hooks.internal.test": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")},
		"hooks.public.test":   {netip.MustParseAddr("93.184.216.34")},
	}
	opts := testkit.Options{Engine: func(a *app.App) {
		a.Config.LookupHost = func(ctx context.Context, host string) ([]netip.Addr, error) {
			if store.InTx(ctx) {
				t.Errorf("%s was looked up inside a store transaction", host)
			}
			mu.Lock()
			calls[host]++
			mu.Unlock()
			if addrs, ok := answers[host]; ok {
				return addrs, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	}}
	testkit.RunWith(t, opts, func(t *testing.T, e *testkit.Env) {
		mu.Lock()
		clear(calls)
		mu.Unlock()
		prod := testkit.Production()
		r := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.internal.test/remit"}, prod)
		if fe := r.FieldErrors(); !slices.Contains(fe, "body:url:private_address") {
			t.Errorf("a name with a private address among its answers: %v", fe)
		}
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.public.test/remit"}, prod, testkit.Key("pub"))
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.unknown.test/remit"}, prod)
		// A scheme other than http(s) is refused before any name is looked up.
		for _, u := range []string{"ftp://hooks.ftp.test/", "gopher://hooks.ftp.test/"} {
			e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": u}, prod)
		}
		mu.Lock()
		defer mu.Unlock()
		if calls["hooks.internal.test"] != 1 || calls["hooks.public.test"] != 1 || calls["hooks.unknown.test"] != 1 || calls["hooks.ftp.test"] != 0 {
			t.Errorf("lookups %v, want one per request with an http(s) URL", calls)
		}
	})
}

func TestWebhookPrivateRefusedAtConnect(t *testing.T) {
	cfg := fastConfig("10ms")
	cfg.WebhookAllowPriv = "false"
	testkit.RunWith(t, testkit.Options{Config: cfg}, func(t *testing.T, e *testkit.Env) {
		rc := newReceiver(t, nil)
		r := e.Must(422, "POST", "/v1/webhook-endpoints", map[string]any{"url": rc.URL})
		if fe := r.FieldErrors(); !slices.Contains(fe, "body:url:private_address") {
			t.Fatalf("sandbox with REMIT_WEBHOOK_ALLOW_PRIVATE=false: %v", fe)
		}
		// The endpoints passed the check when created; later their addresses turn private (as a
		// changed DNS answer would): the loopback address itself, a name that resolves to it when
		// the connection is made, and the 6to4 address that carries it. Each connection is refused
		// by the dialer's Control hook, on the address about to be dialled.
		port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
		rebound := map[string]string{
			rc.URL + "/rebound":                        "127.0.0.1",
			"http://localhost:" + port + "/rebound":    "", // 127.0.0.1 or ::1, whichever is tried first
			"http://[2002:7f00:1::]:" + port + "/6to4": "2002:7f00:1::",
		}
		for u := range rebound {
			epID, _ := createEndpoint(t, e, "http://93.184.216.34/hook", "invoice.paid")
			if _, err := e.App.DB.SQL().Exec(`UPDATE webhook_endpoints SET url = $1 WHERE id = $2`, u, epID); err != nil {
				t.Fatal(err)
			}
		}
		id := emitEvents(t, e, "invoice.paid", 1)[0]
		deliverUntil(t, e, "the deliveries to fail", func() bool {
			ds := deliveries(t, e, id)
			return len(ds) == len(rebound) && !slices.ContainsFunc(ds, func(d map[string]any) bool { return d["status"] != "failed" })
		})
		if n := len(rc.Hits()); n != 0 {
			t.Fatalf("a private address got %d requests", n)
		}
		for _, d := range deliveries(t, e, id) {
			ep := e.Must(200, "GET", "/v1/webhook-endpoints/"+d["endpointId"].(string), nil).Data()
			for _, a := range d["attemptHistory"].([]any) {
				msg, _ := a.(map[string]any)["error"].(string)
				if want := rebound[ep["url"].(string)]; !strings.Contains(msg, want) || !strings.Contains(msg, "private") {
					t.Errorf("%s: attempt error %q, want a refusal of %s", ep["url"], msg, want)
				}
			}
		}
	})
}

// Two Remit instances on one store share the deliveries of 1,000 events: every event arrives and
// no attempt is sent twice.
func TestWebhookTwoWorkers(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			url := testkit.MigratedStoreURL(t, s)
			cfg := fastConfig("50ms,100ms,200ms,400ms")
			cfg.SchedulerInterval = 20 * time.Millisecond
			e1 := testkit.StartOn(t, s, url, testkit.Options{Config: cfg})
			e2 := testkit.StartOn(t, s, url, testkit.Options{Config: cfg})
			rc := newReceiver(t, nil)
			createEndpoint(t, e1, rc.URL, "invoice.paid")
			const n = 1000
			var ids []string
			for range n / 100 {
				ids = append(ids, emitEvents(t, e1, "invoice.paid", 100)...)
			}
			start := time.Now()
			startWorker(t, e1.App)
			startWorker(t, e2.App)
			distinct := func() int {
				seen := map[string]bool{}
				for _, h := range rc.Hits() {
					seen[h.WebhookID] = true
				}
				return len(seen)
			}
			testkit.WaitFor(t, 60*time.Second, "1,000 events at the receiver", func() bool { return distinct() == n })
			t.Logf("%d events delivered by two workers in %s", n, time.Since(start))
			hits := rc.Hits()
			sent := map[string]int{}
			for _, h := range hits {
				sent[fmt.Sprintf("%s/%s/%d", h.WebhookID, h.Delivery, h.Attempt)]++
			}
			for k, c := range sent {
				if c > 1 {
					t.Errorf("attempt %s sent %d times", k, c)
				}
			}
			for _, id := range ids {
				if !slices.ContainsFunc(hits, func(h hit) bool { return h.WebhookID == id }) {
					t.Fatalf("event %s never arrived", id)
				}
			}
			if len(hits) != n {
				t.Errorf("receiver got %d requests for %d events (a receiver that always answers 200 needs one each)", len(hits), n)
			}
		})
	}
}

func TestWebhookDisableEndsPendingRetries(t *testing.T) {
	testkit.RunWith(t, testkit.Options{Config: fastConfig("1h")}, func(t *testing.T, e *testkit.Env) {
		down := newReceiver(t, func(hit, int) int { return 500 })
		epID, _ := createEndpoint(t, e, down.URL, "invoice.paid")
		id := emitEvents(t, e, "invoice.paid", 1)[0]
		deliverUntil(t, e, "the first attempt", func() bool { return len(down.Hits()) == 1 })
		d := deliveries(t, e, id)[0]
		if d["status"] != "pending" || d["nextAttemptAt"] == nil {
			t.Fatalf("after a 500: %v", d)
		}
		e.Must(200, "POST", "/v1/webhook-endpoints/"+epID+"/disable", map[string]any{})
		d = deliveries(t, e, id)[0]
		if d["status"] != "failed" || d["nextAttemptAt"] != nil || d["attempts"] != 1.0 || !strings.Contains(d["lastError"].(string), "disabled") {
			t.Fatalf("after disable: %v", d)
		}
	})
}
