package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// A disabled endpoint is enabled again: it gets the events that happen from then on, not those of
// the time it was disabled; enabling an enabled one is 409, as disabling a disabled one is.
func TestWebhookEndpointEnable(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		rc := newReceiver(t, nil)
		id, _ := createEndpoint(t, e, rc.URL, "invoice.paid")
		r := e.Must(409, "POST", "/v1/webhook-endpoints/"+id+"/enable", map[string]any{})
		if r.ErrorDetails()["currentState"] != "enabled" || r.ErrorDetails()["reason"] != "invalid_state" {
			t.Fatalf("enable an enabled endpoint: %s", r.Body)
		}
		e.Must(200, "POST", "/v1/webhook-endpoints/"+id+"/disable", map[string]any{})
		missed := emitEvents(t, e, "invoice.paid", 1)[0]
		e.Must(200, "GET", "/v1/events/"+missed, nil) // chained, so dispatched, while the endpoint is disabled
		deliverUntil(t, e, "the missed event's dispatch", func() bool { return true })

		other := e.NewTenant("Other", false)
		e.Must(404, "POST", "/v1/webhook-endpoints/"+id+"/enable", map[string]any{}, testkit.As(other))
		e.Must(404, "POST", "/v1/webhook-endpoints/we_nope/enable", map[string]any{})
		e.Must(422, "POST", "/v1/webhook-endpoints/"+id+"/enable", map[string]any{"extra": 1})

		d := e.Must(200, "POST", "/v1/webhook-endpoints/"+id+"/enable", map[string]any{}).Data()
		if d["status"] != "enabled" || d["disabledReason"] != nil || d["disabledAt"] != nil || d["secret"] != nil {
			t.Fatalf("enabled: %v", d)
		}
		if g := e.Must(200, "GET", "/v1/webhook-endpoints/"+id, nil).Data(); g["status"] != "enabled" || g["disabledAt"] != nil {
			t.Fatalf("get after enable: %v", g)
		}
		evs := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.enabled", nil).Data()["items"].([]any)
		if len(evs) != 1 || evs[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["status"] != "enabled" {
			t.Fatalf("webhook_endpoint.enabled events: %v", evs)
		}
		after := emitEvents(t, e, "invoice.paid", 1)[0]
		deliverUntil(t, e, "the new event's delivery", func() bool { return len(rc.Hits()) >= 1 })
		if hits := rc.Hits(); len(hits) != 1 || hits[0].WebhookID != after {
			t.Fatalf("after enable the receiver got %v, want only %s (not %s, of the disabled time)", hits, after, missed)
		}
		if ds := deliveries(t, e, missed); len(ds) != 0 {
			t.Fatalf("the event of the disabled time has deliveries: %v", ds)
		}

		// An endpoint that answered 410 Gone is enabled the same way.
		gone := newReceiver(t, func(hit, int) int { return http.StatusGone })
		gid, _ := createEndpoint(t, e, gone.URL, "customer.created")
		emitEvents(t, e, "customer.created", 1)
		deliverUntil(t, e, "the 410", func() bool {
			return e.Must(200, "GET", "/v1/webhook-endpoints/"+gid, nil).Data()["status"] == "disabled"
		})
		if d := e.Must(200, "POST", "/v1/webhook-endpoints/"+gid+"/enable", map[string]any{}).Data(); d["status"] != "enabled" {
			t.Fatalf("enable after 410: %v", d)
		}
	})
}

// signatures splits a webhook-signature header into its entries.
func signatures(h http.Header) []string { return strings.Fields(h.Get("webhook-signature")) }

// verifies reports whether the Standard Webhooks library accepts the request with secret.
func verifies(t *testing.T, secret string, h hit) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(h.Body, h.Header) == nil
}

// onlyFirst is the request with its first signature alone.
func onlyFirst(h hit) hit {
	h.Header = h.Header.Clone()
	h.Header.Set("webhook-signature", signatures(h.Header)[0])
	return h
}

