package remit

import "reflect"

// Every resource carries its merchant account's environment (docs/api-conventions.md,
// "Responses"). A resource belongs to one merchant account, and its environment is that
// account's: the engine does not copy it onto each resource it reads or makes. The two places where
// a resource leaves the engine set it, with StampEnvironment: the HTTP edge's envelope (the
// request's environment) and Emit (the event's).

// StampEnvironment returns v with env in the Environment field of the resource it is, of each
// item of a list (List, OffsetList, a slice) it is, and of each resource it names one level down
// (a balance answer's entry, an overview's invoice): wherever that field is still empty. v is not
// changed: a resource held by value is copied; a list's items are set in place. Values without
// such a field come back as they are.
func StampEnvironment(v any, env Environment) any {
	if v == nil || env == "" {
		return v
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if !rv.IsNil() && rv.Elem().Kind() == reflect.Struct {
			stampStruct(rv.Elem(), env, 1)
		}
		return v
	case reflect.Slice:
		stampItems(rv, env, 1)
		return v
	case reflect.Struct:
		cp := reflect.New(rv.Type()).Elem()
		cp.Set(rv)
		stampStruct(cp, env, 1)
		return cp.Interface()
	}
	return v
}

var environmentType = reflect.TypeFor[Environment]()

// stampStruct sets an addressable struct's empty Environment field, and, depth levels down, those
// of the resources its fields hold.
func stampStruct(s reflect.Value, env Environment, depth int) {
	if f := s.FieldByName("Environment"); f.IsValid() && f.CanSet() && f.Type() == environmentType && f.String() == "" {
		f.SetString(string(env))
	}
	if depth < 0 {
		return
	}
	for i := range s.NumField() {
		f := s.Field(i)
		if !s.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.Struct:
			stampStruct(f, env, depth-1)
		case reflect.Pointer:
			if !f.IsNil() && f.Elem().Kind() == reflect.Struct {
				stampStruct(f.Elem(), env, depth-1)
			}
		case reflect.Slice:
			stampItems(f, env, depth-1)
		}
	}
}

// stampItems stamps each struct item of a slice (in place: a slice's items are addressable).
func stampItems(items reflect.Value, env Environment, depth int) {
	if items.Type().Elem().Kind() != reflect.Struct {
		return
	}
	for i := range items.Len() {
		stampStruct(items.Index(i), env, depth)
	}
}
