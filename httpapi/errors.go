package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/remit-billing/remit"
)

// statusOf is the one table pairing error codes with HTTP statuses (docs/api-conventions.md "Errors").
var statusOf = map[remit.Code]int{
	remit.EBadRequest:             http.StatusBadRequest,
	remit.EUnauthorized:           http.StatusUnauthorized,
	remit.EForbidden:              http.StatusForbidden,
	remit.ENotFound:               http.StatusNotFound,
	remit.EConflict:               http.StatusConflict,
	remit.EInvalid:                http.StatusUnprocessableEntity,
	remit.ERateLimited:            http.StatusTooManyRequests,
	remit.ENotImplemented:         http.StatusNotImplemented,
	remit.EInternal:               http.StatusInternalServerError,
	remit.ETaxProviderUnavailable: http.StatusServiceUnavailable,
}

// httpError is an error with a status of its own (405, 413, 503) that shares a code of the table.
type httpError struct {
	status int
	err    *remit.Error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

func withStatus(status int, err *remit.Error) error { return &httpError{status: status, err: err} }

// errorBody is the seed's error envelope.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code      remit.Code     `json:"code"`
	Message   string         `json:"message"`
	RequestID string         `json:"requestId"`
	DocsURL   string         `json:"docsUrl"`
	Details   map[string]any `json:"details,omitempty"`
}

// toEnvelope converts any error to its status and envelope. Causes of internal errors are never
// part of the envelope.
func (s *Server) toEnvelope(err error, requestID string) (int, errorBody) {
	status := 0
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
		err = he.err
	}
	var e *remit.Error
	if !errors.As(err, &e) {
		e = remit.Internal(err)
	}
	if status == 0 {
		status = statusOf[e.Code]
		if status == 0 {
			status = http.StatusInternalServerError
		}
		// The store could not be reached: the same internal_error, answered 503 (retry later;
		// nothing was applied). The one place this mapping lives.
		if e.Code == remit.EInternal && s.eng.Health.Unavailable(err) {
			status = http.StatusServiceUnavailable
		}
	}
	details := map[string]any{}
	for k, v := range e.Details {
		details[k] = v
	}
	if len(e.Fields) > 0 {
		details["fields"] = e.Fields
	}
	if len(details) == 0 {
		details = nil
	}
	return status, errorBody{Error: errorObject{
		Code: e.Code, Message: e.Message, RequestID: requestID,
		DocsURL: s.cfg.PublicURL + "/docs/errors#" + string(e.Code), Details: details,
	}}
}

// validationError converts kin-openapi's request validation error (nil when the contract is met)
// and the problems found beside it into one validation_failure listing every field.
func validationError(err error, more ...remit.FieldError) *remit.Error {
	var fields []remit.FieldError
	var collect func(error)
	collect = func(err error) {
		// Type assertions, not errors.As: kin-openapi's MultiError.As matches too deep.
		if me, ok := err.(openapi3.MultiError); ok {
			for _, e := range me {
				collect(e)
			}
			return
		}
		if re, ok := err.(*openapi3filter.RequestError); ok {
			switch {
			case re.Parameter != nil:
				loc := re.Parameter.In
				name := re.Parameter.Name
				fields = append(fields, paramField(loc, name, re))
			case re.RequestBody != nil:
				inner := re.Err
				var pe *openapi3filter.ParseError
				if errors.As(inner, &pe) {
					fields = append(fields, remit.FieldError{Field: "body", Location: remit.InBody, Reason: "malformed", Message: "The body is not valid JSON."})
					return
				}
				schemaFields(inner, &fields)
			default:
				fields = append(fields, remit.FieldError{Field: "request", Location: remit.InBody, Reason: "invalid", Message: "The request does not match the API contract; compare it with the operation in /openapi.yaml or /docs."})
			}
			return
		}
		schemaFields(err, &fields)
	}
	if err != nil {
		collect(err)
	}
	fields = dedupe(append(fields, more...))
	return remit.Invalid(fields...)
}

