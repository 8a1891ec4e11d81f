package telemetry

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The tracing a read adds (scenario (b) of the load harness, GET /v1/invoices/{id}): the server
// span from the request (its traceparent extracted), the merchant attribute, the span's end with
// its route, status and request ID, and the request's log line with requestId, trace_id and
// span_id, through the SDK that Setup builds (batch span processor, OTLP/HTTP exporter) to a
// receiver that discards. Allocations count the export's too (it runs beside the loop).
func BenchmarkReadRequest(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	log := Logger(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	r := httptest.NewRequest("GET", "/v1/invoices/in_01jf3x0000000000000000000", nil)
	r.Header.Set("Authorization", "Bearer sk_test_x")
	r.Header.Set("Accept", "application/json")
	read := func() {
		ctx, span := StartServer(r)
		ctx = WithRequestID(ctx, benchRequestID)
		SetMerchant(ctx, "ma_01jf3x0000000000000000000")
		EndServer(ctx, span, "GET", "GET /v1/invoices/{invoiceId}", 200)
		log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", "GET"),
			slog.String("route", "GET /v1/invoices/{invoiceId}"), slog.Int("status", 200), slog.Duration("duration", time.Millisecond))
	}
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			read()
		}
	})
	b.Run("on", func(b *testing.B) {
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
		b.Setenv("OTEL_TRACES_SAMPLER", "always_on")
		shutdown, err := Setup(context.Background())
		if err != nil || !On() {
			b.Fatal("tracing not on", err)
		}
		b.ReportAllocs()
		for b.Loop() {
			read()
		}
		if err := shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}

// benchRequestID is a variable, as a request's ID is: a constant would be put in a context without
// the allocation a real ID takes.
var benchRequestID = "req_01jf3x0000000000000000000"
