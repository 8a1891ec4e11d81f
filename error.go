package remit

import (
	"errors"
	"fmt"
)

// Code is an error code of the public error envelope. The HTTP status each code maps to lives in
// one table in package httpapi (status.go).
type Code string

const (
	EBadRequest     Code = "bad_request"
	EUnauthorized   Code = "unauthorized"
	EForbidden      Code = "forbidden"
	ENotFound       Code = "not_found"
	EConflict       Code = "conflict"
	ERateLimited    Code = "rate_limited"
	EInvalid        Code = "validation_failure"
	ENotImplemented Code = "not_implemented"
	EInternal       Code = "internal_error"
	// ETaxProviderUnavailable (503): the tax provider (REMIT_TAX_PROVIDER=stripe) did not answer
	// an action that needs its answer; nothing was applied.
	ETaxProviderUnavailable Code = "tax_provider_unavailable"
)

// Field locations used in FieldError.Location.
const (
	InBody   = "body"
	InQuery  = "query"
	InPath   = "path"
	InHeader = "header"
)

// FieldError is one problem with one input field. A validation error carries every problem found.
type FieldError struct {
	Field    string `json:"field"`
	Location string `json:"location"`
	Reason   string `json:"reason"`
	Message  string `json:"message,omitempty"`
}

// Error is the one error type the domain returns to its callers. Message is safe to show to the
// API caller; Err (the cause) never is.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// With returns e with one more details entry.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Errorf returns an *Error with the given code and a caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports that a resource is not visible to the caller. field names where the reference
// came from ("customerId", "lines[2].priceId"), or is empty for the path's own resource.
func NotFound(resource, id, field string) *Error {
	e := Errorf(ENotFound, "No such %s: '%s'.", resource, id)
	e.With("resource", resource)
	if field != "" {
		e.With("field", field)
	}
	return e
}

// StateConflict reports an action that the resource's current state does not allow.
func StateConflict[S ~string](resource, id string, state S, action string) *Error {
	msg := fmt.Sprintf("The %s '%s' is %s and cannot be %s.", resource, id, state, action)
	if string(state) == action {
		msg = fmt.Sprintf("The %s '%s' is already %s.", resource, id, state)
	}
	return Errorf(EConflict, "%s", msg).With("currentState", string(state)).With("reason", "invalid_state")
}

// Duplicate reports a caller-chosen ID that is already taken.
func Duplicate(resource, field, id string) *Error {
	return Errorf(EConflict, "A %s with %s '%s' already exists.", resource, field, id).
		With("reason", "duplicate_id").With("field", field)
}

// Internal wraps an unexpected fault. Its message never reveals the cause.
func Internal(err error) *Error {
	return &Error{Code: EInternal, Message: "An internal error occurred. Retry the request; if it persists, contact the operator with the request ID.", Err: err}
}

// ErrorCode returns the code of err, EInternal for anything that is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Problems collects field problems so that a validation error lists all of them, not only the
// first. The zero value is ready to use.
type Problems struct{ list []FieldError }

// Add records one problem.
func (p *Problems) Add(location, field, reason, message string) {
	p.list = append(p.list, FieldError{Field: field, Location: location, Reason: reason, Message: message})
}

// Body records a problem with a body field.
func (p *Problems) Body(field, reason, message string) { p.Add(InBody, field, reason, message) }

// Merge appends other's problems.
func (p *Problems) Merge(other Problems) { p.list = append(p.list, other.list...) }

// Len is the number of problems recorded.
func (p *Problems) Len() int { return len(p.list) }

// Err returns nil when nothing was recorded, else a validation_failure *Error listing every problem.
func (p *Problems) Err() error {
	if len(p.list) == 0 {
		return nil
	}
	return Invalid(p.list...)
}

// Fields returns every problem recorded, in order.
func (p *Problems) Fields() []FieldError { return p.list }

// Invalid returns a validation_failure error listing fields.
func Invalid(fields ...FieldError) *Error {
	msg := "The request does not match the API contract; compare it with the operation in /openapi.yaml."
	if len(fields) == 1 {
		if fields[0].Message != "" {
			msg = fields[0].Message
		} else {
			msg = fmt.Sprintf("%s is invalid: %s.", fields[0].Field, fields[0].Reason)
		}
	} else if len(fields) > 1 {
		msg = fmt.Sprintf("The request has %d invalid fields; see error.details.fields.", len(fields))
	}
	return &Error{Code: EInvalid, Message: msg, Fields: fields}
}

// AtField names where a reference came from ("customerId", "lines[2].priceId") on a not_found
// error: the store reports what is missing, the engine adds which field of the request named it.
// Any other error, or nil, is returned as it is.
func AtField(err error, field string) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != ENotFound || field == "" {
		return err
	}
	out := *e
	out.Details = map[string]any{}
	for k, v := range e.Details {
		out.Details[k] = v
	}
	out.Details["field"] = field
	return &out
}

// ErrorMessage is the message of a domain error (the API's words), or "" for any other error.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// FieldMessages maps each field of a validation failure to its first message (nil for any other
// error): what a form shows next to each field.
func FieldMessages(err error) map[string]string {
	var e *Error
	if !errors.As(err, &e) || e.Code != EInvalid || len(e.Fields) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, f := range e.Fields {
		if _, ok := out[f.Field]; !ok {
			out[f.Field] = f.Message
		}
	}
	return out
}
