package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/remit-billing/remit/api"
)

// contractChecker validates every answer against the contract, both ways: a field the schema
// requires must be there, and a field the schema does not declare must not be (api.Strict: every
// object of an answer is closed unless the document gives its additionalProperties).
type contractChecker struct {
	router routers.Router
	names  map[*openapi3.Schema]string // component schemas by value, to name them in failures
	tails  []string                    // prefixes of the prefix-routed paths (/customer-portal/ of /customer-portal/{tail})
}

var (
	checkerOnce sync.Once
	checkerVal  *contractChecker
	checkerErr  error
)

func checker(t testing.TB) *contractChecker {
	checkerOnce.Do(func() {
		spec, err := api.Strict()
		if err != nil {
			checkerErr = err
			return
		}
		names := map[*openapi3.Schema]string{}
		for name, r := range spec.Components.Schemas {
			names[r.Value] = name
		}
		var tails []string
		for path := range spec.Paths.Map() {
			if prefix, ok := strings.CutSuffix(path, "{tail}"); ok {
				tails = append(tails, prefix)
			}
		}
		r, err := gorillamux.NewRouter(spec)
		checkerVal, checkerErr = &contractChecker{router: r, names: names, tails: tails}, err
	})
	if checkerErr != nil {
		t.Fatalf("contract: %v", checkerErr)
	}
	return checkerVal
}

func (c *contractChecker) check(t testing.TB, req *http.Request, res *Response) {
	t.Helper()
	// No answer may be cached or sniffed (docs/security.md, "Headers"): they carry tenant data and
	// shown-once secrets.
	if cc, nosniff := res.Header.Get("Cache-Control"), res.Header.Get("X-Content-Type-Options"); cc != "no-store" || nosniff != "nosniff" {
		t.Errorf("%s %s: answer %d has Cache-Control %q and X-Content-Type-Options %q, want no-store and nosniff", req.Method, req.URL.Path, res.Status, cc, nosniff)
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return
	}
	checkEnvelope(t, req, res)
	route, params, err := c.findRoute(req)
	if err != nil {
		return // not a contract route (404/405 paths, operational routes)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.Status, Header: res.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(res.Body)
	err = openapi3filter.ValidateResponse(context.Background(), out)
	if err == nil {
		return
	}
	op := fmt.Sprintf("%s (%s %s) answered %d", route.Operation.OperationID, req.Method, route.Path, res.Status)
	undeclared, other := c.problems(err)
	if len(undeclared) > 0 {
		t.Errorf("%s with %d field(s) that api/openapi.yaml does not declare (declare each in its schema, with its type, nullability and description):\n  %s\n%s",
			op, len(undeclared), strings.Join(undeclared, "\n  "), res.Body)
	}
	if len(other) > 0 {
		t.Errorf("%s, which does not match api/openapi.yaml:\n  %s\n%s", op, strings.Join(other, "\n  "), res.Body)
	}
}

// findRoute finds req's operation. A prefix-routed path's tail may hold slashes, which a path
// parameter of the router does not match: such a path is looked up with its tail as one segment.
func (c *contractChecker) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := c.router.FindRoute(req)
	if err == nil {
		return route, params, nil
	}
	for _, prefix := range c.tails {
		if tail, ok := strings.CutPrefix(req.URL.Path, prefix); ok && strings.Contains(tail, "/") {
			one := req.Clone(req.Context())
			one.URL.Path, one.URL.RawPath = prefix+"tail", ""
			return c.router.FindRoute(one)
		}
	}
	return nil, nil, err
}

// checkEnvelope: every JSON answer is an envelope with a request ID equal to the header's.
func checkEnvelope(t testing.TB, req *http.Request, res *Response) {
	t.Helper()
	m := res.JSON()
	var rid string
	if e, ok := m["error"].(map[string]any); ok {
		rid, _ = e["requestId"].(string)
		if code, _ := e["code"].(string); code == "" {
			t.Errorf("%s %s: error envelope without code: %s", req.Method, req.URL.Path, res.Body)
		}
	} else if _, ok := m["data"]; ok {
		rid, _ = m["requestId"].(string)
	} else if strings.HasPrefix(req.URL.Path, "/v1/") {
		t.Errorf("%s %s: answer is not an envelope: %s", req.Method, req.URL.Path, res.Body)
	}
	if rid != "" && rid != res.Header.Get("Request-Id") {
		t.Errorf("%s %s: requestId %q differs from Request-Id header %q", req.Method, req.URL.Path, rid, res.Header.Get("Request-Id"))
	}
}

