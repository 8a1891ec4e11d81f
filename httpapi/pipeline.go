package httpapi

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"mime"
	"net/http"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// Request is what a handler sees: the authenticated caller, its scope, the path and query
// parameters and the raw (already validated) body.
type Request struct {
	HTTP      *http.Request
	ID        string
	Principal remit.Principal
	Scope     remit.Scope
	Merchant  remit.MerchantAccount // the acting merchant account (scoped operations)
	Body      []byte
	problems  []remit.FieldError // found by the pipeline beyond the contract; merged into the answer
}

// Path returns a path parameter.
func (r *Request) Path(name string) string { return r.HTTP.PathValue(name) }

// Query returns a query parameter.
func (r *Request) Query(name string) string { return r.HTTP.URL.Query().Get(name) }

// Decode unmarshals the validated JSON body into v (usually a type generated from the contract).
func (r *Request) Decode(v any) error {
	if len(r.Body) == 0 {
		return nil
	}
	err := json.Unmarshal(r.Body, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		// The contract (and the idempotency comparison) read 60.0 and 6e1 as the integer 60;
		// encoding/json does not, so respell integral numbers and decode again.
		if body, ok := integralNumbers(r.Body); ok {
			err = json.Unmarshal(body, v)
		}
	}
	if err != nil {
		return remit.Errorf(remit.EBadRequest, "The body could not be decoded: %s.", jsonProblem(err))
	}
	return nil
}

// DecodeLenient decodes what it can of a body that may break the contract (a value of the wrong
// type is left zero); for the operation's body rules (BodyCheck), never for its work.
func (r *Request) DecodeLenient(v any) {
	body := r.Body
	if b, ok := integralNumbers(body); ok {
		body = b
	}
	_ = json.Unmarshal(body, v)
}

// integralNumbers rewrites every number of a JSON document that denotes an integer in plain
// integer form. ok is false when the document does not parse.
func integralNumbers(body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case json.Number:
			if lit, ok := remit.IntegerLiteral(string(t)); ok {
				return json.Number(lit)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(doc))
	return out, err == nil
}

func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field '%s' has the wrong type", te.Field)
	}
	return "malformed JSON"
}

// RequestID returns the request ID carried by ctx.
func RequestID(ctx context.Context) string { return telemetry.RequestID(ctx) }

// withRequestID gives every request an ID (header Request-Id) and the headers every answer carries
// (answerHeaders), starts its server span (a child of the caller's traceparent, while tracing is
// on), recovers panics into a 500 envelope, logs one line per request and records metrics. Every
// line logged with the request's context names its requestId (and its trace_id and span_id:
// telemetry.LogHandler).
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := remit.NewID("req")
		rw := &responseWriter{ResponseWriter: w}
		rw.Header().Set("Request-Id", id)
		answerHeaders(rw.Header())
		ctx, span := telemetry.StartServer(r)
		ctx = telemetry.WithRequestID(ctx, id)
		r = r.WithContext(ctx)
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				s.log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !rw.wrote {
					s.writeError(rw, r, remit.Internal(fmt.Errorf("panic: %v", p)))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			s.metrics.observe(route, rw.status, d)
			telemetry.EndServer(ctx, span, r.Method, route, rw.status)
			s.log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", r.Method),
				slog.String("route", route), slog.Int("status", rw.status), slog.Duration("duration", d))
			if p == http.ErrAbortHandler {
				panic(p) // a streamed answer cut off (Stream): net/http closes the connection mid-body
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

// answerHeaders are set on every answer before its handler runs (docs/security.md, "Headers"):
// answers carry shown-once secrets (a webhook signing secret, a setup session's token, a claim URL,
// the API key a claim returns) and tenant data, which no cache may keep, and no answer is to be
// read as another content type than it says. A route whose content may be cached (the vendored
// Redoc bundle) replaces Cache-Control itself.
func answerHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

type responseWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var validationOptions = &openapi3filter.Options{
	MultiError:         true,
	AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
}

// serveOperation is the one request pipeline every operation goes through, in this order:
// authenticate (401) → rate limit (429) → read the body (413) → scope (403) → parse and validate
// against the contract (400, 422) → the handler, through the engine's write entry point for writes
// (idempotency, one transaction) → the envelope.
func (s *Server) serveOperation(o *operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		ctx := hr.Context()
		req := &Request{HTTP: hr, ID: RequestID(ctx)}
		if !takeEndings(o, hr) {
			s.writeError(w, hr, remit.Errorf(remit.ENotFound, "No route %s %s. See /openapi.yaml for the API's routes.", hr.Method, hr.URL.Path))
			return
		}
		if err := s.admit(w, o, req); err != nil {
			s.writeError(w, hr, err)
			return
		}
		if req.Principal.APIKeyID != "" { // the key's writes are its events' actor
			ctx = remit.WithActor(ctx, remit.Actor{Type: remit.ActorAPIKey, ID: req.Principal.APIKeyID})
			hr = hr.WithContext(ctx)
			req.HTTP = hr
		}
		if o.handler == nil {
			s.writeError(w, hr, remit.Errorf(remit.ENotImplemented, "%s %s is part of the contract but is not implemented in this version of Remit.", o.method, o.path))
			return
		}
		if !o.mutating {
			data, err := o.handler(ctx, req)
			s.respond(w, hr, o, req.Scope.Environment, data, err)
			return
		}
		s.serveWrite(w, hr, o, req)
	})
}