// Rotating a secret: the answer shows the new secret once; until the old one expires on the
// merchant clock every delivery (a retry in flight at the rotation too) carries both signatures,
// the new one first, and the Standard Webhooks library verifies it with either secret; after it,
// only with the new one. The real-time clock is a fixed one (near now, as the library checks
// webhook-timestamp against its own clock), so that a retry falls due without waiting.
func TestWebhookSecretRotation(t *testing.T) {
	for _, st := range testkit.Stores() {
		t.Run(string(st), func(t *testing.T) {
			clock := remit.NewFixedClock(time.Now())
			cfg := wire.Defaults()
			cfg.RateLimit, cfg.RateBurst, cfg.WebhookRetry = 100000, 100000, "1m"
			e := testkit.Start(t, st, testkit.Options{Clock: clock, Config: &cfg})
			var requests atomic.Int32
			rc := newReceiver(t, func(hit, int) int {
				if requests.Add(1) == 1 {
					return 500 // the first attempt of the first event fails: its retry comes after the rotation
				}
				return 200
			})
			id, old := createEndpoint(t, e, rc.URL, "invoice.paid")
			ep := "/v1/webhook-endpoints/" + id
			first := emitEvents(t, e, "invoice.paid", 1)[0]
			deliverUntil(t, e, "the first attempt", func() bool { return len(rc.Hits()) == 1 })
			if h := rc.Hits()[0]; len(signatures(h.Header)) != 1 || !verifies(t, old, h) {
				t.Fatalf("before the rotation: %q", h.Header.Get("webhook-signature"))
			}

			// The refusals.
			for _, body := range []map[string]any{{"expireCurrentAfter": -1}, {"expireCurrentAfter": 604801}, {"expireCurrentAfter": "1h"}} {
				r := e.Must(422, "POST", ep+"/rotate-secret", body)
				if !strings.Contains(strings.Join(r.FieldErrors(), ","), "expireCurrentAfter") {
					t.Fatalf("%v: %s", body, r.Body)
				}
			}
			e.Must(422, "POST", ep+"/rotate-secret", map[string]any{"extra": 1})
			e.Must(404, "POST", ep+"/rotate-secret", map[string]any{}, testkit.As(e.NewTenant("Other", false)))
			e.Must(404, "POST", "/v1/webhook-endpoints/we_nope/rotate-secret", map[string]any{})

			// The rotation: a new secret, shown once; the old one signs 24 hours more (merchant clock).
			r := e.Must(200, "POST", ep+"/rotate-secret", map[string]any{}, testkit.Header("Idempotency-Key", "rot-1"))
			d := r.Data()
			secret1, _ := d["secret"].(string)
			if !strings.HasPrefix(secret1, "whsec_") || secret1 == old {
				t.Fatalf("rotated secret %q (old %q)", secret1, old)
			}
			wantExpiry := clock.Now().Add(24 * time.Hour).Truncate(time.Microsecond)
			if got, err := time.Parse(time.RFC3339Nano, d["previousSecretExpiresAt"].(string)); err != nil || !got.Equal(wantExpiry) {
				t.Fatalf("previousSecretExpiresAt %v, want %v", d["previousSecretExpiresAt"], wantExpiry)
			}
			if replay := e.Must(200, "POST", ep+"/rotate-secret", map[string]any{}, testkit.Header("Idempotency-Key", "rot-1")).Data(); replay["secret"] != secret1 {
				t.Fatalf("the key's replay answered another secret: %v", replay["secret"])
			}
			if g := e.Must(200, "GET", ep, nil).Data(); g["secret"] != nil || g["previousSecretExpiresAt"] != d["previousSecretExpiresAt"] {
				t.Fatalf("get after rotation: %v", g)
			}
			evs := e.Must(200, "GET", "/v1/events?type=webhook_endpoint.secret_rotated", nil).Data()["items"].([]any)
			if len(evs) != 1 {
				t.Fatalf("secret_rotated events: %v", evs)
			}
			obj := evs[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
			if _, has := obj["secret"]; has || obj["previousSecretExpiresAt"] != d["previousSecretExpiresAt"] {
				t.Fatalf("secret_rotated events: %v", evs)
			}

			// The retry of the delivery that failed before the rotation carries both signatures.
			clock.Add(70 * time.Second) // the retry's wait, 1 minute ± 10 %
			deliverUntil(t, e, "the retry", func() bool { return len(rc.Hits()) == 2 })
			both := func(what string, h hit) {
				t.Helper()
				if len(signatures(h.Header)) != 2 || !verifies(t, secret1, h) || !verifies(t, old, h) {
					t.Fatalf("%s: %q does not verify with both secrets", what, h.Header.Get("webhook-signature"))
				}
				if !verifies(t, secret1, onlyFirst(h)) || verifies(t, old, onlyFirst(h)) {
					t.Fatalf("%s: the first signature is not the new secret's", what)
				}
				if verifies(t, newSecretForTest(), h) {
					t.Fatalf("%s: verified with a wrong secret", what)
				}
			}
			retry := rc.Hits()[1]
			if retry.WebhookID != first || retry.Attempt != 2 {
				t.Fatalf("second request: %+v", retry)
			}
			both("the retry", retry)

			// A new event during the overlap, and one just before it ends (the sandbox clock).
			emitEvents(t, e, "invoice.paid", 1)
			deliverUntil(t, e, "an overlap delivery", func() bool { return len(rc.Hits()) == 3 })
			both("during the overlap", rc.Hits()[2])
			e.AdvanceClock(24*3600 - 70 - 60)
			emitEvents(t, e, "invoice.paid", 1)
			deliverUntil(t, e, "a delivery a minute before expiry", func() bool { return len(rc.Hits()) == 4 })
			both("a minute before expiry", rc.Hits()[3])

			// After the expiry, only the new secret signs.
			e.AdvanceClock(120)
			emitEvents(t, e, "invoice.paid", 1)
			deliverUntil(t, e, "a delivery after expiry", func() bool { return len(rc.Hits()) == 5 })
			late := rc.Hits()[4]
			if len(signatures(late.Header)) != 1 || !verifies(t, secret1, late) || verifies(t, old, late) {
				t.Fatalf("after expiry: %q", late.Header.Get("webhook-signature"))
			}

			// Two rotations in a row: the second drops the first's old secret at once; 0 stops
			// the replaced secret at once.
			secret2 := e.Must(200, "POST", ep+"/rotate-secret", map[string]any{"expireCurrentAfter": 3600}).Data()["secret"].(string)
			z := e.Must(200, "POST", ep+"/rotate-secret", map[string]any{"expireCurrentAfter": 0}).Data()
			secret3 := z["secret"].(string)
			emitEvents(t, e, "invoice.paid", 1)
			deliverUntil(t, e, "a delivery after an immediate rotation", func() bool { return len(rc.Hits()) == 6 })
			last := rc.Hits()[5]
			if len(signatures(last.Header)) != 1 || !verifies(t, secret3, last) || verifies(t, secret2, last) || verifies(t, secret1, last) {
				t.Fatalf("after expireCurrentAfter 0: %q", last.Header.Get("webhook-signature"))
			}
			if g := e.Must(200, "GET", ep, nil).Data(); g["previousSecretExpiresAt"] != z["previousSecretExpiresAt"] {
				t.Fatalf("previousSecretExpiresAt after an immediate rotation: %v", g)
			}

			// A disabled endpoint's secret rotates too.
			e.Must(200, "POST", ep+"/disable", map[string]any{})
			if d := e.Must(200, "POST", ep+"/rotate-secret", map[string]any{}).Data(); d["status"] != "disabled" || d["secret"] == nil {
				t.Fatalf("rotate a disabled endpoint: %v", d)
			}
			if n, _ := e.App.Webhooks.DeliverDue(context.Background()); n != 0 || slices.ContainsFunc(rc.Hits(), func(h hit) bool { return h.Attempt > 2 }) {
				t.Fatalf("%d more attempts", n)
			}
		})
	}
}

// newSecretForTest is a secret no endpoint has.
func newSecretForTest() string { return "whsec_" + strings.Repeat("A", 43) + "=" }
