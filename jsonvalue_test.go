package remit_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
)

// TestBodyFingerprint: bodies equal as JSON values share a fingerprint; any other difference
// changes it.
func TestBodyFingerprint(t *testing.T) {
	equal := [][2]string{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{`{"a":1,"b":2}`, " {\n\t\"a\" : 1 ,\r\n \"b\":2 }\n"},
		{`{"seconds":60}`, `{"seconds":60.0}`},
		{`{"seconds":60}`, `{"seconds":6e1}`},
		{`{"seconds":60}`, `{"seconds":6E+1}`},
		{`{"seconds":60}`, `{"seconds":600e-1}`},
		{`{"seconds":60}`, `{"seconds":0.6e2}`},
		{`{"x":0}`, `{"x":-0}`},
		{`{"x":0}`, `{"x":0.000e5}`},
		{`{"x":1.5}`, `{"x":1.50}`},
		{`{"x":1.5}`, `{"x":15e-1}`},
		{`{"x":-12.5}`, `{"x":-125e-1}`},
		{`{"x":123456789012345678901234567890}`, `{"x":1.2345678901234567890123456789e29}`},
		{`{"x":1e-999999}`, `{"x":10e-1000000}`},
		{`{"n":{"z":[1,{"b":true,"a":null}],"y":"s"}}`, `{"n":{"y":"s","z":[1.0,{"a":null,"b":true}]}}`},
		{`{"s":"é"}`, `{"s":"\u00e9"}`},
		{`{}`, ``},
		{`{}`, "  \n"},
		{`{}`, `{ }`},
		{`[1,2]`, `[1.0, 2]`},
	}
	for _, c := range equal {
		if remit.BodyFingerprint([]byte(c[0])) != remit.BodyFingerprint([]byte(c[1])) {
			t.Errorf("%s and %s should be equal", c[0], c[1])
		}
	}
	differ := [][2]string{
		{`{"seconds":60}`, `{"seconds":61}`},
		{`{"seconds":60}`, `{"seconds":"60"}`},
		{`{"seconds":60}`, `{"seconds":60.0000000000000000001}`}, // not the same number, though float64 says so
		{`{"x":1e-999999}`, `{"x":0}`},
		{`{"x":1}`, `{"x":-1}`},
		{`{"x":10}`, `{"x":1}`},
		{`{"x":100}`, `{"x":1e3}`},
		{`{"a":1}`, `{"a":1,"b":null}`},
		{`{"a":null}`, `{}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":true}`, `{"a":"true"}`},
		{`{"a":"x"}`, `{"A":"x"}`},
		{`{"a":"x "}`, `{"a":"x"}`},
		{`{"a":{}}`, `{"a":[]}`},
		{`{}`, `[]`},
		{`not json`, `not  json`}, // not JSON: compared as bytes
	}
	for _, c := range differ {
		if remit.BodyFingerprint([]byte(c[0])) == remit.BodyFingerprint([]byte(c[1])) {
			t.Errorf("%s and %s should differ", c[0], c[1])
		}
	}
}

// TestBodyFingerprintLargeExponents: a number's exponent is never expanded, so a body full of
// tiny numbers (which the contract's float64 validation reads as 0) costs no more than its size.
func TestBodyFingerprintLargeExponents(t *testing.T) {
	body := []byte(`{"lines":[` + strings.Repeat(`{"unitAmount":1e-999999},`, 99) + `{"unitAmount":1e-999999}]}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	remit.BodyFingerprint(body)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("fingerprinting a %d-byte body allocated %d bytes", len(body), alloc)
	}
}

func TestIntegerLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"60": "60", "60.0": "60", "6e1": "60", "6E+1": "60", "600e-1": "60", "-0": "0", "0.0e10": "0",
		"-12e2": "-1200", "999999999999999999": "999999999999999999",
	} {
		if got, ok := remit.IntegerLiteral(in); !ok || got != want {
			t.Errorf("remit.IntegerLiteral(%s) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"1.5", "1e-1", "1e19", "1e1000000", "1e-999999", "x"} {
		if got, ok := remit.IntegerLiteral(in); ok {
			t.Errorf("remit.IntegerLiteral(%s) = %q, want not an integer", in, got)
		}
	}
}
