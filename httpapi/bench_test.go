package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// Foundation benchmarks: requests through the full HTTP stack (TCP loopback, request ID, auth,
// rate limit, scope, validation, idempotency, store transaction, envelope) on SQLite. Results and
// the command that produced them are in docs/performance.md.

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
}

func benchEnv(b *testing.B) *testkit.Env {
	b.Helper()
	return testkit.Start(b, testkit.SQLite, testkit.Options{})
}

func doBench(b *testing.B, c *http.Client, req *http.Request, want int) {
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want {
		b.Fatalf("status %d, want %d", res.StatusCode, want)
	}
}

// BenchmarkAuthenticatedRead: GET /v1/test-helpers/clock with an API key.
func BenchmarkAuthenticatedRead(b *testing.B) {
	e := benchEnv(b)
	u := e.Server.URL + clockPath + "?environment=sandbox&merchantAccountId=" + url.QueryEscape(e.Tenant.Sandbox)
	newReq := func() *http.Request {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		return req
	}
	b.Run("serial", func(b *testing.B) {
		c := benchClient()
		b.ReportAllocs()
		for b.Loop() {
			doBench(b, c, newReq(), 200)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		c := benchClient()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				doBench(b, c, newReq(), 200)
			}
		})
	})
	b.Run("handler", func(b *testing.B) { benchHandler(b, e, newReq, 200) })
}

// benchHandler calls the server's handler directly (no TCP, no client): what the server itself
// costs and allocates per request.
func benchHandler(b *testing.B, e *testkit.Env, newReq func() *http.Request, want int) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		req := newReq()
		if req.Body == nil {
			req.Body = http.NoBody // as the server gives it
		}
		rec := httptest.NewRecorder()
		b.StartTimer()
		e.Remit.Handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body)
		}
	}
}

// BenchmarkIdempotentWrite: POST /v1/test-helpers/clock/advance with a new Idempotency-Key each
// time: the key's claim (one transaction) and the work with its remembered answer (another).
func BenchmarkIdempotentWrite(b *testing.B) {
	e := benchEnv(b)
	u := e.Server.URL + advancePath + "?environment=sandbox&merchantAccountId=" + url.QueryEscape(e.Tenant.Sandbox)
	var n atomic.Int64
	newReq := func() *http.Request {
		req, _ := http.NewRequest("POST", u, strings.NewReader(`{"seconds":1}`))
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "bench-"+strconv.FormatInt(n.Add(1), 10))
		return req
	}
	b.Run("serial", func(b *testing.B) {
		c := benchClient()
		b.ReportAllocs()
		for b.Loop() {
			doBench(b, c, newReq(), 201)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		c := benchClient()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				doBench(b, c, newReq(), 201)
			}
		})
	})
	b.Run("handler", func(b *testing.B) { benchHandler(b, e, newReq, 201) })
}
