package remit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Updates (docs/api-conventions.md "Updates"): PATCH /v1/{resource}/{id} takes a JSON merge patch
// (RFC 7396) of the resource's updatable fields. One rule applies every resource's patch
// (PatchRule.Apply): a member present replaces the field; null clears an optional field (and is
// refused on a field that cannot be empty); metadata merges key by key, a key set to null being
// deleted; a field of the resource that is not updatable is refused as immutable_field, every one
// in the same 422 as the patch's other problems. PatchRule.Previous then names what changed and
// what it was (an event's data.previousAttributes); a patch that changes nothing changes nothing.

// Patch is a merge patch: its members by name, each as the raw JSON it was sent as.
type Patch map[string]json.RawMessage

// ParsePatch reads a merge patch body (one JSON object; an empty body is the empty patch).
func ParsePatch(body []byte) (Patch, error) {
	p := Patch{}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, Errorf(EBadRequest, "A merge patch is one JSON object of the fields to change.")
	}
	return p, nil
}

// Has reports whether the patch has the member name.
func (p Patch) Has(name string) bool { _, ok := p[name]; return ok }

// isNull reports whether a member's value is JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// PatchField is one updatable field of a resource T.
type PatchField[T any] struct {
	Name string // the patch member, and the resource's field previousAttributes names (unless Attribute)
	// Attribute is the resource's field the member changes when it is named otherwise
	// (defaultPaymentMethodId changes defaultPaymentMethod).
	Attribute string
	Clearable bool // null clears it; on a field that is not, null is refused
	// Action, when set, is the action of the resource's status table the field's change is (the
	// state check of PatchRule.Conflict); "" changes in any state.
	Action string
	get    func(*T) any
	set    func(v *T, raw json.RawMessage, p *Problems)
	check  func(v *T, p *Problems)
	diff   func(before, after *T) (any, bool) // the previous value when it changed
}

// attribute is the resource field the member changes.
func (f PatchField[T]) attribute() string {
	if f.Attribute != "" {
		return f.Attribute
	}
	return f.Name
}

// Field is an updatable field held at *at(v): the member's JSON decodes into the field's Go type
// (null clears a pointer or a slice). check, when not nil, is the field's own rule on its new
// value.
func Field[T, V any](name string, clearable bool, at func(*T) *V, check func(v *T, p *Problems)) PatchField[T] {
	return PatchField[T]{
		Name: name, Clearable: clearable, check: check,
		get: func(v *T) any { return *at(v) },
		set: func(v *T, raw json.RawMessage, p *Problems) {
			var x V
			if err := json.Unmarshal(raw, &x); err != nil {
				p.Body(name, "invalid_type", fmt.Sprintf("%s has the wrong type for this field; see the operation's request schema.", name))
				return
			}
			*at(v) = x
		},
	}
}

// MetadataField is a resource's metadata under a merge patch: each key given replaces the key's
// value, a key set to null is deleted, and null for the whole object deletes every key. Its
// previous attributes are the changed keys' values before (null for a key that was added). The
// metadata rule (MetadataProblems) applies to the merged result.
func MetadataField[T any](at func(*T) *map[string]string) PatchField[T] {
	return PatchField[T]{
		Name: "metadata", Clearable: true,
		get: func(v *T) any { return *at(v) },
		set: func(v *T, raw json.RawMessage, p *Problems) {
			if isNull(raw) {
				*at(v) = map[string]string{}
				return
			}
			var keys map[string]*string
			if err := json.Unmarshal(raw, &keys); err != nil {
				p.Body("metadata", "invalid_type", "metadata must be an object of string values (null deletes a key).")
				return
			}
			merged := CopyMetadata(*at(v))
			for k, val := range keys {
				if val == nil {
					delete(merged, k)
				} else {
					merged[k] = *val
				}
			}
			*at(v) = merged
		},
		check: func(v *T, p *Problems) { MetadataProblems(p, "metadata", *at(v)) },
		diff: func(before, after *T) (any, bool) {
			was, now := *at(before), *at(after)
			prev := map[string]any{}
			for _, k := range slices.Sorted(maps.Keys(was)) {
				if nv, ok := now[k]; !ok || nv != was[k] {
					prev[k] = was[k]
				}
			}
			for k := range now {
				if _, ok := was[k]; !ok {
					prev[k] = nil
				}
			}
			return prev, len(prev) > 0
		},
	}
}

// PatchRule is how a resource T is updated: its updatable fields, the fields that cannot change
// (every other field of the resource as the API shows it), and the resource's state check.
type PatchRule[T any] struct {
	Resource  string // named in messages ("customer")
	Fields    []PatchField[T]
	Immutable []string // the resource's other fields: a patch naming one is 422 immutable_field
	// Allows is the status table's check for a field's Action (nil: no field has one): nil, or the
	// 409 with details.currentState.
	Allows func(v *T, action string) error
}

