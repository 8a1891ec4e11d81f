package api

import (
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// The document leaves its answers' objects open (a client must accept a field added later), but
// the server must send no field the document does not declare, or no client generated from it
// would see that field. The tests check every answer against Strict, a view of the document in
// which every object of an answer is closed (docs/api-conventions.md, "The contract is strict
// both ways"). A map that takes any key says so in the document with its additionalProperties
// (metadata: strings; a usage event's properties), and stays as it says.

var strict = view(CloseResponses)

// Strict is the contract as the tests check answers: every object schema an operation's response
// reaches that does not state additionalProperties gets additionalProperties: false. allOf is
// merged into the schema that holds it (its members' properties become the schema's own); a
// oneOf or anyOf whose members declare properties stays open and its members are closed instead
// (see closeObject). It is a separate copy; Spec is unchanged.
func Strict() (*openapi3.T, error) { return strict() }

// CloseResponses closes, in place, every object schema reachable from a response of doc (see
// Strict). Request bodies and parameters are left as they are, except where they share a schema
// with a response.
func CloseResponses(doc *openapi3.T) {
	var roots []*openapi3.SchemaRef
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			for _, res := range op.Responses.Map() {
				if res.Value == nil {
					continue
				}
				for _, mt := range res.Value.Content {
					roots = append(roots, mt.Schema)
				}
			}
		}
	}
	flat := walker{seen: map[*openapi3.Schema]bool{}, visit: flattenAllOf}
	closed := walker{seen: map[*openapi3.Schema]bool{}, visit: closeObject}
	for _, r := range roots {
		flat.walk(r)
	}
	for _, r := range roots {
		closed.walk(r)
	}
}

// walker applies visit to every schema under a root once, parents before their children. It
// does not enter not: a closed schema there would turn the rule around.
type walker struct {
	seen  map[*openapi3.Schema]bool
	visit func(w walker, s *openapi3.Schema)
}

func (w walker) walk(r *openapi3.SchemaRef) {
	if r == nil || r.Value == nil || w.seen[r.Value] {
		return
	}
	s := r.Value
	w.seen[s] = true
	w.visit(w, s)
	for _, p := range s.Properties {
		w.walk(p)
	}
	w.walk(s.Items)
	w.walk(s.AdditionalProperties.Schema)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, m := range list {
			w.walk(m)
		}
	}
}

// flattenAllOf moves into s the properties, required names, type and additionalProperties of its
// allOf members that describe objects (each flattened first); a member of another kind (a string
// format, say) stays in allOf. Closed separately, the members would each refuse the others'
// fields.
func flattenAllOf(w walker, s *openapi3.Schema) {
	var keep openapi3.SchemaRefs
	for _, m := range s.AllOf {
		if m == nil || m.Value == nil || !objectLike(m.Value) && len(m.Value.AllOf) == 0 {
			keep = append(keep, m)
			continue
		}
		w.walk(m)
		mergeInto(s, m.Value)
	}
	s.AllOf = keep
}

// closeObject gives an object schema without additionalProperties additionalProperties: false.
// When members of its oneOf or anyOf declare properties, s itself stays open and the members
// describe the whole object: each is closed in its turn, as a copy carrying the properties of s
// too when s has some of its own (a union of whole resources, such as EventObject, keeps its
// members as they are). Members that only state rules (required, not) are left alone.
func closeObject(_ walker, s *openapi3.Schema) {
	split := false
	for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for i, m := range list {
			if m == nil || m.Value == nil || len(m.Value.Properties) == 0 {
				continue
			}
			split = true
			if len(s.Properties) == 0 {
				continue
			}
			v := *m.Value
			mergeInto(&v, &openapi3.Schema{Properties: s.Properties, Required: s.Required})
			list[i] = &openapi3.SchemaRef{Ref: m.Ref, Value: &v}
		}
	}
	if !split && objectLike(s) && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		no := false
		s.AdditionalProperties.Has = &no
	}
}

// mergeInto adds m's properties, required names, type and explicit additionalProperties to s,
// without changing the maps and lists s shares with other schemas. A property both declare
// becomes a merged copy of the two (mergedCopy), so that both still apply.
func mergeInto(s, m *openapi3.Schema) {
	props := maps.Clone(s.Properties)
	if props == nil {
		props = openapi3.Schemas{}
	}
	for k, p := range m.Properties {
		if mine, ok := props[k]; ok && mine.Value != p.Value {
			props[k] = mergedCopy(mine, p)
		} else {
			props[k] = p
		}
	}
	s.Properties = props
	req := slices.Clone(s.Required)
	for _, k := range m.Required {
		if !slices.Contains(req, k) {
			req = append(req, k)
		}
	}
	s.Required = req
	if s.Type == nil || len(*s.Type) == 0 {
		s.Type = m.Type
	}
	if s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		s.AdditionalProperties = m.AdditionalProperties
	}
}

// mergedCopy is one schema for a property two allOf members declare: a's copy with b's
// properties merged in, and the two item schemas of an array merged the same way. It takes null
// only if both do.
func mergedCopy(a, b *openapi3.SchemaRef) *openapi3.SchemaRef {
	if a.Value == nil || b.Value == nil {
		return a
	}
	v := *a.Value
	mergeInto(&v, b.Value)
	v.Nullable = a.Value.Nullable && b.Value.Nullable
	if v.Description == "" {
		v.Description = b.Value.Description
	}
	if a.Value.Items != nil && b.Value.Items != nil {
		v.Items = mergedCopy(a.Value.Items, b.Value.Items)
	} else if v.Items == nil {
		v.Items = b.Value.Items
	}
	return &openapi3.SchemaRef{Value: &v}
}

// objectLike reports whether s describes an object: its type says so, or it declares properties.
func objectLike(s *openapi3.Schema) bool {
	return s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0
}