// takeEndings takes the fixed ending off each path parameter that has one ({dataset}.csv), so
// that the parameter is what the path names before it; false (no route) when the segment lacks it.
func takeEndings(o *operation, hr *http.Request) bool {
	for name, ending := range o.endings {
		v, ok := strings.CutSuffix(hr.PathValue(name), ending)
		if !ok || v == "" {
			return false
		}
		hr.SetPathValue(name, v)
	}
	return true
}

// pathEnums answers 404 for a path parameter the contract enumerates (an export's dataset) when
// its value is none of the enumeration's: like an unknown route, it names nothing there is.
func pathEnums(o *operation, hr *http.Request) error {
	for _, ps := range []openapi3.Parameters{o.route.PathItem.Parameters, o.route.Operation.Parameters} {
		for _, p := range ps {
			if p.Value == nil || p.Value.In != "path" || p.Value.Schema == nil || len(p.Value.Schema.Value.Enum) == 0 {
				continue
			}
			v := hr.PathValue(p.Value.Name)
			if !slices.ContainsFunc(p.Value.Schema.Value.Enum, func(e any) bool { return e == v }) {
				return remit.Errorf(remit.ENotFound, "No %s '%s'. See /openapi.yaml for the values it takes.", p.Value.Name, v).
					With("field", p.Value.Name)
			}
		}
	}
	return nil
}

// scopeParams are the environment and merchantAccountId a scoped operation names; named is false
// when either is missing or malformed (validation reports it, in its turn).
type scopeParams struct {
	env   remit.Environment
	mid   string
	named bool
}

func scopeOf(o *operation, hr *http.Request) scopeParams {
	if !o.scoped {
		return scopeParams{}
	}
	q := hr.URL.Query()
	p := scopeParams{env: remit.Environment(q.Get("environment")), mid: q.Get("merchantAccountId")}
	// A merchantAccountId with NUL or non-UTF-8 bytes never reaches the store: it is reported by
	// paramCharacters (422).
	p.named = p.env.Valid() && p.mid != "" && !strings.ContainsRune(p.mid, 0) && utf8.ValidString(p.mid)
	return p
}

