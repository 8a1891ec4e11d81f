// Package client is a Go client for the Remit API, generated from api/openapi.yaml by oapi-codegen
// (client.gen.go: every operation, request and response type) plus a few helpers (this file):
//
//   - New builds a client whose calls authenticate with an API key (WithAPIKey) and name the
//     environment and merchant account of every /v1 request (WithScope), so that params may be nil;
//   - every POST, PUT and PATCH under /v1 carries an Idempotency-Key, generated per call unless the call
//     gives one (in its params or with the WithIdempotencyKey editor), so a retry of the same call with
//     the same key is safe;
//   - an answer that is not 2xx comes back as an error of type *Error, carrying the status, code,
//     message, request ID, docs URL and the field problems of a 422.
//
// A first invoice:
//
//	c, err := client.New("http://127.0.0.1:8080", client.WithAPIKey(key), client.WithScope(client.Sandbox, merchantAccountID))
//	price, err := c.CreatePriceWithResponse(ctx, nil, client.PriceCreateRequest{PriceId: "price_setup", ...})
//	...
//	inv, err := c.FinalizeInvoiceWithResponse(ctx, invoiceID, nil, client.InvoiceFinalizeRequest{})
//	var apiErr *client.Error
//	if errors.As(err, &apiErr) && apiErr.Code == client.CodeConflict { ... apiErr.CurrentState() ... }
//
// Regenerate client.gen.go with `go generate ./client` after changing the contract (CI fails when
// the committed file drifts).
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../api/openapi.yaml

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Environments.
const (
	Sandbox    = "sandbox"
	Production = "production"
)

// Error codes of the error envelope; each pairs with one HTTP status (see /docs/errors).
const (
	CodeBadRequest        = "bad_request"
	CodeUnauthorized      = "unauthorized"
	CodeForbidden         = "forbidden"
	CodeNotFound          = "not_found"
	CodeConflict          = "conflict"
	CodeRateLimited       = "rate_limited"
	CodeValidationFailure = "validation_failure"
	CodeNotImplemented    = "not_implemented"
	CodeInternalError     = "internal_error"
	// CodeTaxProviderUnavailable (503): the tax provider did not answer; nothing was applied.
	CodeTaxProviderUnavailable = "tax_provider_unavailable"
)

// New returns a client of the Remit API at baseURL (for example "http://127.0.0.1:8080"). Give it
// WithAPIKey and, for /v1 calls, WithScope; any other ClientOption of this package (WithHTTPClient,
// WithRequestEditorFn) works too. Answers that are not 2xx are returned as *Error.
func New(baseURL string, opts ...ClientOption) (*ClientWithResponses, error) {
	opts = append(opts, WithRequestEditorFn(autoIdempotencyKey))
	c, err := NewClient(baseURL, opts...)
	if err != nil {
		return nil, err
	}
	c.Client = errorDoer{next: c.Client}
	return &ClientWithResponses{c}, nil
}

// WithAPIKey authenticates every call with Authorization: Bearer key.
func WithAPIKey(key string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// WithScope makes environment and merchantAccountId the default scope of every /v1 call: they
// fill the query parameters a call leaves empty (params nil or zero). A call's own values, or the
// Scope editor, win.
func WithScope(environment, merchantAccountID string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		if !isV1(req) {
			return nil
		}
		q := req.URL.Query()
		if q.Get("environment") == "" {
			q.Set("environment", environment)
		}
		if q.Get("merchantAccountId") == "" {
			q.Set("merchantAccountId", merchantAccountID)
		}
		req.URL.RawQuery = q.Encode()
		return nil
	})
}

// Scope is a per-call editor that acts in environment and merchantAccountID instead of the
// client's default scope.
func Scope(environment, merchantAccountID string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		q.Set("environment", environment)
		q.Set("merchantAccountId", merchantAccountID)
		req.URL.RawQuery = q.Encode()
		return nil
	}
}

// WithIdempotencyKey is a per-call editor that sends key as the Idempotency-Key (instead of a
// generated one). Reuse the key to retry the same call safely.
func WithIdempotencyKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// NewIdempotencyKey returns a fresh random key, as the client generates for calls that give none.
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "remit-go-" + hex.EncodeToString(b)
}

