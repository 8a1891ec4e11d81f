package telemetry_test

import (
	"bufio"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/remit-billing/remit/internal/testkit"
)

// span is one span the OTLP receiver decoded.
type span struct {
	TraceID, SpanID, Parent, Name string
	Kind                          tracepb.Span_SpanKind
	Attrs                         map[string]string
	Service                       string
}

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export request as the collector's
// protobuf (ExportTraceServiceRequest) and keeps the spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
	bad   []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				rc.fail("gzip: " + err.Error())
				w.WriteHeader(400)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			rc.fail(fmt.Sprintf("%s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		} else if err := proto.Unmarshal(raw, &req); err != nil {
			rc.fail("decode: " + err.Error())
			w.WriteHeader(400)
			return
		}
		rc.keep(&req)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *otlpReceiver) fail(s string) { rc.mu.Lock(); rc.bad = append(rc.bad, s); rc.mu.Unlock() }

func (rc *otlpReceiver) keep(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, a := range s.Attributes {
					v := a.GetValue()
					switch {
					case v.GetStringValue() != "":
						attrs[a.Key] = v.GetStringValue()
					default:
						attrs[a.Key] = fmt.Sprint(v.GetIntValue())
					}
				}
				rc.spans = append(rc.spans, span{TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Parent: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Kind: s.Kind, Attrs: attrs, Service: service})
			}
		}
	}
}

// trace is the spans received so far of one trace.
func (rc *otlpReceiver) trace(id string) []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []span
	for _, s := range rc.spans {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}

// TestOneTraceFromRequestToWebhook runs `serve` with tracing on, exporting to a receiver that
// decodes OTLP's protobuf, makes an invoice that is paid at finalization with a webhook endpoint
// subscribed to invoice.paid, and finds one trace: the finalize request's server span (a child of
// the caller's traceparent) → App.Write → the store's transactions → the processor's charge, and
// the webhook delivery the worker made afterwards, whose HTTP span is the traceparent the endpoint
// received. The server's log lines of that request carry the same trace_id.
func TestOneTraceFromRequestToWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testkit.BuildRemit(t)
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) { oneTrace(t, bin, testkit.MigratedStoreURL(t, s)) })
	}
}

