package httpapi_test

import (
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

func TestSmoke(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := e.Must(200, "GET", "/v1/test-helpers/clock", nil)
		if r.Data()["object"] != "test_clock" {
			t.Fatalf("got %s", r.Body)
		}
		r = e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 60}, testkit.Key("a1"))
		r2 := e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 60.0}, testkit.Key("a1"))
		if r2.Header.Get("Idempotent-Replayed") != "true" || string(r2.Body) != string(r.Body) {
			t.Fatalf("no replay: %s", r2.Body)
		}
		e.Must(409, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 61}, testkit.Key("a1"))
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "p1", "productId": "x", "name": "n", "priceType": "free", "currency": "USD"})
	})
}
