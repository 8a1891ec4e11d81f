package api

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// One kind of rule in the contract is not checked by the schema validator but by the operation's
// own rule, which names every field involved (docs/api-conventions.md, "What the schema says"):
// how fields combine (oneOf, anyOf, not, discriminator), such as coupon percentOff or amountOff
// with currency, clock advance to or seconds, the fields each priceType takes. A failed combinator
// names no field, and kin-openapi stops at it, hiding the body's other problems. (A value table or
// pattern marked x-remit-rule, such as CurrencyCode, is checked by the validator as usual; the edge
// words its failure with the rule of that name, remit.ValueRules.) The generated-input test
// (httpapi/generated_input_test.go) holds the rules and the document to the same answers.

var enforced = view(StripOperationRules)

// Enforced is the contract as the request validator checks it: the document without the rules
// above, which the operations check themselves. It is a separate copy; Spec is unchanged.
func Enforced() (*openapi3.T, error) { return enforced() }

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
		if JudgedEach(s) {
			// Each item is judged by its own operation's rules, item by item (a batch's events):
			// the validator checks the array, not its items.
			s.Items = openapi3.NewSchemaRef("", &openapi3.Schema{})
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

// JudgedEach reports whether a schema is an array whose items are each judged by the rules of
// another operation, one at a time, and answered item by item (x-remit-judged-each: the events of
// POST /v1/usage-events/batch): the request validator checks the array's bounds, not its items.
func JudgedEach(s *openapi3.Schema) bool {
	v, ok := s.Extensions["x-remit-judged-each"].(bool)
	return ok && v
}
