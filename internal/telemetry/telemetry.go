// Package telemetry is Remit's tracing: OpenTelemetry through the official Go SDK, exported over
// OTLP/HTTP, configured by the standard OTEL_* variables (docs/operations.md, "Traces"). It is
// off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set or
// OTEL_TRACES_EXPORTER=otlp; while it is off every function here returns at once, with no span, no
// allocation and no lock, so that tracing that is off costs nothing.
//
// The rest of Remit uses only this package's functions: the edge starts a server span per request
// (StartServer, EndServer), the engine and the store start child spans (Start, StartChild, End),
// outgoing HTTP carries the W3C traceparent header (Transport), work queued by a write carries the
// write's trace to the worker that does it later (Keep, Resume), and the log handler puts the
// trace on every log line (LogHandler). The rules package remit and the store's API know nothing of
// OpenTelemetry.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Instrumentation is the name of Remit's tracer (the instrumentation scope of its spans).
const Instrumentation = "github.com/remit-billing/remit"

// tracer is the tracer while tracing is on, nil while it is off.
var tracer atomic.Pointer[trace.Tracer]

// propagator reads and writes the W3C traceparent and baggage headers.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// noSpan is what the start functions return while tracing is off or when they start nothing.
var noSpan = trace.SpanFromContext(context.Background())

// On reports whether tracing is on in this process.
func On() bool { return tracer.Load() != nil }

// Wanted reports whether the OTEL_* environment asks for traces, and an error for a setting Remit
// cannot honour (another exporter or protocol than OTLP over HTTP with protobuf).
func Wanted() (bool, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	on := endpoint
	switch exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
	case "otlp":
		on = true
	case "none":
		return false, nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: Remit exports traces with otlp only (or none)", exp)
	}
	if !on {
		return false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(name); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: Remit sends OTLP over HTTP with protobuf (http/protobuf) only", name, p)
			}
			break
		}
	}
	return true, nil
}

// Setup turns tracing on when the OTEL_* environment asks for it (Wanted): an OTLP/HTTP exporter
// (endpoint, headers, timeout, compression and certificates from OTEL_EXPORTER_OTLP_*), a batch
// span processor (OTEL_BSP_*), the sampler of OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// (parent-based, always on, by default) and the resource of OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES (service.name remit by default); the SDK reads every one of them. The
// returned function flushes the spans not yet sent and turns tracing off; call it before the
// process exits. Without the variables Setup does nothing and tracing stays off.
func Setup(ctx context.Context) (shutdown func(context.Context) error, err error) {
	nothing := func(context.Context) error { return nil }
	want, err := Wanted()
	if err != nil || !want {
		return nothing, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nothing, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "remit")),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nothing, fmt.Errorf("trace resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	t := tp.Tracer(Instrumentation)
	tracer.Store(&t)
	return func(ctx context.Context) error {
		tracer.Store(nil)
		return tp.Shutdown(ctx)
	}, nil
}

// Start starts a span named name, a child of the span in ctx or the root of a new trace, while
// tracing is on; while it is off it returns ctx and a span that records nothing.
func Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, noSpan
	}
	return (*t).Start(ctx, name, trace.WithSpanKind(kind))
}

// StartChild starts a span only as a part of a traced operation: when ctx carries a span that
// records. Work that runs on its own (a worker's idle poll) starts no trace through it.
func StartChild(ctx context.Context, name string) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noSpan
	}
	return (*t).Start(ctx, name)
}

// End ends span, marked failed with err's message when err is not nil.
func End(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// SetString sets a string attribute on the span of ctx, when it records.
func SetString(ctx context.Context, key, value string) {
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		s.SetAttributes(attribute.String(key, value))
	}
}

// SetInt sets an integer attribute on span, when it records.
func SetInt(span trace.Span, key string, value int) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int(key, value))
	}
}

// Strings sets string attributes on span, when it records: key, value, key, value...
func Strings(span trace.Span, kv ...string) {
	if !span.IsRecording() {
		return
	}
	for i := 0; i+1 < len(kv); i += 2 {
		span.SetAttributes(attribute.String(kv[i], kv[i+1]))
	}
}
