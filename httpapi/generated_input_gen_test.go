package httpapi_test

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"
)

// The generator behind TestGeneratedInput: it draws values from the contract's schemas (the whole
// document, combinators and x-remit-rule tables included), and breaks them one rule at a time.

// gen draws request values for one operation.
type gen struct {
	t    *rapid.T
	pool map[string][]string // existing IDs by field or parameter name, drawn from most of the time
	own  string              // the ID field of what the operation creates: drawn new, never from the pool
	now  time.Time           // real time when the check started, plus an hour
	// merchantNow reads the sandbox clock, which advances move past real time.
	merchantNow func() time.Time
	// foreign: the operation's body is another system's (a processor's webhook), which the text
	// rule leaves alone.
	foreign bool
}

// refusedText draws a string the text rule refuses in every field (docs/security.md, "Input
// characters"): a control character or a bidirectional override or isolate among letters.
func (g *gen) refusedText(label string) string {
	return "a" + rapid.SampledFrom([]string{"\u202e", "\u202a", "\u2066", "\u2069", "\u0007", "\u001b", "\u007f", "\u0085", "\u009b"}).Draw(g.t, label) + "b"
}

// value draws a value the schema accepts. name is the field's name (for the pool of IDs).
func (g *gen) value(ref *openapi3.SchemaRef, name, label string) any {
	s := ref.Value
	if ids, ok := g.pool[name]; ok && len(ids) > 0 && name != g.own && rapid.IntRange(0, 9).Draw(g.t, label+".known") < 8 {
		return rapid.SampledFrom(ids).Draw(g.t, label+".id")
	}
	if len(s.Enum) > 0 {
		return rapid.SampledFrom(s.Enum).Draw(g.t, label)
	}
	if name == g.own && name != "" {
		// What the operation creates gets an ID no drawn reference can name: a reference drawn
		// at random must not find, in a later check, a resource unlike the test's fixtures.
		return "new-" + g.str(s, label)
	}
	switch {
	case s.Type.Is("object"):
		return g.object(s, label)
	case s.Type.Is("array"):
		n := rapid.IntRange(int(s.MinItems), int(min(bound(s.MaxItems, 3), s.MinItems+3))).Draw(g.t, label+".len")
		out := make([]any, 0, n)
		for i := range n {
			out = append(out, g.value(s.Items, name, fmt.Sprintf("%s[%d]", label, i)))
		}
		return out
	case s.Type.Is("integer"):
		lo, hi := int64(0), int64(1_000_000)
		if s.Min != nil {
			lo = int64(*s.Min)
		}
		if s.Max != nil {
			hi = int64(*s.Max)
		}
		hi = min(hi, lo+1_000_000)
		return rapid.Int64Range(lo, hi).Draw(g.t, label)
	case s.Type.Is("number"):
		lo, hi := 0, 1000
		if s.Min != nil {
			lo = int(*s.Min)
		}
		if s.Max != nil {
			hi = int(*s.Max)
		}
		return rapid.IntRange(lo, hi).Draw(g.t, label)
	case s.Type.Is("boolean"):
		return rapid.Bool().Draw(g.t, label)
	}
	return g.str(s, label)
}

// key draws an Idempotency-Key, made unique by a counter: a key drawn twice would replay or
// conflict (409) instead of answering the request.
func (g *gen) key(s *openapi3.Schema) string {
	keyCount++
	return g.str(s, "key") + "-" + strconv.Itoa(keyCount)
}

var keyCount int

// past draws a date-time up to a year before the check's start.
func (g *gen) past(label string) string {
	return g.now.Add(-time.Hour - time.Duration(rapid.IntRange(1, 365*24).Draw(g.t, label))*time.Hour).Format(time.RFC3339)
}

