package remit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The event chain: every event's hash covers the previous event's hash of the same merchant
// account and the event itself, so changing, removing or reordering a stored event breaks every
// hash after it. docs/verification.md writes the canonical form down for auditors; this file is
// its one implementation.

// ChainHash is the event's hash: lowercase hex SHA-256 of prev (the previous event's hash in the
// merchant account's chain; "" for the first event) followed by the event's canonical JSON
// (CanonicalEvent). e.Hash is ignored.
func ChainHash(prev string, e Event) (string, error) {
	canon, err := CanonicalEvent(e)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CanonicalEvent is the event as the API shows it, without its hash, in canonical JSON
// (Canonicalize). CreatedAt is taken at the microsecond the store keeps, in UTC.
func CanonicalEvent(e Event) ([]byte, error) {
	e.Hash = ""
	e.Object = "event"
	e.CreatedAt = FromMicros(Micros(e.CreatedAt))
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("remit.CanonicalEvent: %w", err)
	}
	return Canonicalize(raw)
}

// Canonicalize rewrites one JSON value canonically: object keys sorted by code point (the byte
// order of their UTF-8), no whitespace, strings escaping only '"', '\' and U+0000–U+001F (\b, \t,
// \n, \f, \r, the rest as \u00xx), every other character as itself; numbers exactly as written.
// A "hash" key of the top-level object is left out.
func Canonicalize(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("remit.Canonicalize: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "hash")
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(string(v))
	case string:
		writeCanonicalString(b, v)
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // byte order of UTF-8 = code point order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("remit.Canonicalize: unexpected %T", v)
	}
	return nil
}

const hexDigits = "0123456789abcdef"

func writeCanonicalString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	if !strings.ContainsAny(s, "\"\\") && !hasControl(s) {
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}