func paramField(loc, name string, re *openapi3filter.RequestError) remit.FieldError {
	f := remit.FieldError{Field: name, Location: loc}
	var se *openapi3.SchemaError
	var pe *openapi3filter.ParseError
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired) || strings.Contains(re.Reason, "required"):
		f.Reason, f.Message = "required", fmt.Sprintf("The %s parameter '%s' is required.", loc, name)
	case errors.As(re.Err, &pe) && isIntegerLiteral(pe.Value):
		// An integer past int64, as in a body (beyondContract): a bound, not a type.
		f.Reason, f.Message = "out_of_range", fmt.Sprintf("The %s parameter '%s' is beyond the integers this API takes (64-bit).", loc, name)
	case errors.As(re.Err, &pe):
		f.Reason, f.Message = "invalid_type", fmt.Sprintf("The %s parameter '%s' %s.", loc, name, typeRequirement(re.Parameter.Schema))
	case errors.As(re.Err, &se):
		if rf, ok := ruleProblem(name, se); ok { // a CurrencyCode filter: the rule's reason, as in a body
			rf.Location = loc
			return rf
		}
		f.Reason = reasonOf(se)
		f.Message = fmt.Sprintf("The %s parameter '%s' %s.", loc, name, requirement(se))
	default:
		f.Reason, f.Message = "invalid", fmt.Sprintf("The %s parameter '%s' does not match the API contract; see its definition in /openapi.yaml or /docs.", loc, name)
	}
	return f
}

// isIntegerLiteral reports whether a parameter's raw value is written as an integer.
func isIntegerLiteral(v any) bool {
	str, ok := v.(string)
	return ok && integerLiteral.MatchString(str)
}

var integerLiteral = regexp.MustCompile(`^[+-]?[0-9]+$`)

func schemaFields(err error, out *[]remit.FieldError) {
	if me, ok := err.(openapi3.MultiError); ok {
		for _, e := range me {
			schemaFields(e, out)
		}
		return
	}
	se, ok := err.(*openapi3.SchemaError)
	if !ok {
		*out = append(*out, remit.FieldError{Field: "body", Location: remit.InBody, Reason: "invalid", Message: "The body does not match the API contract; compare it with the operation's request schema in /openapi.yaml or /docs."})
		return
	}
	// oneOf/anyOf/allOf wrap their branches' errors: report those.
	if se.Origin != nil {
		if inner, ok := se.Origin.(openapi3.MultiError); ok && len(inner) > 0 {
			schemaFields(inner, out)
			return
		}
	}
	ptr := se.JSONPointer()
	if f, ok := ruleProblem(pointerToField(ptr), se); ok {
		*out = append(*out, f)
		return
	}
	if reasonOf(se) == "unknown_field" {
		if m := unsupportedProperty.FindStringSubmatch(se.Reason); m != nil {
			ptr = append(ptr, m[1])
		}
		if f, ok := immutableProblem(se.Schema, ptr); ok {
			*out = append(*out, f)
			return
		}
	}
	field := pointerToField(ptr)
	*out = append(*out, remit.FieldError{Field: field, Location: remit.InBody, Reason: reasonOf(se), Message: fieldMessage(field, se)})
}

// ruleProblem words the failure of a schema that names its rule (x-remit-rule: CurrencyCode,
// CountryCode, EventTypeFilter, a bank account number) as that rule does (remit.ValueRules), so a
// value is refused with one reason whichever layer sees it first.
func ruleProblem(field string, se *openapi3.SchemaError) (remit.FieldError, bool) {
	v, isString := se.Value.(string)
	if se.Schema == nil || !isString || (se.SchemaField != "enum" && se.SchemaField != "pattern") {
		return remit.FieldError{}, false
	}
	name, _ := se.Schema.Extensions["x-remit-rule"].(string)
	rule, ok := remit.ValueRules[name]
	if !ok {
		return remit.FieldError{}, false
	}
	var p remit.Problems
	rule(&p, field, v)
	if fs := p.Fields(); len(fs) > 0 {
		return fs[0], true
	}
	return remit.FieldError{}, false
}