// str draws a string for the schema's format, pattern and length.
func (g *gen) str(s *openapi3.Schema, label string) string {
	format := s.Format
	if len(s.AnyOf) > 0 { // a string of one of several formats (an IP address)
		format = rapid.SampledFrom(s.AnyOf).Draw(g.t, label+".format").Value.Format
	}
	switch format {
	case "ipv4":
		return fmt.Sprintf("203.0.113.%d", rapid.IntRange(0, 255).Draw(g.t, label))
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", rapid.IntRange(0, 65535).Draw(g.t, label))
	case "date-time":
		return g.now.Add(time.Duration(rapid.IntRange(1, 365*24).Draw(g.t, label)) * time.Hour).Format(time.RFC3339)
	case "date":
		return g.now.AddDate(0, 0, rapid.IntRange(1, 365).Draw(g.t, label)).Format(time.DateOnly)
	case "email":
		return rapid.StringMatching(`[a-z][a-z0-9]{0,10}`).Draw(g.t, label) + "@example.com"
	case "uri":
		return "https://" + rapid.StringMatching(`[a-z]{1,10}`).Draw(g.t, label) + ".example.com/hooks"
	}
	lo, hi := int(s.MinLength), int(min(bound(s.MaxLength, 24), 24))
	lo = max(lo, 1) // no field of the API takes a blank string where it is optional
	var alphabet string
	switch s.Pattern {
	case "":
		alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 é"
	case `^[A-Za-z0-9_.:-]+$`:
		alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"
	case `^[!-~]+$`:
		alphabet = "!#$%&()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~"
	case `^[a-z0-9_.-]+$`:
		return rapid.StringMatching(`[a-z0-9][a-z0-9_.-]{0,20}`).Draw(g.t, label)
	case `^[0-9]{4}$`:
		return rapid.StringMatching(`[0-9]{4}`).Draw(g.t, label)
	case `^#[0-9a-fA-F]{6}$`:
		return rapid.StringMatching(`#[0-9a-fA-F]{6}`).Draw(g.t, label)
	case `^[0-9]{4}-[0-9]{2}$`: // a month, YYYY-MM (the revenue report)
		return fmt.Sprintf("%04d-%02d", rapid.IntRange(2000, 2100).Draw(g.t, label+".year"), rapid.IntRange(1, 12).Draw(g.t, label+".month"))
	case `^[0-9]{1,3}d$`:
		return fmt.Sprintf("%dd", rapid.IntRange(1, 60).Draw(g.t, label))
	case `^acct_[A-Za-z0-9]+$`:
		return "acct_" + rapid.StringMatching(`[A-Za-z0-9]{1,16}`).Draw(g.t, label)
	case `^[ -]*([A-Za-z0-9][ -]*){5,34}$`:
		return rapid.StringMatching(`[A-Za-z0-9]{5,20}( [0-9]{1,4})?`).Draw(g.t, label)
	default:
		g.t.Fatalf("%s: no generator for pattern %s", label, s.Pattern)
	}
	runes := []rune(alphabet)
	n := rapid.IntRange(lo, max(lo, hi)).Draw(g.t, label+".len")
	out := make([]rune, n)
	for i := range out {
		out[i] = rapid.SampledFrom(runes).Draw(g.t, label+".c")
	}
	out[0] = rapid.SampledFrom([]rune("abcXYZ019")).Draw(g.t, label+".first") // never blank
	return string(out)
}

// shape is what an object schema, with the combinator branches drawn for it, asks of a value.
type shape struct {
	props     openapi3.Schemas
	required  map[string]bool
	forbidden map[string]bool
}

// object draws an object: its required properties, some optional ones (none a drawn branch
// forbids), and for a map (metadata) a few keys within the x-propertyNames bounds.
func (g *gen) object(s *openapi3.Schema, label string) map[string]any {
	sh := g.shapeOf(s, label)
	out := map[string]any{}
	names := sortedKeys(sh.props)
	for _, name := range names {
		switch {
		case sh.required[name]:
		case sh.forbidden[name]:
			continue
		case !rapid.Bool().Draw(g.t, label+"."+name+"?"):
			continue
		}
		out[name] = g.value(sh.props[name], name, label+"."+name)
	}
	if ap := s.AdditionalProperties.Schema; ap != nil && len(s.Properties) == 0 {
		n := rapid.IntRange(0, 3).Draw(g.t, label+".keys")
		for i := range n {
			key := rapid.StringMatching(`[a-zA-Z][a-zA-Z0-9_é]{0,20}`).Draw(g.t, fmt.Sprintf("%s.key%d", label, i))
			out[key] = g.value(ap, "", label+"."+key)
		}
	}
	return out
}

// shapeOf applies to an object schema the branches of its combinators, drawn: a oneOf branch (by
// discriminator when there is one), one anyOf alternative; a branch's required fields become
// required, its not-required fields forbidden, its properties narrow the object's.
func (g *gen) shapeOf(s *openapi3.Schema, label string) shape {
	sh := shape{props: openapi3.Schemas{}, required: map[string]bool{}, forbidden: map[string]bool{}}
	for k, v := range s.Properties {
		sh.props[k] = v
	}
	for _, r := range s.Required {
		sh.required[r] = true
	}
	if len(s.OneOf) > 0 {
		var branch *openapi3.Schema
		if d := s.Discriminator; d != nil {
			key := rapid.SampledFrom(sortedKeys(d.Mapping)).Draw(g.t, label+"."+d.PropertyName)
			for _, b := range s.OneOf {
				if b.Ref == d.Mapping[key].Ref {
					branch = b.Value
				}
			}
			sh.props[d.PropertyName] = &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{key}}}
		} else {
			// Exactly one branch: the fields only another branch requires stay out.
			i := rapid.IntRange(0, len(s.OneOf)-1).Draw(g.t, label+".oneOf")
			branch = s.OneOf[i].Value
			for j, other := range s.OneOf {
				for _, r := range other.Value.Required {
					if j != i && !slices.Contains(branch.Required, r) {
						sh.forbidden[r] = true
					}
				}
			}
		}
		sh.apply(branch, g, label)
	}
	if len(s.AnyOf) > 0 {
		sh.apply(rapid.SampledFrom(s.AnyOf).Draw(g.t, label+".anyOf").Value, g, label)
	}
	if s.Not != nil {
		sh.forbid(s.Not.Value)
	}
	return sh
}