// admit runs every check before the work, in the pipeline's order, and fills req: the caller, its
// scope and the validated body. The first failing check is the answer.
func (s *Server) admit(w http.ResponseWriter, o *operation, req *Request) error {
	hr := req.HTTP
	sp := scopeOf(o, hr)
	prefetched, err := s.authenticate(w, o, req, sp)
	if err != nil {
		return err
	}
	// The portal's credential is its hosted token: missing is 401 like a missing API key (the
	// handler resolves it, and answers 401 for a bad one).
	if o.auth == authPortal && hr.URL.Query().Get("token") == "" {
		return remit.Errorf(remit.EUnauthorized, "The token query parameter is missing. Use the hosted page's URL, which carries its token.")
	}
	// Parameters with a NUL or bytes that are not UTF-8 cannot name anything (and PostgreSQL
	// refuses such text): 422 before anything reads the store with them.
	if err := paramCharacters(hr, o); err != nil {
		return err
	}
	body, err := s.readBody(w, hr)
	if err != nil {
		return err
	}
	// Scope: the key must reach the merchant account in the environment. Checked as soon as both
	// parameters are present, before the body is validated.
	if sp.named {
		if err := s.resolveScope(hr.Context(), o, req, sp, prefetched); err != nil {
			return err
		}
	}
	if err := pathEnums(o, hr); err != nil {
		return err
	}
	if req.Body, err = parseBody(hr, o, body); err != nil {
		return err
	}
	return s.validate(o, req)
}

// authenticate checks the bearer key (401) and takes a request from its bucket (429; the
// RateLimit-* headers on every answer of an authenticated caller). A scoped operation reads the
// key and the merchant account it names in one statement; the account is checked at the scope
// step, in its turn.
func (s *Server) authenticate(w http.ResponseWriter, o *operation, req *Request, sp scopeParams) (*remit.MerchantAccount, error) {
	if o.auth != authBearer {
		return nil, nil
	}
	ctx := req.HTTP.Context()
	var prefetched *remit.MerchantAccount
	var err error
	if sp.named {
		req.Principal, prefetched, err = s.eng.Access.AuthenticateScoped(ctx, bearerToken(req.HTTP), sp.mid)
	} else {
		req.Principal, err = s.eng.Access.Authenticate(ctx, bearerToken(req.HTTP))
	}
	if err != nil {
		return nil, err
	}
	return prefetched, s.rateLimit(w, req)
}

// rateLimit takes one request from the key's bucket and sets the RateLimit-* headers.
func (s *Server) rateLimit(w http.ResponseWriter, req *Request) error {
	if s.limiter == nil {
		return nil
	}
	res := s.limiter.Allow(req.HTTP.Context(), req.Principal.APIKeyID)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(res.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(res.Reset)))
	if res.Allowed {
		return nil
	}
	retry := max(ceilSeconds(res.RetryAfter), 1)
	h.Set("Retry-After", strconv.Itoa(retry))
	return remit.Errorf(remit.ERateLimited, "Too many requests with this API key; retry after %d seconds.", retry)
}

// readBody reads the body, at most MaxBodyBytes (413), decompressing a gzip body
// (Content-Encoding: gzip; docs/api-conventions.md "Compressed bodies"): the limit applies to the
// decompressed bytes, and decompression stops one byte past it. A body that is not gzip is 400; an
// encoding other than gzip or identity is 415.
func (s *Server) readBody(w http.ResponseWriter, hr *http.Request) ([]byte, error) {
	limit := s.cfg.MaxBodyBytes
	var src io.Reader = http.MaxBytesReader(w, hr.Body, limit) // the bytes on the wire, too
	gzipped := false
	switch enc := strings.ToLower(strings.TrimSpace(hr.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, gzipError(err, limit)
		}
		defer zr.Close()
		src, gzipped = zr, true
	default:
		return nil, withStatus(http.StatusUnsupportedMediaType, remit.Errorf(remit.EBadRequest,
			"Content-Encoding %q is not supported; send the body as is, or gzip-compressed with Content-Encoding: gzip.", enc))
	}
	body, err := io.ReadAll(io.LimitReader(src, limit+1))
	switch {
	case err != nil && gzipped:
		return nil, gzipError(err, limit)
	case err != nil:
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, remit.Errorf(remit.EBadRequest, "The request body could not be read.")
	case int64(len(body)) > limit:
		return nil, tooLarge(limit)
	}
	hr.Header.Del("Content-Encoding") // what follows reads the decompressed body
	return body, nil
}

// gzipError answers a body that could not be read: over the limit on the wire (413), not valid
// gzip (400: a bad header or checksum, corrupt or cut-off data), or else unreadable.
func gzipError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var corrupt flate.CorruptInputError
	switch {
	case errors.As(err, &mbe):
		return tooLarge(limit)
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return remit.Errorf(remit.EBadRequest, "The request body is not valid gzip, as its Content-Encoding: gzip says.")
	}
	return remit.Errorf(remit.EBadRequest, "The request body could not be read.")
}

