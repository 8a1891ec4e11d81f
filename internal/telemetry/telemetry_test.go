package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// on turns tracing on for the test with an in-memory exporter and returns it.
func on(t testing.TB) *tracetest.InMemoryExporter {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	tr := tp.Tracer(Instrumentation)
	tracer.Store(&tr)
	t.Cleanup(func() { tracer.Store(nil) })
	return exp
}

// A request's path through what the rest of Remit calls, with tracing off: no allocation at all.
func offPath(ctx context.Context) {
	ctx, span := Start(ctx, "App.Write", trace.SpanKindInternal)
	cctx, child := StartChild(ctx, "store.tx")
	Strings(child, "db.system.name", "sqlite")
	SetString(cctx, "remit.merchant_account_id", "ma_1")
	SetInt(child, "remit.attempt", 1)
	Keep(cctx, "evt_1")
	_ = Resume(ctx, "evt_1")
	End(child, nil)
	End(span, nil)
}

func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { offPath(ctx) }); n != 0 {
		t.Fatalf("tracing off: %v allocations per request path, want 0", n)
	}
	rctx := WithRequestID(ctx, "req_1")
	r := httptest.NewRequest("GET", "/v1/invoices/in_1", nil)
	if n := testing.AllocsPerRun(1000, func() {
		sctx, span := StartServer(r)
		SetMerchant(rctx, "ma_1")
		EndServer(sctx, span, "GET", "GET /v1/invoices/{invoiceId}", 200)
	}); n != 0 {
		t.Fatalf("tracing off: %v allocations per server span, want 0", n)
	}
	if On() {
		t.Fatal("tracing is on without Setup")
	}
}

func TestWantedReadsTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
		err  bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, false},
	} {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED",
			"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
			t.Setenv(k, c.env[k])
		}
		got, err := Wanted()
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%v: Wanted() = %v, %v", c.env, got, err)
		}
	}
}

// The client transport sends the span of each request as traceparent, and nothing while off.
func TestTransportSendsTraceparent(t *testing.T) {
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Get("traceparent") }))
	defer srv.Close()
	client := &http.Client{Transport: Transport(nil)}
	get := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	get(context.Background())
	if seen != "" {
		t.Fatalf("tracing off sent traceparent %q", seen)
	}
	exp := on(t)
	ctx, parent := Start(context.Background(), "webhook.deliver", trace.SpanKindInternal)
	get(ctx)
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the HTTP client span and its parent", len(spans))
	}
	client0 := spans[0]
	want := "00-" + client0.SpanContext.TraceID().String() + "-" + client0.SpanContext.SpanID().String() + "-01"
	if seen != want || client0.Parent.SpanID() != parent.SpanContext().SpanID() || client0.SpanKind != trace.SpanKindClient {
		t.Fatalf("traceparent %q, want %q of the client span under its parent", seen, want)
	}
}

// A kept span is resumed as the parent of later work; the memory forgets the oldest first.
func TestKeepResume(t *testing.T) {
	on(t)
	ctx, span := Start(context.Background(), "store.tx", trace.SpanKindInternal)
	defer span.End()
	Keep(ctx, "evt_a")
	if got := trace.SpanContextFromContext(Resume(context.Background(), "evt_a")); got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Fatalf("resumed %v, want the kept span as a remote parent", got)
	}
	if got := trace.SpanContextFromContext(Resume(context.Background(), "evt_unknown")); got.IsValid() {
		t.Fatalf("an unknown ID resumed %v", got)
	}
	c := newCarry(2)
	sc := span.SpanContext()
	c.keep("a", sc)
	c.keep("b", sc)
	c.keep("c", sc)
	if _, ok := c.spans["a"]; ok || len(c.spans) != 2 {
		t.Fatalf("the memory holds %v, want b and c", c.spans)
	}
}

func TestLogHandlerNamesRequestAndTrace(t *testing.T) {
	on(t)
	var lines []map[string]any
	h := &capture{lines: &lines}
	log := Logger(slog.New(h))
	if Logger(log) != log {
		t.Fatal("Logger wrapped an already wrapped logger again")
	}
	ctx, span := Start(WithRequestID(context.Background(), "req_1"), "x", trace.SpanKindServer)
	defer span.End()
	log.InfoContext(ctx, "inside")
	log.Info("outside")
	if l := lines[0]; l["requestId"] != "req_1" || l["trace_id"] != span.SpanContext().TraceID().String() || l["span_id"] != span.SpanContext().SpanID().String() {
		t.Fatalf("line with the request's context: %v", l)
	}
	if l := lines[1]; l["requestId"] != nil || l["trace_id"] != nil {
		t.Fatalf("line without a context: %v", l)
	}
}

type capture struct{ lines *[]map[string]any }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
	*c.lines = append(*c.lines, m)
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

// The cost of a write's spans (App.Write with a store transaction in it), off and on (spans made
// and ended, not exported).
func BenchmarkWriteSpans(b *testing.B) {
	ctx := WithRequestID(context.Background(), "req_1")
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			offPath(ctx)
		}
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		tr := tp.Tracer(Instrumentation)
		tracer.Store(&tr)
		defer tracer.Store(nil)
		b.ReportAllocs()
		for b.Loop() {
			offPath(ctx)
		}
	})
}

// The server span continues the caller's traceparent and sees its baggage, its headers read by
// their canonical names (headerCarrier), and a span without them is a root.
func TestStartServerContinuesTraceparent(t *testing.T) {
	exp := on(t)
	r := httptest.NewRequest("GET", "/v1/invoices/in_1", nil)
	r.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	r.Header.Set("tracestate", "vendor=x")
	r.Header.Set("baggage", "tenant=t1")
	ctx, span := StartServer(r)
	if got := baggage.FromContext(ctx).Member("tenant").Value(); got != "t1" {
		t.Errorf("baggage tenant = %q, want t1", got)
	}
	ctx = WithRequestID(ctx, "req_1")
	SetMerchant(ctx, "ma_1")
	EndServer(ctx, span, "GET", "GET /v1/invoices/{invoiceId}", 200)
	rctx, root := StartServer(httptest.NewRequest("GET", "/v1/invoices/in_2", nil))
	EndServer(rctx, root, "GET", "GET /v1/invoices/{invoiceId}", 200)
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" ||
		!s.Parent.IsRemote() || s.SpanContext.TraceState().Get("vendor") != "x" || s.Name != "GET /v1/invoices/{invoiceId}" {
		t.Fatalf("server span %v (parent %v, state %v), want the caller's trace under its span", s.SpanContext, s.Parent, s.SpanContext.TraceState())
	}
	if a := attrs(s.Attributes); a["remit.request_id"] != "req_1" || a["remit.merchant_account_id"] != "ma_1" || a["http.route"] != "/v1/invoices/{invoiceId}" ||
		a["http.response.status_code"] != "200" || a["url.path"] != "/v1/invoices/in_1" || a["http.request.method"] != "GET" {
		t.Fatalf("server span attributes %v", a)
	}
	if a := attrs(spans[1].Attributes); spans[1].Parent.IsValid() || a["remit.merchant_account_id"] != "" || a["remit.request_id"] != "" {
		t.Fatalf("a request without traceparent, request ID or merchant: parent %v, attributes %v", spans[1].Parent, a)
	}
	if got := canonicalKey("x-custom-header"); got != "X-Custom-Header" {
		t.Fatalf("canonicalKey = %q", got)
	}
}

func attrs(kv []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, a := range kv {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}