func (sh *shape) apply(b *openapi3.Schema, g *gen, label string) {
	for _, r := range b.Required {
		sh.required[r] = true
	}
	for k, v := range b.Properties {
		sh.props[k] = v
	}
	if b.Not != nil {
		sh.forbid(b.Not.Value)
	}
	if len(b.AnyOf) > 0 {
		sh.apply(rapid.SampledFrom(b.AnyOf).Draw(g.t, label+".anyOf").Value, g, label)
	}
}

// forbid reads a not: a field that may not be present (not required), or any of several (not
// anyOf required).
func (sh *shape) forbid(n *openapi3.Schema) {
	for _, r := range n.Required {
		sh.forbidden[r] = true
	}
	for _, a := range n.AnyOf {
		for _, r := range a.Value.Required {
			sh.forbidden[r] = true
		}
	}
}

// breach is one rule broken on purpose: the fields a 422 may name for it (one of them must be
// named) and what was done.
type breach struct {
	fields []string // as a 422 names them: lines[0].quantity, metadata
	rule   string
}

// breakOne breaks one rule of the object schema s in v (a value drawn by object), in place, and
// says which. It draws among every rule v's fields allow breaking, at any depth.
func (g *gen) breakOne(s *openapi3.Schema, v map[string]any) breach {
	var options []func() breach
	g.objectBreaches(s, v, nil, &options)
	if len(options) == 0 {
		g.t.Fatalf("no rule to break in %v", v)
	}
	return options[rapid.IntRange(0, len(options)-1).Draw(g.t, "breach")]()
}

type breaches = *[]func() breach

func at(path []string, name string) []string { return append(slices.Clone(path), name) }

func (g *gen) objectBreaches(s *openapi3.Schema, v map[string]any, path []string, out breaches) {
	add := func(rule string, fields []string, do func()) {
		*out = append(*out, func() breach { do(); return breach{fields: fields, rule: rule} })
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		add("unknown field", []string{fieldName(at(path, "unknownField"))}, func() { v["unknownField"] = 1 })
	}
	for _, r := range s.Required {
		if _, ok := v[r]; ok {
			add("required "+r, []string{fieldName(at(path, r))}, func() { delete(v, r) })
		}
	}
	for _, name := range sortedKeys(v) {
		ps, ok := s.Properties[name]
		if !ok {
			continue
		}
		g.valueBreaches(ps.Value, v, name, at(path, name), out)
	}
	g.combinatorBreaches(s, v, path, out)
}

// valueBreaches lists the ways to break the value of field name in parent (whose path is path).
func (g *gen) valueBreaches(s *openapi3.Schema, parent map[string]any, name string, path []string, out breaches) {
	f := []string{fieldName(path)}
	add := func(rule string, bad any) {
		*out = append(*out, func() breach { parent[name] = bad; return breach{fields: f, rule: rule} })
	}
	switch {
	case s.Type.Is("string"):
		add("type", 12345)
		if !g.foreign {
			add("characters", g.refusedText(f[0]))
		}
		if len(s.Enum) > 0 {
			add("enum", "not_a_value")
		}
		if s.MinLength > 0 {
			add("minLength", "")
		}
		if s.MaxLength != nil {
			add("maxLength", strings.Repeat("a", int(*s.MaxLength)+1))
		}
		if s.Pattern != "" {
			add("pattern", patternBreach(s.Pattern))
		}
		switch {
		case s.Format == "date-time", s.Format == "date", s.Format == "email", s.Format == "uri":
			add("format "+s.Format, "not a "+s.Format)
		case len(s.AnyOf) > 0:
			add("formats", "not an address")
		}
	case s.Type.Is("integer"), s.Type.Is("number"):
		add("type", "12")
		if s.Min != nil {
			add("minimum", int64(*s.Min)-1)
		}
		if s.Max != nil {
			add("maximum", int64(*s.Max)+1)
		}
	case s.Type.Is("boolean"):
		add("type", "true")
	case s.Type.Is("array"):
		add("type", "x")
		items, _ := parent[name].([]any)
		if s.MinItems > 0 {
			add("minItems", []any{})
		}
		if s.MaxItems != nil && len(items) > 0 {
			many := make([]any, *s.MaxItems+1)
			for i := range many {
				many[i] = items[0]
			}
			add("maxItems", many)
		}
		if len(items) > 0 {
			if m, ok := items[0].(map[string]any); ok {
				g.objectBreaches(s.Items.Value, m, at(path, "0"), out)
			} else {
				f = append(f, fieldName(at(path, "0")))
				add("item type", []any{map[string]any{}})
			}
		}
	case s.Type.Is("object"):
		add("type", "x")
		m, _ := parent[name].(map[string]any)
		if m == nil {
			return
		}
		if len(s.Properties) > 0 {
			g.objectBreaches(s, m, path, out)
			return
		}
		g.mapBreaches(s, m, path, out)
	}
}

