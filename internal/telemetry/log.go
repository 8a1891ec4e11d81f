package telemetry

import (
	"context"
	"encoding/hex"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

type requestIDKey struct{}

// request is what a request's context carries for its log lines and its server span: its ID, and
// the merchant account it acts on once the pipeline has resolved it (SetMerchant), which its
// server span names when it ends (EndServer).
type request struct{ id, merchant string }

// WithRequestID returns ctx carrying the request's ID (req_…), which every log line written with
// the context then names (LogHandler).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, &request{id: id})
}

// RequestID is the request ID ctx carries, or "".
func RequestID(ctx context.Context) string {
	if r, ok := ctx.Value(requestIDKey{}).(*request); ok {
		return r.id
	}
	return ""
}

// SetMerchant records the merchant account a request acts on: its server span names it
// (remit.merchant_account_id) when it ends, set with the span's other closing attributes in one
// call. Outside a request (no WithRequestID) it is set on the span of ctx at once, when it records.
// Call it on the request's own goroutine.
func SetMerchant(ctx context.Context, id string) {
	if r, ok := ctx.Value(requestIDKey{}).(*request); ok {
		r.merchant = id
		return
	}
	SetString(ctx, "remit.merchant_account_id", id)
}

// LogHandler wraps h so that every line logged with a context names what the context carries: the
// request's ID (requestId) and, while tracing is on, the trace and span it runs in (trace_id,
// span_id, hexadecimal as in traceparent), so that a line found in the logs leads to its trace and
// a trace to its lines.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(logHandler); ok {
		return h
	}
	return logHandler{h}
}

// Logger is l with its handler wrapped by LogHandler (l itself when it already is).
func Logger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(logHandler); ok {
		return l
	}
	return slog.New(logHandler{l.Handler()})
}

type logHandler struct{ slog.Handler }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if id := RequestID(ctx); id != "" {
			r.AddAttrs(slog.String("requestId", id))
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			ids := traceIDs(sc)
			r.AddAttrs(slog.String("trace_id", ids[:32]), slog.String("span_id", ids[32:]))
		}
	}
	return h.Handler.Handle(ctx, r)
}

// traceIDs is sc's trace ID and span ID in hexadecimal, one after the other in one string (32 and
// 16 digits): one allocation for both instead of TraceID().String() and SpanID().String()'s own.
func traceIDs(sc trace.SpanContext) string {
	var b [48]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(b[:32], tid[:])
	hex.Encode(b[32:], sid[:])
	return string(b[:])
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.Handler.WithGroup(name)} }
