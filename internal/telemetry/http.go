package telemetry

import (
	"context"
	"net/http"
	"net/textproto"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// StartServer starts the server span of an incoming HTTP request, continuing the trace its
// traceparent header names (W3C Trace Context), if any. Its name and route are set when it ends
// (EndServer), once the router has matched the request.
func StartServer(r *http.Request) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil {
		return r.Context(), noSpan
	}
	ctx := propagator.Extract(r.Context(), headerCarrier(r.Header))
	return (*t).Start(ctx, r.Method, serverKind, trace.WithAttributes(
		attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
}

// serverKind is the option of every server span, made once.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// headerCarrier is propagation.HeaderCarrier for a request's headers, whose keys net/http has put
// in canonical form, without canonicalizing the propagators' own lower-case names on each lookup
// (http.Header.Get makes a new "Traceparent" string each time): the headers the W3C propagators
// read (traceparent, tracestate, baggage) are looked up by their canonical names directly.
type headerCarrier http.Header

func canonicalKey(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return textproto.CanonicalMIMEHeaderKey(key)
}

func (hc headerCarrier) Get(key string) string {
	if v := hc[canonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (hc headerCarrier) Values(key string) []string { return hc[canonicalKey(key)] }

func (hc headerCarrier) Set(key, value string) { http.Header(hc).Set(key, value) }

func (hc headerCarrier) Keys() []string { return propagation.HeaderCarrier(hc).Keys() }

// EndServer names the server span after its route template ("POST /v1/invoices/{invoiceId}/finalize"),
// records the answer's status, the request's ID and its merchant account (WithRequestID and
// SetMerchant on ctx), and ends it. A 5xx answer marks it failed.
func EndServer(ctx context.Context, span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		return
	}
	name, path := route, route
	if m, p, ok := strings.Cut(route, " "); ok && m == method {
		path = p
	} else {
		name = method + " " + route
	}
	span.SetName(name)
	var id, merchant string
	if r, ok := ctx.Value(requestIDKey{}).(*request); ok {
		id, merchant = r.id, r.merchant
	}
	attrs := [4]attribute.KeyValue{attribute.String("http.route", path), attribute.Int("http.response.status_code", status)}
	n := 2
	if id != "" {
		attrs[n], n = attribute.String("remit.request_id", id), n+1
	}
	if merchant != "" {
		attrs[n], n = attribute.String("remit.merchant_account_id", merchant), n+1
	}
	span.SetAttributes(attrs[:n]...) // one call: one lock and one growth of the span's attributes
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// Transport wraps base (http.DefaultTransport when nil) so that each request made through it while
// tracing is on is a client span of the request's context, and carries that span as its
// traceparent header: the receiver (a webhook endpoint, Stripe) can join the trace.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := tracer.Load()
	if tr == nil {
		return t.base.RoundTrip(req)
	}
	ctx, span := (*tr).Start(req.Context(), "HTTP "+req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("http.request.method", req.Method), attribute.String("server.address", req.URL.Hostname()),
		attribute.String("url.path", req.URL.Path)))
	req = req.Clone(ctx) // a RoundTripper must not change the caller's request
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	res, err := t.base.RoundTrip(req)
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	default:
		span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
		if res.StatusCode >= 400 {
			span.SetStatus(codes.Error, http.StatusText(res.StatusCode))
		}
	}
	span.End()
	return res, err
}

// CloseIdleConnections passes the call on to the wrapped transport.
func (t transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