// problems sorts the validator's error into undeclared fields ("data.lines[0].periodStart (in
// schema InvoiceLine)"), each named once at its first place (not again for lines[1], lines[2]),
// and the other problems ("data.total: reason").
func (c *contractChecker) problems(err error) (undeclared, other []string) {
	var re *openapi3filter.ResponseError
	if !errors.As(err, &re) || re.Err == nil {
		return nil, []string{err.Error()}
	}
	seen := map[string]bool{}
	for _, l := range leaves(re.Err) {
		if l.se == nil {
			other = append(other, re.Reason+": "+l.err.Error())
			continue
		}
		if fields := undeclaredFields(l.se); len(fields) > 0 {
			for _, f := range fields {
				where := append(slices.Clone(l.path), f)
				if key := jsonPath(where, true); !seen[key] {
					seen[key] = true
					undeclared = append(undeclared, jsonPath(where, false)+c.schemaName(l.se.Schema))
				}
			}
			continue
		}
		path := jsonPath(l.path, false)
		if path == "" {
			path = "(the body)"
		}
		other = append(other, path+": "+l.se.Reason)
	}
	return undeclared, other
}

// leaf is one problem the validator found: a schema error at path, or another error.
type leaf struct {
	path []string
	se   *openapi3.SchemaError
	err  error
}

// leaves lists the problems of a validation error. A oneOf or allOf that failed in exactly one
// member (a discriminated union such as EventObject tries only the member its object names) is
// replaced by that member's own problems, which name the fields (kin-openapi gives them their
// whole path).
func leaves(err error) []leaf {
	if me, ok := err.(openapi3.MultiError); ok {
		var out []leaf
		for _, e := range me {
			out = append(out, leaves(e)...)
		}
		return out
	}
	se, ok := err.(*openapi3.SchemaError)
	if !ok {
		if inner := errors.Unwrap(err); inner != nil {
			return leaves(inner)
		}
		return []leaf{{err: err}}
	}
	if se.Origin != nil && (se.SchemaField == "oneOf" || se.SchemaField == "allOf") {
		var members openapi3.MultiError
		if errors.As(se.Origin, &members) && len(members) == 1 {
			return leaves(members[0])
		}
	}
	return []leaf{{path: se.JSONPointer(), se: se}}
}

// undeclaredFields lists the keys of the object se is about that its closed schema does not
// declare, when se is the closed schema's refusal.
func undeclaredFields(se *openapi3.SchemaError) []string {
	s, obj := se.Schema, se.Value
	m, ok := obj.(map[string]any)
	if se.SchemaField != "properties" || s == nil || !ok || s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
		return nil
	}
	var out []string
	for k := range m {
		if _, declared := s.Properties[k]; !declared {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (c *contractChecker) schemaName(s *openapi3.Schema) string {
	if name, ok := c.names[s]; ok {
		return " (in schema " + name + ")"
	}
	return ""
}

// jsonPath writes a JSON pointer's parts the way 422 answers name fields (data.lines[0].amount),
// or with every index left out (data.lines[].amount) when anyIndex.
func jsonPath(parts []string, anyIndex bool) string {
	var b strings.Builder
	for _, p := range parts {
		switch _, err := strconv.Atoi(p); {
		case err == nil && anyIndex:
			b.WriteString("[]")
		case err == nil:
			b.WriteString("[" + p + "]")
		case b.Len() == 0:
			b.WriteString(p)
		default:
			b.WriteString("." + p)
		}
	}
	return b.String()
}

// HTTPClient is a client of the env's server that checks every answer against the contract as Do
// does, for tests that call the API through another client (the generated Go client).
func (e *Env) HTTPClient() *http.Client {
	return &http.Client{Transport: checkingTransport{e: e, next: e.Server.Client().Transport}}
}

type checkingTransport struct {
	e    *Env
	next http.RoundTripper
}

func (c checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(b))
	c.e.checker.check(c.e.T, req, &Response{Status: res.StatusCode, Header: res.Header, Body: b})
	return res, nil
}
