package api

import (
	"context"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Two kinds of rule in the contract are not checked by the schema validator but by the
// operation's own rule, which names every field involved (docs/api-conventions.md, "What the
// schema says"):
//
//   - how fields combine (oneOf, anyOf, not, discriminator): coupon percentOff or amountOff with
//     currency, clock advance to or seconds, the fields each priceType takes. A failed combinator
//     names no field, and kin-openapi stops at it, hiding the body's other problems;
//   - the value tables of a schema marked x-remit-rule (CurrencyCode, CountryCode): the rule tells
//     an ISO code the rails do not take (currency_not_supported) from no code at all
//     (invalid_currency), and an unassigned country from a malformed one.
//
// The generated-input test (httpapi/generated_input_test.go) holds the rules and the document to
// the same answers.

var (
	enforcedOnce sync.Once
	enforced     *openapi3.T
	enforcedErr  error
)

// Enforced is the contract as the request validator checks it: the document without the rules
// above, which the operations check themselves. It is a separate copy; Spec is unchanged.
func Enforced() (*openapi3.T, error) {
	enforcedOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(Document)
		if err != nil {
			enforcedErr = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			enforcedErr = err
			return
		}
		doc.Servers = nil
		StripOperationRules(doc)
		enforced = doc
	})
	return enforced, enforcedErr
}

// StripOperationRules removes from every schema of doc the rules its operations check themselves
// (see above), leaving each schema's fields and their own bounds.
func StripOperationRules(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var strip func(r *openapi3.SchemaRef)
	strip = func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		s := r.Value
		seen[s] = true
		s.OneOf, s.AnyOf, s.Not, s.Discriminator = nil, nil, nil, nil
		if _, ok := s.Extensions["x-remit-rule"]; ok {
			s.Enum, s.Pattern = nil, ""
		}
		for _, p := range s.Properties {
			strip(p)
		}
		strip(s.Items)
		strip(s.AdditionalProperties.Schema)
		for _, a := range s.AllOf {
			strip(a)
		}
	}
	for _, r := range doc.Components.Schemas {
		strip(r)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					strip(mt.Schema)
				}
			}
			for _, p := range op.Parameters {
				if p.Value != nil {
					strip(p.Value.Schema)
				}
			}
		}
	}
}