func tooLarge(limit int64) error {
	return withStatus(http.StatusRequestEntityTooLarge, remit.Errorf(remit.EBadRequest, "The request body is larger than %d bytes.", limit))
}

// resolveScope checks that the caller reaches the merchant account in the environment (403).
func (s *Server) resolveScope(ctx context.Context, o *operation, req *Request, sp scopeParams, prefetched *remit.MerchantAccount) error {
	var err error
	if o.auth == authBearer {
		req.Scope, req.Merchant, err = s.eng.Access.ResolveScopeWith(req.Principal, sp.env, sp.mid, prefetched)
	} else {
		req.Scope, req.Merchant, err = s.eng.Access.ResolveScope(ctx, req.Principal, sp.env, sp.mid)
	}
	if err == nil {
		telemetry.SetMerchant(ctx, req.Scope.MerchantAccountID)
	}
	return err
}

// parseBody checks that an operation's body is one JSON object (an empty body counts as {}) in
// UTF-8 (400). Its characters are checked with the contract (validate, bodyText).
func parseBody(hr *http.Request, o *operation, body []byte) ([]byte, error) {
	if o.route.Operation.RequestBody == nil {
		return body, nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := checkJSONObject(hr, body); err != nil {
		return nil, err
	}
	// The body is one JSON object: validate it as the contract's application/json (kin-openapi
	// knows no +json types, and a missing Content-Type is read as JSON).
	hr.Header.Set("Content-Type", "application/json")
	return body, nil
}

// validate checks the parameters and the body against the contract, every problem at once (422).
// What the contract cannot express (beyondContract, the characters of its text: bodyText) and the
// operation's own body rules (its
// BodyCheck) are checked beside it. When the contract fails, one 422 lists all three kinds; when it
// holds, the other problems are kept for the answer (withProblems), which they replace: a body
// that breaks a rule never takes effect, and its 422 also lists what the engine found.
func (s *Server) validate(o *operation, req *Request) error {
	hr := req.HTTP
	hr.Body = io.NopCloser(bytes.NewReader(req.Body))
	pathParams := map[string]string{}
	for _, name := range pathParamNames(o) {
		pathParams[name] = hr.PathValue(name)
	}
	err := openapi3filter.ValidateRequest(hr.Context(), &openapi3filter.RequestValidationInput{
		Request: hr, PathParams: pathParams, Route: o.route, Options: validationOptions,
	})
	metaProblems, bounds := beyondContract(o.bodySchema, req.Body)
	bounds = append(append(unknownQuery(o, hr), bodyText(o, req.Body)...), bounds...)
	if err != nil || len(bounds) > 0 {
		return withBodyRules(validationError(err, append(bounds, metaProblems...)...), o, req)
	}
	// The contract holds; the operation's own rules on the body still run here, so that a body
	// that breaks them is refused whatever the engine would look up first (withProblems).
	req.problems = metaProblems
	if o.check != nil {
		req.problems = dedupe(append(req.problems, o.check(req)...))
	}
	return nil
}

// withBodyRules adds to a body's contract problems what the operation's own rules find in the same
// body (its BodyCheck, the rule the engine runs on the same input), so the caller gets one list of
// every problem in one pass. A field the contract already refused is not reported twice.
func withBodyRules(invalid *remit.Error, o *operation, req *Request) error {
	if o.check == nil || (o.scoped && req.Scope.MerchantAccountID == "") {
		return invalid // no rules to run, or no scope to run them in (it is among the problems)
	}
	fields := invalid.Fields
	refused := map[string]bool{}
	for _, f := range fields {
		refused[f.Location+"|"+f.Field] = true
	}
	for _, f := range o.check(req) {
		if !refused[f.Location+"|"+f.Field] {
			fields = append(fields, f)
		}
	}
	return remit.Invalid(dedupe(fields)...)
}

// serveWrite runs a mutating operation through the engine's one write entry point
// (Writes.Write), which owns the transaction and the Idempotency-Key: the edge supplies the work
// (the handler, with the problems the pipeline found beyond the contract) and how an outcome is
// answered (the envelope), which is also what a replay of the key answers.
func (s *Server) serveWrite(w http.ResponseWriter, hr *http.Request, o *operation, req *Request) {
	ctx := hr.Context()
	if o.prepare != nil {
		ctx = o.prepare(ctx, req)
	}
	key, err := idempotencyKey(hr, o, req.Body)
	if err != nil {
		s.writeError(w, hr, withProblems(err, req.problems))
		return
	}
	if o.auth != authBearer {
		key = "" // hosted tokens and claim links carry no Idempotency-Key of a merchant's
	}
	wr := remit.WriteRequest{Scope: req.Scope, Key: key, Route: o.method + " " + hr.URL.Path, Body: req.Body}
	run := func(ctx context.Context) (any, error) {
		data, err := o.handler(ctx, req)
		return data, withProblems(err, req.problems)
	}
	answer := func(data any, err error) remit.Answer {
		if err != nil {
			return s.errorAnswer(hr, req.ID, err)
		}
		body, err := encodeSuccess(data, req.Scope.Environment, req.ID)
		if err != nil {
			return s.errorAnswer(hr, req.ID, remit.Internal(err))
		}
		return remit.Answer{Status: o.success, Body: body}
	}
	ans, err := s.eng.Writes.Write(ctx, wr, run, answer)
	if err != nil {
		s.writeError(w, hr, err)
		return
	}
	if ans.Replayed {
		var env struct {
			RequestID string `json:"requestId"`
			Error     struct {
				RequestID string `json:"requestId"`
			} `json:"error"`
		}
		_ = json.Unmarshal(ans.Body, &env)
		if id := env.RequestID + env.Error.RequestID; id != "" {
			w.Header().Set("Request-Id", id)
		}
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, ans.Status, ans.Body)
}

// withProblems merges the problems the pipeline found beyond the contract into the operation's
// answer: into its validation error, or in place of any other answer (the transaction then rolls
// back), so a request with such a problem never takes effect and its 422 lists everything.
func withProblems(err error, problems []remit.FieldError) error {
	if len(problems) == 0 {
		return err
	}
	var e *remit.Error
	if errors.As(err, &e) && e.Code == remit.EInvalid {
		seen := map[string]bool{}
		for _, f := range e.Fields {
			seen[f.Location+"|"+f.Field+"|"+f.Reason] = true
		}
		fields := append([]remit.FieldError(nil), e.Fields...)
		for _, f := range problems {
			if !seen[f.Location+"|"+f.Field+"|"+f.Reason] {
				fields = append(fields, f)
			}
		}
		return remit.Invalid(fields...)
	}
	return remit.Invalid(problems...)
}

func idempotencyKey(hr *http.Request, o *operation, body []byte) (string, error) {
	key := hr.Header.Get("Idempotency-Key")
	if o.bodyIdem {
		var b struct {
			IdempotencyKey *string `json:"idempotencyKey"`
		}
		_ = json.Unmarshal(body, &b)
		if b.IdempotencyKey != nil {
			switch {
			case key == "":
				key = *b.IdempotencyKey
			case key != *b.IdempotencyKey:
				return "", remit.Invalid(remit.FieldError{Field: "idempotencyKey", Location: remit.InBody, Reason: "mismatch",
					Message: "The body's idempotencyKey differs from the Idempotency-Key header; send one, or the same value in both."})
			}
		}
	}
	if len(key) > 255 {
		return "", remit.Invalid(remit.FieldError{Field: "Idempotency-Key", Location: remit.InHeader, Reason: "invalid_length", Message: "Idempotency-Key must be 1 to 255 characters."})
	}
	return key, nil
}

// unknownQuery refuses the query parameters an API-key operation does not declare, as unknown body
// fields are (422 unknown_parameter, one entry each, in name order): a misspelt filter must not
// list everything. (The customer portal's pages are links a browser follows: what they carry is
// the portal's to read.)
func unknownQuery(o *operation, hr *http.Request) []remit.FieldError {
	if o.auth != authBearer {
		return nil
	}
	var p remit.Problems
	names := make([]string, 0)
	for name := range hr.URL.Query() {
		if !o.query[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		p.Add(remit.InQuery, name, "unknown_parameter", "The query parameter "+strconv.Quote(name)+" is not a parameter of this operation; remove it (see the operation in /openapi.yaml or /docs).")
	}
	return p.Fields()
}

// paramCharacters refuses path and query parameters that contain NUL or are not UTF-8.
func paramCharacters(hr *http.Request, o *operation) error {
	var p remit.Problems
	bad := func(v string) bool { return strings.ContainsRune(v, 0) || !utf8.ValidString(v) }
	for _, name := range pathParamNames(o) {
		if bad(hr.PathValue(name)) {
			p.Add(remit.InPath, name, "invalid_characters", name+" contains a NUL character or bytes that are not UTF-8.")
		}
	}
	names := make([]string, 0)
	for name, vs := range hr.URL.Query() {
		if bad(name) || slices.ContainsFunc(vs, bad) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		field := name
		if bad(name) {
			field = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "")
		}
		p.Add(remit.InQuery, field, "invalid_characters", "The query parameter "+strconv.Quote(field)+" contains a NUL character or bytes that are not UTF-8.")
	}
	return p.Err()
}

func pathParamNames(o *operation) []string {
	var out []string
	for _, ps := range []openapi3.Parameters{o.route.PathItem.Parameters, o.route.Operation.Parameters} {
		for _, p := range ps {
			if p.Value != nil && p.Value.In == "path" {
				out = append(out, p.Value.Name)
			}
		}
	}
	return out
}

// bodyText applies the text rule (remit.CheckText; docs/security.md, "Input characters") to every
// string of an operation's body, multi-line or not as remit.MultilineField says, and to every key
// (one line): a refused character is a 422 invalid_characters naming each field that holds one. A
// body another system wrote and signed (foreignBody: a processor's webhook) is held to no NUL only,
// which no field takes and PostgreSQL cannot store.
func bodyText(o *operation, body []byte) []remit.FieldError {
	if o.route.Operation.RequestBody == nil || !mayHoldRefusedText(body) {
		return nil
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil // reported by the parser
	}
	refused := func(r rune, multiline bool) bool {
		return r == 0 || (!o.foreignBody && remit.TextRefused(r, multiline))
	}
	var p remit.Problems
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				if len(path) == 0 && slices.Contains(o.judgedEach, k) {
					continue // each item is judged alone, by its own operation's checks
				}
				if strings.ContainsFunc(k, func(r rune) bool { return refused(r, false) }) {
					p.Body(pointerToField(append(slices.Clone(path), remit.CleanText(k))), "invalid_characters",
						"Keys may not contain control characters, nor bidirectional overrides or isolates.")
					continue
				}
				walk(t[k], append(slices.Clone(path), k))
			}
		case []any:
			for i, e := range t {
				walk(e, append(slices.Clone(path), strconv.Itoa(i)))
			}
		case string:
			if f, multiline := pointerToField(path), remit.MultilineField(path); o.foreignBody && strings.ContainsRune(t, 0) {
				p.Body(f, "invalid_characters", f+" may not contain a NUL character.")
			} else if !o.foreignBody {
				remit.CheckText(&p, f, t, multiline)
			}
		}
	}
	walk(doc, nil)
	return p.Fields()
}

