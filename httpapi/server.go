// Package httpapi is Remit's HTTP edge. Routes come from api/openapi.yaml: every operation of the
// document is mounted, validated against the document and handed to the handler registered under
// its operationId. Common request handling (request ID, auth, rate limit, scope, body limits,
// validation, idempotency, transaction, envelope) is written once, in pipeline.go; handlers only
// decode, call package app and return the resource.
package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/ratelimit"
)

// Config configures the edge.
type Config struct {
	PublicURL    string // base of docsUrl and hosted URLs, without a trailing slash
	MaxBodyBytes int64  // 1 MiB by default
	EnablePprof  bool
	// DisabledOperations are operationIds this deployment does not offer: they answer 501
	// not_implemented after auth and validation, like an operation without a handler.
	DisabledOperations []string
	// MetricsToken, when set, is the bearer token GET /metrics asks for (401 without it).
	MetricsToken string
	// MetricsElsewhere leaves GET /metrics off the API's routes: it is served on its own address
	// (MetricsHandler).
	MetricsElsewhere bool
}

// Server is the HTTP API. It implements http.Handler.
type Server struct {
	eng     Engine
	cfg     Config
	log     *slog.Logger
	limiter ratelimit.Limiter
	spec    *openapi3.T
	mux     *http.ServeMux
	ops     map[string]*operation
	metrics *metrics
}

// HandlerFunc handles one operation: it decodes what it needs from r, calls the engine and returns
// the resource to send as data. The success status comes from the document.
type HandlerFunc func(ctx context.Context, r *Request) (any, error)

// BodyCheck applies an operation's own rules on its body alone (the ones the engine runs on the
// same input) to a body that failed the contract, so one 422 lists the problems of both kinds. It
// reads the body leniently (Request.DecodeLenient): fields that did not decode are zero.
type BodyCheck func(r *Request) []remit.FieldError

// PrepareFunc runs before a write operation's transaction, for work that must not hold the
// store's writer, such as a network lookup. It calls the engine and returns the context the
// handler then runs with (the engine reads what it prepared from there).
type PrepareFunc func(ctx context.Context, r *Request) context.Context

// authKind is how an operation authenticates, read from its security requirement.
type authKind int

const (
	authBearer authKind = iota // Authorization: Bearer <API key>
	authPortal                 // ?token=<hosted token>, checked by the portal handler
	authNone                   // the path carries the credential (claims)
)

type operation struct {
	id         string
	method     string
	path       string // the document's template
	route      *routers.Route
	auth       authKind
	scoped     bool // takes environment and merchantAccountId
	mutating   bool // POST/PUT/PATCH/DELETE: runs in one transaction, honours Idempotency-Key
	success    int
	handler    HandlerFunc
	prepare    PrepareFunc         // optional; writes only
	check      BodyCheck           // optional: the operation's own rules on its body, for one-pass 422s
	bodyIdem   bool                // the body has an idempotencyKey field that stands in for the header
	bodySchema *openapi3.SchemaRef // the JSON body's schema, if any
	query      map[string]bool     // the query parameters it declares: any other is refused (422)
	endings    map[string]string   // the fixed endings of path parameters ({dataset}.csv), by parameter
	// judgedEach: the body's arrays whose items are each judged by another operation's checks
	// (api.JudgedEach: a batch's events), which the body's own text check leaves to them.
	judgedEach []string
	// foreignBody: the body is another system's, verified by its signature (a processor's
	// webhook), whose text Remit neither stores nor shows as it is: the text rule does not apply.
	foreignBody bool
}

// New builds the server: it mounts every operation of the contract. An operation without a
// registered handler answers 501 not_implemented (after auth and validation); a handler for an
// operation the document lacks is a startup error.
func New(eng Engine, log *slog.Logger, limiter ratelimit.Limiter, cfg Config) (*Server, error) {
	spec, err := api.Enforced()
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.yaml: %w", err)
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	s := &Server{eng: eng, cfg: cfg, log: log, limiter: limiter, spec: spec, mux: http.NewServeMux(), ops: map[string]*operation{}, metrics: newMetrics()}
	s.metrics.watchVerification(eng.Verification)
	s.metrics.watchJobs(eng.Jobs)
	s.metrics.watchOperations(eng.Operations, log)
	handlers, err := s.handlers()
	if err != nil {
		return nil, err
	}
	preparers, checks := s.preparers(), s.bodyChecks()
	disabled := map[string]bool{}
	for _, id := range cfg.DisabledOperations {
		disabled[id] = true
	}
	fallbacks := map[string][]string{} // path → its methods, for the 405 answers mounted last
	for _, path := range spec.Paths.InMatchingOrder() {
		item := spec.Paths.Value(path)
		var allow []string
		for method, op := range item.Operations() {
			o, err := s.newOperation(path, item, method, op)
			if err != nil {
				return nil, err
			}
			if h, ok := handlers[o.id]; ok {
				if !disabled[o.id] {
					o.handler = h
				}
				delete(handlers, o.id)
			}
			o.check = checks[o.id]
			delete(checks, o.id)
			if p, ok := preparers[o.id]; ok {
				if !o.mutating {
					return nil, fmt.Errorf("a prepare step is registered for %q, which is not a write", o.id)
				}
				o.prepare = p
				delete(preparers, o.id)
			}
			s.ops[o.id] = o
			allow = append(allow, method)
			s.mux.Handle(method+" "+muxPattern(path), s.serveOperation(o))
		}
		sort.Strings(allow)
		fallbacks[path] = allow
	}
	for path, allow := range fallbacks {
		s.mountMethodNotAllowed(path, allow)
	}
	for id := range handlers {
		return nil, fmt.Errorf("handler registered for %q, which api/openapi.yaml does not define", id)
	}
	for id := range checks {
		return nil, fmt.Errorf("body check registered for %q, which api/openapi.yaml does not define", id)
	}
	for id := range preparers {
		return nil, fmt.Errorf("prepare step registered for %q, which api/openapi.yaml does not define", id)
	}
	s.mountOperational()
	return s, nil
}