// mapBreaches lists the ways to break a free-form map (metadata): its key bounds (the
// x-propertyNames extension), its value bound, its number of keys.
func (g *gen) mapBreaches(s *openapi3.Schema, m map[string]any, path []string, out breaches) {
	add := func(rule string, fields []string, do func()) {
		*out = append(*out, func() breach { do(); return breach{fields: fields, rule: rule} })
	}
	f := fieldName(path)
	if names, ok := s.Extensions["x-propertyNames"].(map[string]any); ok {
		if _, ok := names["minLength"]; ok {
			add("empty key", []string{f}, func() { m[""] = "v" })
		}
		if n, ok := names["maxLength"].(float64); ok {
			add("long key", []string{f}, func() { m[strings.Repeat("é", int(n)+1)] = "v" })
		}
	}
	if ap := s.AdditionalProperties.Schema; ap != nil && ap.Value.MaxLength != nil {
		add("long value", []string{f + ".k", f}, func() { m["k"] = strings.Repeat("a", int(*ap.Value.MaxLength)+1) })
	}
	if !g.foreign {
		bad := g.refusedText(f)
		add("characters in a value", []string{f + ".k"}, func() { m["k"] = bad })
		add("characters in a key", []string{f + ".kk"}, func() { m["k"+bad[1:len(bad)-1]+"k"] = "v" })
	}
	if s.MaxProps != nil {
		add("maxProperties", []string{f}, func() {
			for i := range int(*s.MaxProps) + 1 {
				m[fmt.Sprintf("k%d", i)] = "v"
			}
		})
	}
}

// combinatorBreaches lists the ways to break how an object's fields combine: both or neither
// branch of a oneOf, and for a discriminated oneOf a field the chosen branch requires left out or
// one it forbids added.
func (g *gen) combinatorBreaches(s *openapi3.Schema, v map[string]any, path []string, out breaches) {
	if len(s.OneOf) == 0 {
		return
	}
	add := func(rule string, fields []string, do func()) {
		*out = append(*out, func() breach { do(); return breach{fields: fields, rule: rule} })
	}
	if d := s.Discriminator; d != nil {
		key, _ := v[d.PropertyName].(string)
		var branch *openapi3.Schema
		for _, b := range s.OneOf {
			if ref, ok := d.Mapping[key]; ok && b.Ref == ref.Ref {
				branch = b.Value
			}
		}
		if branch == nil {
			return
		}
		for _, r := range branch.Required {
			if _, ok := v[r]; ok && r != d.PropertyName {
				add(key+" without "+r, []string{fieldName(at(path, r))}, func() { delete(v, r) })
			}
		}
		sh := shape{forbidden: map[string]bool{}}
		if branch.Not != nil {
			sh.forbid(branch.Not.Value)
		}
		for _, name := range sortedKeys(sh.forbidden) {
			if _, ok := v[name]; !ok {
				add(key+" with "+name, []string{fieldName(at(path, name))}, func() {
					v[name] = g.value(s.Properties[name], name, "forbidden."+name)
				})
			}
		}
		return
	}
	var all []string
	for _, b := range s.OneOf {
		all = append(all, b.Value.Required...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	fields := make([]string, len(all))
	for i, name := range all {
		fields[i] = fieldName(at(path, name))
	}
	add("every branch at once", fields, func() {
		for _, name := range all {
			if _, ok := v[name]; !ok {
				v[name] = g.value(s.Properties[name], name, "both."+name)
			}
		}
	})
	add("no branch", fields, func() {
		for _, name := range all {
			delete(v, name)
		}
	})
}

// patternBreach returns a value the pattern refuses: the first of a few candidates it does not
// match.
func patternBreach(pattern string) string {
	re := regexp.MustCompile(pattern)
	for _, c := range []string{"has space", "bad!value", "12a4", "x"} {
		if !re.MatchString(c) {
			return c
		}
	}
	panic("no candidate breaks the pattern " + pattern)
}

// bound returns *p, or def when the schema sets no bound.
func bound(p *uint64, def uint64) uint64 {
	if p == nil {
		return def
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fieldName turns a path into the 422's field name (lines[0].quantity).
func fieldName(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil && b.Len() > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