// mayHoldRefusedText reports whether a JSON body may hold a character the text rule refuses: as an
// escape (a backslash), DEL, or in UTF-8 beginning 0xC2 (C1 controls) or 0xE2 (the bidirectional
// controls, the line and paragraph separators). A raw C0 control is no valid JSON.
func mayHoldRefusedText(body []byte) bool {
	return bytes.IndexByte(body, '\\') >= 0 || bytes.IndexByte(body, 0x7f) >= 0 ||
		bytes.IndexByte(body, 0xc2) >= 0 || bytes.IndexByte(body, 0xe2) >= 0
}

// checkJSONObject enforces the content type and that the body is one JSON object.
func checkJSONObject(hr *http.Request, body []byte) error {
	if ct := hr.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return remit.Errorf(remit.EBadRequest, "Content-Type must be application/json.")
		}
	}
	if !json.Valid(body) {
		return remit.Errorf(remit.EBadRequest, "The body is not valid JSON.")
	}
	if !utf8.Valid(body) {
		// encoding/json would quietly store U+FFFD in place of what the client meant.
		return remit.Errorf(remit.EBadRequest, "The body is not valid UTF-8; JSON bodies must be encoded in UTF-8.")
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return remit.Errorf(remit.EBadRequest, "The body must be a JSON object.")
	}
	return nil
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

