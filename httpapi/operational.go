package httpapi

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/pprof"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// mountOperational adds the routes outside the contract: health, readiness, metrics, the contract
// itself, the documentation (the API reference, the errors guide, the event catalog), GET / (302 to
// /docs), optional pprof, and the JSON 404 for everything else.
func (s *Server) mountOperational() {
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	// GET /readyz: 200 once the store answers and has every migration this binary knows; 503
	// while it is unreachable or migrations are pending (docs/operations.md, "Readiness").
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ready, err := s.eng.Health.Ready(r.Context())
		switch {
		case err != nil:
			s.log.WarnContext(r.Context(), "readiness: store unreachable", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "store": "unreachable"})
		case ready.MigrationsPending:
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "store": ready.Store, "migrations": "pending"})
		default:
			writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "store": ready.Store})
		}
	})
	if !s.cfg.MetricsElsewhere {
		s.mux.Handle("GET /metrics", s.metricsRoute())
	}
	s.mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(api.Document)
	})
	s.mux.HandleFunc("GET /docs/errors", s.errorsGuide)
	s.mountDocs()
	if s.cfg.EnablePprof {
		s.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		s.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		s.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	}
	// The server's own address, opened in a browser: the API reference. 302, not 308: a browser
	// keeps no permanent redirect, so / may become a page of its own later.
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/docs")
		w.WriteHeader(http.StatusFound)
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, remit.Errorf(remit.ENotFound, "No route %s %s. See /openapi.yaml for the API's routes.", r.Method, r.URL.Path))
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	writeRaw(w, status, body)
}

// ErrorGuide is one section of the errors guide.
type ErrorGuide struct {
	Code    remit.Code
	Status  string
	Meaning string
	Fix     string
}

// ErrorsGuide is the content of GET /docs/errors, one section per code; docsUrl links to #code.
var ErrorsGuide = []ErrorGuide{
	{remit.EBadRequest, "400, 405, 413, 415", "The request could not be read: malformed JSON, a body that is not a JSON object, a content type other than application/json, a Content-Encoding: gzip body that is not valid gzip (400); a method the path does not support (405, with an Allow header); a body over 1 MiB, decompressed (413); a Content-Encoding other than gzip or identity (415).", "Send one JSON object with Content-Type: application/json, plain or gzip-compressed (Content-Encoding: gzip), use a method listed in Allow, keep bodies under 1 MiB once decompressed."},
	{remit.EUnauthorized, "401", "The API key (Authorization: Bearer ...) or hosted token (?token=) is missing, malformed, unknown or revoked.", "Send a current key. Keys are shown once, at creation; create a new one with `remit apikey create` if it was lost."},
	{remit.EForbidden, "403", "The key is valid but cannot act here: it is not allowed in this environment, the merchant account is not its organization's or lives in another environment, a hosted token is for another resource, a sandbox-only action was tried in production, or tenantId names another organization.", "Check the environment and merchantAccountId query parameters against the key's organization."},
	{remit.ENotFound, "404", "The route does not exist, or a resource in the path or referenced from the body is not visible to this merchant account. details.field names where a body reference came from.", "Check the ID and that it belongs to the merchant account named in merchantAccountId."},
	{remit.EConflict, "409", "The request conflicts with the current state: an Idempotency-Key reused with another body or route (details.reason idempotency_key_reused) or still in flight (idempotency_key_in_flight); a duplicate caller-chosen ID; an action the resource's state does not allow (details.currentState); an amount larger than what is left.", "Use a new Idempotency-Key for a new request, wait for the first to finish, or read the resource and act on its current state."},
	{remit.EInvalid, "422", "The request parsed but breaks the contract or one of its rules. details.fields lists every problem: {field, location (body, query, path, header), reason, message}.", "Fix every listed field and retry; the same Idempotency-Key may be reused after a 422."},
	{remit.ERateLimited, "429", "The API key sent more requests than its rate allows. RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset describe the bucket; Retry-After says when to retry.", "Wait Retry-After seconds; spread requests out."},
	{remit.ENotImplemented, "501", "The capability is documented but this deployment does not offer it, for example provisioning sub-merchants in production or charging cards in production without a processor connector.", "Use the sandbox, or settle out of band where the route allows it."},
	{remit.ETaxProviderUnavailable, "503", "The deployment's tax provider (REMIT_TAX_PROVIDER=stripe: Stripe Tax) did not answer an action that needs its answer: an invoice's finalization, a credit note or a void that reverses tax. Nothing was applied: the invoice is still a draft (or still open), no number was taken, no event was emitted.", "Retry later with the same Idempotency-Key; the invoice keeps its state meanwhile. A draft's refresh does not fail this way: it keeps its previous tax and says so (taxStale)."},
	{remit.EInternal, "500, 503", "Remit failed while handling the request (503 when the store, or the payment processor a payment method's detach needs first, is unreachable). Nothing was applied unless the request had an Idempotency-Key and a retry replays a result. The message never contains internals.", "Retry with the same Idempotency-Key; report persistent failures with the requestId."},
}

var errorsGuideTmpl = template.Must(template.New("errors").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Remit errors guide</title>
<meta name="viewport" content="width=device-width, initial-scale=1">` + docsFavicon + `
<style>body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#222}main{max-width:50rem;margin:1.5rem auto;padding:0 1rem}
code{background:#f3f3f3;padding:0 .25rem}section{border-top:1px solid #ddd;padding:.5rem 0}h2{font-size:1.2rem}
` + docsNavStyle + `</style></head>
<body>` + docsNav + `<main><h1>Errors</h1>
<p>Every error answers <code>{"error": {"code", "message", "requestId", "docsUrl", "details"}}</code>. The status and the code always pair as below. Every response carries a <code>Request-Id</code> header equal to the requestId.</p>
{{range .}}<section id="{{.Code}}"><h2><code>{{.Code}}</code> — HTTP {{.Status}}</h2><p>{{.Meaning}}</p><p><strong>What to do:</strong> {{.Fix}}</p></section>
{{end}}</main></body></html>`))

func (s *Server) errorsGuide(w http.ResponseWriter, r *http.Request) {
	setDocsHeaders(w, "text/html; charset=utf-8")
	_ = errorsGuideTmpl.Execute(w, ErrorsGuide)
}
