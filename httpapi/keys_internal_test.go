package httpapi

import (
	"strings"
	"testing"
)

// keysWithin lets beyondContract skip decoding a body only when no key could break the metadata
// key rule: it must never answer true for a body with an empty key or one over the bound.
func TestKeysWithin(t *testing.T) {
	long := strings.Repeat("k", 41)
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"eventId":"u1","properties":{"user":"ana"}}`, true},
		{`{"metadata":{"` + strings.Repeat("k", 40) + `":"v"}}`, true},
		{`{"metadata":{"` + long + `":"v"}}`, false},
		{`{"metadata":{"":"v"}}`, false},
		{`{"metadata" : {"a" :"v", "` + long + `"` + "\n\t:" + `"v"}}`, false},
		{`{"description":"` + long + `"}`, true},                        // a long value is no key
		{`{"a":"x\":y"}`, true},                                         // an escaped quote does not end the string
		{`{"metadata":{"` + strings.Repeat("é", 21) + `":"v"}}`, false}, // 21 characters, 42 bytes: decode to be sure
	} {
		if got := keysWithin([]byte(c.body), 40); got != c.want {
			t.Errorf("keysWithin(%s) = %v, want %v", c.body, got, c.want)
		}
	}
}