// autoIdempotencyKey gives every POST, PUT and PATCH under /v1 a key of its own unless it has one.
func autoIdempotencyKey(_ context.Context, req *http.Request) error {
	if (req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch) && isV1(req) && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", NewIdempotencyKey())
	}
	return nil
}

func isV1(req *http.Request) bool { return strings.Contains(req.URL.Path, "/v1/") }

// Error is an answer of the API that is not 2xx: the error envelope of /docs/errors.
type Error struct {
	StatusCode     int            // HTTP status
	Code           string         // error.code: one of the Code* constants
	Message        string         // error.message: what went wrong and what to do next
	RequestID      string         // error.requestId (also the Request-Id header): quote it in reports
	DocsURL        string         // error.docsUrl: the errors guide's section for Code
	Details        map[string]any // error.details as sent
	Fields         []FieldError   // error.details.fields: every problem of a 422
	IdempotencyKey string         // the Idempotency-Key the request carried, to retry it safely
	RetryAfter     string         // the Retry-After header of a 429
}

// FieldError is one problem of a 422 answer.
type FieldError struct {
	Field    string `json:"field"`    // full path, such as "lines[0].unitAmount"
	Location string `json:"location"` // body, query, path or header
	Reason   string `json:"reason"`   // machine-readable: required, unknown_field, out_of_range, ...
	Message  string `json:"message"`  // what to change
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "remit: %d %s: %s", e.StatusCode, e.Code, e.Message)
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

// Reason is details.reason (for example duplicate_id, idempotency_key_reused, invalid_state).
func (e *Error) Reason() string { s, _ := e.Details["reason"].(string); return s }

// CurrentState is details.currentState of a 409 on a resource whose state forbids the action.
func (e *Error) CurrentState() string { s, _ := e.Details["currentState"].(string); return s }

// Field returns the problem with the named field of a 422, if any.
func (e *Error) Field(name string) (FieldError, bool) {
	for _, f := range e.Fields {
		if f.Field == name {
			return f, true
		}
	}
	return FieldError{}, false
}

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// errorDoer turns every answer that is not 2xx into an *Error.
type errorDoer struct{ next HttpRequestDoer }

func (d errorDoer) Do(req *http.Request) (*http.Response, error) {
	res, err := d.next.Do(req)
	if err != nil || (res.StatusCode >= 200 && res.StatusCode < 300) {
		return res, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	e := &Error{StatusCode: res.StatusCode, RequestID: res.Header.Get("Request-Id"),
		IdempotencyKey: req.Header.Get("Idempotency-Key"), RetryAfter: res.Header.Get("Retry-After")}
	var env struct {
		Error struct {
			Code      string         `json:"code"`
			Message   string         `json:"message"`
			RequestID string         `json:"requestId"`
			DocsURL   string         `json:"docsUrl"`
			Details   map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error.Code == "" {
		e.Message = fmt.Sprintf("%s from %s %s: %s", res.Status, req.Method, req.URL.Path, snippet(body))
		return nil, e
	}
	e.Code, e.Message, e.DocsURL, e.Details = env.Error.Code, env.Error.Message, env.Error.DocsURL, env.Error.Details
	if env.Error.RequestID != "" {
		e.RequestID = env.Error.RequestID
	}
	if raw, ok := e.Details["fields"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &e.Fields)
	}
	return nil, e
}

func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = append(b[:200:200], "..."...)
	}
	return string(b)
}

// Ptr returns a pointer to v, for the optional fields of request bodies:
// client.Ptr("cus_acme"), client.Ptr[int64](4900).
func Ptr[T any](v T) *T { return &v }

// Bootstrap is what `remit bootstrap --json` prints: the organization, its API key (shown once)
// and its merchant account in each environment.
type Bootstrap struct {
	OrganizationID   string            `json:"organizationId"`
	APIKey           string            `json:"apiKey"`
	MerchantAccounts map[string]string `json:"merchantAccounts"` // by environment
}

// ReadBootstrap reads the output of `remit bootstrap --json` saved in the file at path.
func ReadBootstrap(path string) (Bootstrap, error) {
	var b Bootstrap
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &b)
	}
	if err == nil && b.APIKey == "" {
		err = errors.New("no apiKey")
	}
	if err != nil {
		return b, fmt.Errorf("%s: want the JSON printed by `remit bootstrap --json` (%v)", path, err)
	}
	return b, nil
}