type successBody struct {
	Data      any    `json:"data"`
	RequestID string `json:"requestId"`
}

// Binary is a success answer that is not a JSON envelope (a PDF, an HTML page): respond writes
// Body as is, with ContentType and any extra Header fields, and the operation's success status.
// Only read operations may return it (a write's answer is remembered for idempotency as an
// envelope). Errors stay JSON envelopes.
type Binary struct {
	ContentType string
	Body        []byte
	Header      http.Header // extra headers (Content-Disposition, Content-Security-Policy, ...)
}

// Redirect is a read operation's answer that sends the client to Location (a URL reference,
// resolved against the request's URL) with 302 Found: GET of a hosted pay route opens its page.
// Only read operations may return it, as Binary.
type Redirect struct{ Location string }

// encodeSuccess is a success envelope: data, every resource in it carrying the request's
// environment (remit.StampEnvironment: the engine does not copy it onto each), and the request ID.
func encodeSuccess(data any, env remit.Environment, requestID string) ([]byte, error) {
	switch data.(type) {
	case Binary, Stream, Redirect:
		return nil, errors.New("httpapi: a write operation returned a Binary or Stream body or a Redirect; only reads may")
	}
	if data == nil {
		data = struct{}{}
	}
	return json.Marshal(successBody{Data: remit.StampEnvironment(data, env), RequestID: requestID})
}

