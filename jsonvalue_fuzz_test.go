package remit_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/remit-billing/remit"
)

// FuzzBodyFingerprint: any bytes hash without panic and deterministically; a JSON body hashes
// the same however it is spaced or its keys ordered, and integral numbers the same however they
// are spelled (IntegerLiteral agrees).
func FuzzBodyFingerprint(f *testing.F) {
	for _, s := range []string{`{}`, ``, `{"seconds":60}`, `{"seconds":6e1,"a":[1,2.50,{"b":null}]}`, `{"x":1e-999999}`,
		`{"a":"\u0000"}`, `[1,2]`, `{"a":`, `{"n":-0.0e+5}`, `{"big":123456789012345678901234567890}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fp := remit.BodyFingerprint(body)
		if fp != remit.BodyFingerprint(body) || len(fp) != 64 {
			t.Fatalf("fingerprint not deterministic: %s", fp)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || dec.More() {
			return
		}
		// Re-encode with other spacing (and Go's sorted keys): same fingerprint.
		re, err := json.MarshalIndent(v, " ", "\t")
		if err != nil {
			return
		}
		if remit.BodyFingerprint(re) != fp {
			t.Fatalf("%q and %q differ", body, re)
		}
		// An integral number respelled by IntegerLiteral hashes the same.
		if n, ok := v.(json.Number); ok {
			if lit, ok := remit.IntegerLiteral(string(n)); ok && remit.BodyFingerprint([]byte(lit)) != fp {
				t.Fatalf("%s and its integer form %s differ", n, lit)
			}
		}
	})
}
