package remit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
)

// JSON values compared by value: the idempotency comparison and the spelling of integers
// (docs/architecture.md "Decisions").

// BodyFingerprint hashes a request body by its JSON value: key order, white space and number
// spelling (1, 1.0, 1e0) do not change it. This is the one idempotency comparison. A body that is
// not JSON is hashed as bytes.
func BodyFingerprint(body []byte) string {
	canon := body
	if len(bytes.TrimSpace(body)) == 0 {
		canon = []byte("{}")
	} else {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			if c, err := json.Marshal(canonicalize(v)); err == nil {
				canon = c
			}
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// canonicalize rewrites numbers to one spelling; maps already marshal with sorted keys.
func canonicalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = canonicalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = canonicalize(e)
		}
		return t
	case json.Number:
		neg, digits, exp, ok := parseDecimal(string(t))
		if !ok {
			return string(t)
		}
		sign := ""
		if neg {
			sign = "-"
		}
		return json.RawMessage(sign + digits + "e" + strconv.FormatInt(exp, 10))
	default:
		return v
	}
}

// parseDecimal splits a JSON number literal into its significant digits (no leading or trailing
// zeros; "0" for zero) and a power of ten, so that 60, 60.0, 6e1 and 600e-1 all read as 6e1. It
// works on the text and never expands the exponent, so a literal such as 1e-999999 costs no more
// than its length (math/big would compute 10^999999 for it).
func parseDecimal(lit string) (neg bool, digits string, exp int64, ok bool) {
	s := lit
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		e, err := strconv.ParseInt(strings.TrimPrefix(expPart, "+"), 10, 64)
		if err != nil || e > 1<<50 || e < -(1<<50) {
			return false, "", 0, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return false, "", 0, false
	}
	digits = strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	if digits == "" {
		return false, "0", 0, true
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	return neg, trimmed, exp, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IntegerLiteral respells a JSON number literal that denotes an integer of at most 18 digits in
// plain integer form ("60.0" and "6e1" become "60"). ok is false for fractions and larger values.
// The edge uses it so that a body the contract accepts as an integer also decodes as one.
func IntegerLiteral(lit string) (string, bool) {
	neg, digits, exp, ok := parseDecimal(lit)
	if !ok || exp < 0 || int64(len(digits))+exp > 18 {
		return "", false
	}
	if digits == "0" {
		return "0", true
	}
	out := digits + strings.Repeat("0", int(exp))
	if neg {
		out = "-" + out
	}
	return out, true
}