func oneTrace(t *testing.T, bin, dbURL string) {
	otlp := startOTLPReceiver(t)
	type delivery struct{ eventType, traceparent string }
	var mu sync.Mutex
	var got []delivery
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		got = append(got, delivery{ev.Type, r.Header.Get("traceparent")})
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)

	env := append(os.Environ(), "REMIT_DATABASE_URL="+dbURL, "REMIT_LOG_LEVEL=debug", "REMIT_SCHEDULER_INTERVAL=100ms")
	apiKey, accounts := testkit.BootstrapTenant(t, bin, env, "Trace Test")
	env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, "OTEL_SERVICE_NAME=remit-trace-test",
		"OTEL_TRACES_SAMPLER=always_on", "OTEL_BSP_SCHEDULE_DELAY=50")
	p := testkit.StartServe(t, bin, env, testkit.FreeAddr(t))
	call := func(method, path string, body any, header ...string) (map[string]any, http.Header) {
		t.Helper()
		return p.Call(t, apiKey, accounts["sandbox"], method, path, body, header...)
	}
	call("POST", "/v1/webhook-endpoints", map[string]any{"url": hook.URL, "enabledEvents": []string{"invoice.paid"}})
	call("POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item", "priceType": "fixed_one_time",
		"currency": "USD", "unitAmount": 100})
	call("POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "Customer One"})
	call("POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1", "customerId": "c1", "currency": "USD",
		"collectionMethod": "charge_automatically"})
	setup, _ := call("POST", "/v1/customers/c1/payment-method-setup", map[string]any{"billingAccountId": "ba-c1", "setAsDefault": true})
	su, err := url.Parse(setup["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	p.Call(t, "", "", "PUT", su.RequestURI()+"&paymentMethod=pm_card_visa", nil) // the portal: its token only
	draft, _ := call("POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "item", "unitAmount": 2500}}})

	// The caller's own trace: the server continues it.
	traceID, callerSpan := randomHex(16), randomHex(8)
	inv, h := call("POST", "/v1/invoices/"+draft["invoiceId"].(string)+"/finalize", map[string]any{},
		"traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	if inv["status"] != "paid" {
		t.Fatalf("finalize answered %v, want a paid invoice", inv["status"])
	}
	requestID := h.Get("Request-Id")

	// The endpoint receives invoice.paid with a traceparent of that trace.
	var seen string
	testkit.WaitFor(t, 30*time.Second, "invoice.paid delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range got {
			if d.eventType == "invoice.paid" {
				seen = d.traceparent
				return true
			}
		}
		return false
	})
	parts := strings.Split(seen, "-")
	if len(parts) != 4 || parts[0] != "00" || parts[1] != traceID || parts[3] != "01" {
		t.Fatalf("the webhook's traceparent is %q, want one of trace %s, sampled", seen, traceID)
	}
	deliverySpan := parts[2]

	// One trace holds every step, each span's parent in it, the server span under the caller's.
	names := []string{"POST /v1/invoices/{invoiceId}/finalize", "App.Write", "store.tx", "processor.charge", "webhook.deliver"}
	var spans []span
	testkit.WaitFor(t, 30*time.Second, "the trace's spans exported", func() bool {
		spans = otlp.trace(traceID)
		have := map[string]bool{}
		for _, s := range spans {
			have[s.Name] = true
			have["id:"+s.SpanID] = true
		}
		for _, n := range names {
			if !have[n] {
				return false
			}
		}
		return have["id:"+deliverySpan]
	})
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var server span
	for _, s := range spans {
		if s.Service != "remit-trace-test" {
			t.Errorf("span %s of service %q, want OTEL_SERVICE_NAME's remit-trace-test", s.Name, s.Service)
		}
		if s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Attrs["remit.request_id"] == requestID {
			server = s
		}
	}
	if server.Parent != callerSpan || server.Name != names[0] || server.Attrs["http.route"] != "/v1/invoices/{invoiceId}/finalize" ||
		server.Attrs["http.response.status_code"] != "200" || server.Attrs["remit.merchant_account_id"] != accounts["sandbox"] {
		t.Fatalf("server span %+v, want the finalize route's, a child of the caller's span %s", server, callerSpan)
	}
	// Every span descends from the server span: the delivery too, through the write that emitted
	// invoice.paid.
	under := func(s span) bool {
		for i := 0; i < len(spans) && s.SpanID != server.SpanID; i++ {
			p, ok := byID[s.Parent]
			if !ok {
				return false
			}
			s = p
		}
		return s.SpanID == server.SpanID
	}
	for _, n := range names[1:] {
		found := false
		for _, s := range spans {
			if s.Name == n && under(s) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s span under the server span in trace %s: %+v", n, traceID, spans)
		}
	}
	if d := byID[deliverySpan]; d.Kind != tracepb.Span_SPAN_KIND_CLIENT || !under(d) || byID[d.Parent].Name != "webhook.deliver" {
		t.Errorf("the traceparent's span %+v is not the delivery's HTTP call under webhook.deliver", d)
	}
	if charge := named(spans, "processor.charge"); charge.Attrs["remit.processor"] != "sandbox" || charge.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("processor span %+v", charge)
	}
	if tx := named(spans, "store.tx"); tx.Attrs["db.system.name"] == "" {
		t.Errorf("store span %+v names no db.system.name", tx)
	}
	otlp.mu.Lock()
	if len(otlp.bad) > 0 {
		t.Errorf("the receiver refused exports: %v", otlp.bad)
	}
	otlp.mu.Unlock()

	// The request's log lines carry its trace.
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(p.Stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["requestId"] != requestID {
			continue
		}
		lines++
		if line["trace_id"] != traceID || line["span_id"] == nil || line["span_id"] == "" {
			t.Errorf("log line of the request without its trace: %s", sc.Bytes())
		}
	}
	if lines == 0 {
		t.Fatalf("no log line names requestId %s:\n%s", requestID, p.Stderr.String())
	}
}

func named(spans []span, name string) span {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return span{}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