// mountMethodNotAllowed answers the methods of path that no operation has with 405. A path whose
// catch-all pattern would overlap another path's operation (POST /v1/usage-events/batch beside
// GET /v1/usage-events/{eventId}: neither pattern is more specific, which ServeMux refuses) gets
// one pattern per method instead, for the methods no other operation serves there.
func (s *Server) mountMethodNotAllowed(path string, allow []string) {
	h := s.methodNotAllowed(allow)
	if tryHandle(s.mux, muxPattern(path), h) {
		return
	}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		probe := &http.Request{Method: m, URL: &url.URL{Path: path}, Host: "remit"}
		_, pattern := s.mux.Handler(probe) // an operation of another path that serves m here
		if slices.Contains(allow, m) || strings.HasPrefix(pattern, m+" ") || (m == "HEAD" && strings.HasPrefix(pattern, "GET ")) {
			continue
		}
		tryHandle(s.mux, m+" "+muxPattern(path), h)
	}
}

// tryHandle registers pattern on mux, reporting false when it conflicts with a registered one.
func tryHandle(mux *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mux.Handle(pattern, h)
	return true
}

// muxPattern converts a document path to a ServeMux pattern; a trailing {tail} matches the rest
// of the path (the customer portal's prefix routing). A segment that is a parameter and a fixed
// ending ({dataset}.csv), which a ServeMux wildcard cannot be, matches the whole segment: the
// operation takes the ending off (pathEndings).
func muxPattern(path string) string {
	if strings.HasSuffix(path, "/{tail}") {
		return strings.TrimSuffix(path, "{tail}") + "{tail...}"
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if name, _, ok := endedParam(seg); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

// endedParam reads a path segment that is a parameter followed by a fixed ending ("{dataset}.csv":
// dataset, ".csv").
func endedParam(seg string) (name, ending string, ok bool) {
	if !strings.HasPrefix(seg, "{") {
		return "", "", false
	}
	name, ending, ok = strings.Cut(seg[1:], "}")
	return name, ending, ok && ending != "" && !strings.ContainsAny(ending, "{}")
}

// pathEndings are the fixed endings of a path's parameters, by parameter (see muxPattern).
func pathEndings(path string) map[string]string {
	var out map[string]string
	for _, seg := range strings.Split(path, "/") {
		if name, ending, ok := endedParam(seg); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = ending
		}
	}
	return out
}

func (s *Server) newOperation(path string, item *openapi3.PathItem, method string, op *openapi3.Operation) (*operation, error) {
	if op.OperationID == "" {
		return nil, fmt.Errorf("%s %s has no operationId", method, path)
	}
	o := &operation{
		id: op.OperationID, method: method, path: path,
		route:       &routers.Route{Spec: s.spec, Path: path, PathItem: item, Method: method, Operation: op},
		mutating:    isMutating(method, op),
		success:     http.StatusOK,
		foreignBody: strings.HasPrefix(path, "/processor-webhooks/"),
		endings:     pathEndings(path),
	}
	sec := s.spec.Security
	if op.Security != nil {
		sec = *op.Security
	}
	switch {
	case len(sec) == 0:
		o.auth = authNone
	case hasScheme(sec, "portalToken"):
		o.auth = authPortal
	default:
		o.auth = authBearer
	}
	o.query = map[string]bool{}
	for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
		if p.Value != nil && p.Value.In == "query" {
			o.query[p.Value.Name] = true
			o.scoped = o.scoped || p.Value.Name == "environment"
		}
	}
	codes := make([]int, 0)
	for code := range op.Responses.Map() {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
			codes = append(codes, n)
		}
	}
	sort.Ints(codes)
	if len(codes) > 0 {
		o.success = codes[0]
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			_, o.bodyIdem = mt.Schema.Value.Properties["idempotencyKey"]
			o.bodySchema = mt.Schema
			for name, ps := range mt.Schema.Value.Properties {
				if ps.Value != nil && api.JudgedEach(ps.Value) {
					o.judgedEach = append(o.judgedEach, name)
				}
			}
		}
	}
	return o, nil
}

func hasScheme(reqs openapi3.SecurityRequirements, name string) bool {
	for _, r := range reqs {
		if _, ok := r[name]; ok {
			return true
		}
	}
	return false
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.eng.Foreground != nil {
		defer s.eng.Foreground.Serving()()
	}
	s.withRequestID(s.mux).ServeHTTP(w, r)
}

// Mount serves prefix and everything under it with h, beside the API's routes (the dashboard).
func (s *Server) Mount(prefix string, h http.Handler) {
	s.mux.Handle(prefix, h)
	s.mux.Handle(prefix+"/", h)
}

// Operations lists the mounted operation IDs and whether each has a handler (for tests and docs).
func (s *Server) Operations() map[string]bool {
	out := map[string]bool{}
	for id, o := range s.ops {
		out[id] = o.handler != nil
	}
	return out
}

// isMutating reports whether an operation is a write (one transaction, Idempotency-Key): every
// POST, PUT, PATCH and DELETE but those the contract marks x-remit-read-only (a preview, which the
// engine runs in a transaction it rolls back).
func isMutating(method string, op *openapi3.Operation) bool {
	if ro, _ := op.Extensions["x-remit-read-only"].(bool); ro {
		return false
	}
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch || method == http.MethodDelete
}