// respond writes a read operation's answer: the envelope, a Binary body as is, or a Redirect.
func (s *Server) respond(w http.ResponseWriter, hr *http.Request, o *operation, env remit.Environment, data any, err error) {
	if err != nil {
		s.writeError(w, hr, err)
		return
	}
	if rd, ok := data.(Redirect); ok {
		w.Header().Set("Location", rd.Location)
		w.WriteHeader(http.StatusFound)
		return
	}
	if st, ok := data.(Stream); ok {
		s.stream(w, hr, o, st)
		return
	}
	if b, ok := data.(Binary); ok {
		h := w.Header()
		for k, v := range b.Header {
			h[k] = v
		}
		h.Set("Content-Type", b.ContentType)
		h.Set("Content-Length", strconv.Itoa(len(b.Body)))
		w.WriteHeader(o.success)
		_, _ = w.Write(b.Body)
		return
	}
	body, err := encodeSuccess(data, env, RequestID(hr.Context()))
	if err != nil {
		s.writeError(w, hr, remit.Internal(err))
		return
	}
	writeRaw(w, o.success, body)
}

func (s *Server) writeError(w http.ResponseWriter, hr *http.Request, err error) {
	a := s.errorAnswer(hr, RequestID(hr.Context()), err)
	writeRaw(w, a.Status, a.Body)
}

// errorAnswer is the envelope answering err; a fault (5xx) is logged.
func (s *Server) errorAnswer(hr *http.Request, requestID string, err error) remit.Answer {
	status, env := s.toEnvelope(err, requestID)
	s.logFault(hr, status, err)
	body, _ := json.Marshal(env)
	return remit.Answer{Status: status, Body: body}
}

func (s *Server) logFault(hr *http.Request, status int, err error) {
	if status >= 500 {
		s.log.ErrorContext(hr.Context(), "request failed", "status", status, "err", err.Error())
		s.metrics.storeError(err)
	}
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// methodNotAllowed answers a known path with another method: 405 with Allow.
func (s *Server) methodNotAllowed(allow []string) http.Handler {
	allowHeader := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowHeader)
		s.writeError(w, r, withStatus(http.StatusMethodNotAllowed, remit.Errorf(remit.EBadRequest, "%s is not allowed on this path; allowed: %s.", r.Method, allowHeader)))
	})
}