// NewPatchRule is the rule of a resource T whose answer type is of type answer (a value of the
// type the API shows it as; its JSON fields, embedded structs included, are the resource's
// fields): every field that is not a member of fields is immutable (a field another member
// changes, such as defaultPaymentMethod, included: the patch names the member).
func NewPatchRule[T any](resource string, answer any, fields ...PatchField[T]) PatchRule[T] {
	updatable := map[string]bool{}
	for _, f := range fields {
		updatable[f.Name] = true
	}
	var immutable []string
	for _, name := range JSONFields(reflect.TypeOf(answer)) {
		if !updatable[name] {
			immutable = append(immutable, name)
		}
	}
	return PatchRule[T]{Resource: resource, Fields: fields, Immutable: immutable}
}

// JSONFields are the JSON names of a struct type's fields as encoding/json writes them (embedded
// structs flattened; "-" skipped), in order.
func JSONFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, JSONFields(f.Type)...)
		case !f.IsExported():
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}

// Updatable are the patch's member names the rule takes.
func (r PatchRule[T]) Updatable() []string {
	out := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		out[i] = f.Name
	}
	return out
}

// Clearable are the members null clears.
func (r PatchRule[T]) Clearable() []string {
	var out []string
	for _, f := range r.Fields {
		if f.Clearable {
			out = append(out, f.Name)
		}
	}
	return out
}

// IsImmutable reports whether name is a field of the resource that cannot change.
func (r PatchRule[T]) IsImmutable(name string) bool { return slices.Contains(r.Immutable, name) }

// ImmutableProblem is the problem of a patch naming name when it is a field of the resource that
// cannot change (ok false otherwise): 422 immutable_field.
func (r PatchRule[T]) ImmutableProblem(name string) (f FieldError, ok bool) {
	if !r.IsImmutable(name) {
		return f, false
	}
	msg := fmt.Sprintf("%s cannot change once the %s exists; leave it out of the patch (create a new %s for other values).", name, r.Resource, r.Resource)
	for _, f := range r.Fields {
		if f.Attribute == name {
			msg = fmt.Sprintf("%s is not patched itself; change it with %s.", name, f.Name)
		}
	}
	return FieldError{Field: name, Location: InBody, Reason: "immutable_field", Message: msg}, true
}

func (r PatchRule[T]) field(name string) (PatchField[T], bool) {
	for _, f := range r.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return PatchField[T]{}, false
}

// Apply applies patch to v and records every problem in p: a member naming a field that cannot
// change (immutable_field) or no field (unknown_field), null for a field that cannot be cleared,
// a value of the wrong type, and each changed field's own rule on its new value. The members are
// applied in name order; with problems, v is left partly patched (the caller answers the 422).
func (r PatchRule[T]) Apply(v *T, patch Patch, p *Problems) {
	for _, name := range slices.Sorted(maps.Keys(patch)) {
		raw := patch[name]
		f, ok := r.field(name)
		switch {
		case r.IsImmutable(name):
			f, _ := r.ImmutableProblem(name)
			p.Add(f.Location, f.Field, f.Reason, f.Message)
		case !ok:
			p.Body(name, "unknown_field", fmt.Sprintf("%s is not a field of the %s; a patch takes %s.", name, r.Resource, strings.Join(r.Updatable(), ", ")))
		case isNull(raw) && !f.Clearable:
			p.Body(name, "invalid_type", fmt.Sprintf("%s may not be null: it cannot be cleared; leave it out to keep it.", name))
		default:
			before := p.Len()
			f.set(v, raw, p)
			if f.check != nil && p.Len() == before {
				f.check(v, p)
			}
		}
	}
}

// Problems are the problems of patch on its own, before the resource is read (the edge's one-pass
// validation): Apply on seed, a resource with nothing stored in it.
func (r PatchRule[T]) Problems(patch Patch, seed T) []FieldError {
	var p Problems
	r.Apply(&seed, patch, &p)
	return p.Fields()
}

// Conflict is the 409 of the first member (in name order) whose change the resource's state does
// not allow (its Action, asked of the status table through Allows), or nil.
func (r PatchRule[T]) Conflict(v *T, patch Patch) error {
	if r.Allows == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(patch)) {
		if f, ok := r.field(name); ok && f.Action != "" {
			if err := r.Allows(v, f.Action); err != nil {
				return err
			}
		}
	}
	return nil
}

// Previous are the previous attributes of an update from before to after: for each member of the
// patch whose field changed, the field's value before (by the resource's field name; metadata:
// the changed keys only). Empty when the patch changed nothing.
func (r PatchRule[T]) Previous(before, after *T, patch Patch) map[string]any {
	prev := map[string]any{}
	for name := range patch {
		f, ok := r.field(name)
		if !ok {
			continue
		}
		if f.diff != nil {
			if was, changed := f.diff(before, after); changed {
				prev[f.attribute()] = was
			}
			continue
		}
		was, now := f.get(before), f.get(after)
		if !jsonEqual(was, now) {
			prev[f.attribute()] = was
		}
	}
	return prev
}

// jsonEqual reports whether a and b are the same JSON value (as the API would show them).
func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
