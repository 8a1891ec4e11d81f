package remit

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// referenceCanonical is the canonical form computed the slow, obvious way: decode into Go values
// (numbers kept as written), sort every object's keys, encode. The one-pass canonicalizer must
// agree with it on every valid document.
func referenceCanonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "hash")
	}
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(map[bool]string{true: "true", false: "false"}[v])
		case json.Number:
			b.WriteString(string(v))
		case string:
			writeCanonicalString(&b, v)
		case []any:
			b.WriteByte('[')
			for i, x := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				write(x)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				writeCanonicalString(&b, k)
				b.WriteByte(':')
				write(v[k])
			}
			b.WriteByte('}')
		}
	}
	write(v)
	return b.Bytes(), nil
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,{"y":"\u003c\u2028","x":-0.5e3}]}`, `[]`, `{}`, `"\ud83d\ude00"`, `{"hash":1,"é":{"hash":2}}`,
		` { "a" : [ 1 , 2 ] } `, `{"a":"\"\\\/\b\f\n\r\t\u0001"}`, `12`, `{"a":{}}`, `[[],[{}]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := Canonicalize(raw)
		if !json.Valid(raw) {
			if err == nil {
				t.Fatalf("invalid JSON %q canonicalized to %q", raw, got)
			}
			return
		}
		want, werr := referenceCanonical(raw)
		if werr != nil {
			return // valid but beyond the reference (duplicate keys decode differently): skip
		}
		if err != nil {
			t.Fatalf("valid JSON %q refused: %v", raw, err)
		}
		if !bytes.Equal(got, want) && !hasDuplicateKeys(raw) {
			t.Fatalf("Canonicalize(%q)\n got %q\nwant %q", raw, got, want)
		}
	})
}

// hasDuplicateKeys reports whether an object of raw repeats a key (the reference keeps the last,
// the canonicalizer both; events never have any).
func hasDuplicateKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []map[string]bool
	expectKey := []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = append(expectKey, true)
				continue
			case '[':
				stack = append(stack, nil)
				expectKey = append(expectKey, false)
				continue
			default:
				stack, expectKey = stack[:len(stack)-1], expectKey[:len(expectKey)-1]
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1] != nil && expectKey[n-1] {
				if stack[n-1][tok] {
					return true
				}
				stack[n-1][tok] = true
				expectKey[n-1] = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1] != nil {
			expectKey[n-1] = true
		}
	}
}