var unsupportedProperty = regexp.MustCompile(`property "([^"]*)" is unsupported`)

// immutableProblem words a field a merge patch may not carry as its update rule does, when the
// field is one of the resource's that cannot change (422 immutable_field, not unknown_field): the
// patch schema names its rule (x-remit-patch, remit.PatchRules).
func immutableProblem(sc *openapi3.Schema, ptr []string) (remit.FieldError, bool) {
	if sc == nil || len(ptr) != 1 {
		return remit.FieldError{}, false
	}
	name, _ := sc.Extensions["x-remit-patch"].(string)
	rule, ok := remit.PatchRules[name]
	if !ok {
		return remit.FieldError{}, false
	}
	return rule.ImmutableProblem(ptr[0])
}

// pointerToField turns ["lines","0","amount"] into "lines[0].amount".
func pointerToField(ptr []string) string {
	var b strings.Builder
	for _, p := range ptr {
		if _, err := strconv.Atoi(p); err == nil && b.Len() > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// reasonOf maps the schema keyword that failed to a stable machine-readable reason. null where
// the schema takes none is invalid_type whichever keyword saw it first (an enum does).
func reasonOf(se *openapi3.SchemaError) string {
	if se.Value == nil && se.SchemaField == "enum" {
		return "invalid_type"
	}
	switch se.SchemaField {
	case "required":
		return "required"
	case "additionalProperties", "properties":
		if strings.Contains(se.Reason, "unsupported") {
			return "unknown_field"
		}
		return "invalid"
	case "enum":
		return "invalid_enum"
	case "type", "nullable":
		return "invalid_type"
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return "out_of_range"
	case "minLength", "maxLength":
		return "invalid_length"
	case "minItems", "maxItems", "uniqueItems":
		return "invalid_count"
	case "minProperties", "maxProperties":
		return "too_many_keys"
	case "pattern", "format":
		return "invalid_format"
	default:
		return "invalid"
	}
}

// safeReason is kin-openapi's reason text, which by its contract never contains the value.
func safeReason(se *openapi3.SchemaError) string {
	r := se.Reason
	if len(r) > 300 {
		r = r[:300]
	}
	return r
}

func fieldMessage(field string, se *openapi3.SchemaError) string {
	if se.Value == nil && se.SchemaField == "enum" {
		return fmt.Sprintf("%s may not be null; leave the field out instead.", field)
	}
	switch reasonOf(se) {
	case "required":
		return fmt.Sprintf("%s is required: add it to the request body.", field)
	case "unknown_field":
		return fmt.Sprintf("%s is not a field of this request; remove it (free-form keys belong in metadata).", field)
	}
	return fmt.Sprintf("%s %s.", field, requirement(se))
}

// requirement says, from the schema keyword that failed, what the value must be ("must be one
// of a, b", "must be at most 100"). It reads only the schema, never the value sent.
func requirement(se *openapi3.SchemaError) string {
	sc := se.Schema
	if sc == nil {
		return "is invalid: " + safeReason(se)
	}
	switch se.SchemaField {
	case "enum":
		vals := make([]string, 0, len(sc.Enum))
		for _, v := range sc.Enum {
			vals = append(vals, fmt.Sprint(v))
		}
		return "must be one of " + strings.Join(vals, ", ")
	case "type":
		return typeRequirement(&openapi3.SchemaRef{Value: sc})
	case "nullable":
		return "may not be null; leave the field out instead"
	case "minimum", "exclusiveMinimum":
		if sc.Min != nil {
			if sc.ExclusiveMin.IsTrue() {
				return "must be greater than " + number(*sc.Min)
			}
			return "must be at least " + number(*sc.Min)
		}
	case "maximum", "exclusiveMaximum":
		if sc.Max != nil {
			if sc.ExclusiveMax.IsTrue() {
				return "must be less than " + number(*sc.Max)
			}
			return "must be at most " + number(*sc.Max)
		}
	case "minLength", "minItems", "maxLength", "maxItems", "maxProperties":
		if s := countBound(se.SchemaField, sc); s != "" {
			return s
		}
	case "uniqueItems":
		return "must not list the same item twice"
	case "pattern":
		if d, ok := patternMeaning[sc.Pattern]; ok {
			return d
		}
		return "must match the pattern " + sc.Pattern
	case "format":
		switch sc.Format {
		case "date-time":
			return "must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z"
		case "date":
			return "must be a date such as 2025-01-31"
		}
		return "must be in " + sc.Format + " format"
	}
	return "is invalid: " + safeReason(se)
}

// typeWords words the contract's types, in the order they are tried.
var typeWords = [][2]string{{"integer", "must be an integer"}, {"number", "must be a number"}, {"string", "must be a string"},
	{"boolean", "must be true or false"}, {"array", "must be an array"}, {"object", "must be an object"}}

// countWords words the contract's count bounds: its one-item wording (minimums of 1), its
// wording of n.
var countWords = map[string][2]string{
	"minLength":     {"must not be empty", "must be at least %d characters long"},
	"minItems":      {"needs at least one item", "needs at least %d items"},
	"maxLength":     {"", "must be at most %d characters long"},
	"maxItems":      {"", "may have at most %d items"},
	"maxProperties": {"", "may have at most %d keys"},
}

// countBound words a count bound of sc ("" when the schema has none).
func countBound(field string, sc *openapi3.Schema) string {
	n := map[string]*uint64{"minLength": &sc.MinLength, "minItems": &sc.MinItems, "maxLength": sc.MaxLength,
		"maxItems": sc.MaxItems, "maxProperties": sc.MaxProps}[field]
	w := countWords[field]
	switch {
	case n == nil:
		return ""
	case *n == 1 && w[0] != "":
		return w[0]
	}
	return fmt.Sprintf(w[1], *n)
}

// patternMeaning describes the contract's patterns in words.
var patternMeaning = map[string]string{
	`^[A-Za-z0-9_.:-]+$`: "must be 1 to 255 characters of letters, digits and _ . : -",
	`^[A-Z]{2}$`:         "must be an ISO 3166-1 alpha-2 country code in upper case, such as US",
	`^[A-Z]{3}$`:         "must be an ISO 4217 currency code in upper case, such as USD",
	`^[0-9]{4}$`:         "must be four digits, such as 5814",
}

// typeRequirement says which JSON type the schema takes.
func typeRequirement(s *openapi3.SchemaRef) string {
	if s == nil || s.Value == nil || s.Value.Type == nil {
		return "has the wrong type"
	}
	for _, w := range typeWords {
		if s.Value.Type.Is(w[0]) {
			return w[1]
		}
	}
	return "has the wrong type"
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func dedupe(fields []remit.FieldError) []remit.FieldError {
	seen := map[string]bool{}
	out := fields[:0]
	for _, f := range fields {
		k := f.Location + "|" + f.Field + "|" + f.Reason
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Location < out[j].Location })
	return out
}

// beyondContract checks what OpenAPI 3.0 cannot say about a body, following it along its schema:
// metadata keys (no propertyNames in 3.0: remit.MetadataProblems on every object whose schema is
// the Metadata component, or UsageProperties, which has its limits), and integers beyond int64 in integer fields (kin-openapi reads numbers
// as float64, in which 2^63 and 2^63 − 1 are one value, so such a number passes its bounds and
// would fail only when decoded). It returns the two kinds apart: a bound is a contract problem,
// answered at once; metadata problems are merged with the operation's own (withProblems).
func beyondContract(schema *openapi3.SchemaRef, body []byte) (metadata, bounds []remit.FieldError) {
	if schema == nil || (!longNumber(body) && keysWithin(body, remit.MetadataMaxKeyLen)) {
		return nil, nil // no number past int64's digits, no key a metadata rule could refuse
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil
	}
	var walk func(s *openapi3.SchemaRef, v any, path []string)
	walk = func(s *openapi3.SchemaRef, v any, path []string) {
		if s == nil || s.Value == nil {
			return
		}
		if strings.HasSuffix(s.Ref, "/schemas/Metadata") || strings.HasSuffix(s.Ref, "/schemas/UsageProperties") {
			metadata = append(metadata, metadataFields(v, pointerToField(path))...)
			return
		}
		if strings.HasSuffix(s.Ref, "/schemas/MetadataPatch") {
			// A patch's keys: the number of keys is the merged metadata's, which the engine checks.
			for _, f := range metadataFields(v, pointerToField(path)) {
				if f.Reason != "too_many_keys" {
					metadata = append(metadata, f)
				}
			}
			return
		}
		if n, ok := v.(json.Number); ok && s.Value.Type.Is("integer") {
			if f, ok := int64Bound(n, s.Value, pointerToField(path)); !ok {
				bounds = append(bounds, f)
			}
			return
		}
		for _, sub := range slices.Concat(s.Value.AllOf, s.Value.OneOf, s.Value.AnyOf) {
			walk(sub, v, path)
		}
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if ps := s.Value.Properties[k]; ps != nil {
					walk(ps, e, append(slices.Clone(path), k))
				}
			}
		case []any:
			for i, e := range t {
				walk(s.Value.Items, e, append(slices.Clone(path), strconv.Itoa(i)))
			}
		}
	}
	walk(schema, doc, nil)
	return metadata, bounds
}

// metadataFields are the problems of one metadata object at field.
func metadataFields(v any, field string) []remit.FieldError {
	m, _ := v.(map[string]any)
	md := make(map[string]string, len(m))
	for k, e := range m {
		str, _ := e.(string)
		md[k] = str
	}
	var p remit.Problems
	remit.MetadataProblems(&p, field, md)
	return p.Fields()
}

// int64Bound checks that an integer literal fits int64; ok is false with the problem when it
// does not. Fractions and exponents are left to the contract and the decoder.
func int64Bound(n json.Number, sc *openapi3.Schema, field string) (remit.FieldError, bool) {
	lit := string(n)
	if _, err := strconv.ParseInt(lit, 10, 64); !errors.Is(err, strconv.ErrRange) {
		return remit.FieldError{}, true
	}
	bound := "must be at most " + strconv.FormatInt(math.MaxInt64, 10)
	switch {
	case strings.HasPrefix(lit, "-") && sc.Min != nil:
		bound = "must be at least " + number(*sc.Min)
	case strings.HasPrefix(lit, "-"):
		bound = "must be at least " + strconv.FormatInt(math.MinInt64, 10)
	case sc.Max != nil:
		bound = "must be at most " + number(*sc.Max)
	}
	return remit.FieldError{Field: field, Location: remit.InBody, Reason: "out_of_range", Message: field + " " + bound + "."}, false
}

// longNumber reports whether body has a run of 19 digits or more, the only numbers that can pass
// int64 (a cheap test before a body is walked).
// keysWithin reports, in one pass over the bytes, whether every object key of a JSON body is 1 to
// max bytes long as written (escapes included). When it is, no metadata key can break the key
// rule (a character is at least a byte), and beyondContract need not decode the body: the common
// case of every write with metadata or usage properties. A malformed body answers true: the
// contract refuses it anyway.
func keysWithin(body []byte, max int) bool {
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		start := i + 1
		for i = start; i < len(body) && body[i] != '"'; i++ {
			if body[i] == '\\' {
				i++
			}
		}
		n := i - start
		j := i + 1
		for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
			j++
		}
		if j < len(body) && body[j] == ':' && (n == 0 || n > max) {
			return false // a key out of bounds
		}
	}
	return true
}

func longNumber(body []byte) bool {
	run := 0
	for _, c := range body {
		if c >= '0' && c <= '9' {
			if run++; run >= 19 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
