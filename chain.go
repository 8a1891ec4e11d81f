package remit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
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
// (Canonicalize). CreatedAt is taken at the microsecond the store keeps, in UTC. The top-level keys
// are written in their sorted order directly; data goes through the canonical writer.
func CanonicalEvent(e Event) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, len(e.Data)+256))
	b.WriteByte('{')
	if e.Actor != nil { // events written before actors were recorded have none, and keep their hash
		b.WriteString(`"actor":{`)
		if e.Actor.ID != "" {
			b.WriteString(`"id":`)
			writeCanonicalString(b, e.Actor.ID)
			b.WriteByte(',')
		}
		b.WriteString(`"type":`)
		writeCanonicalString(b, string(e.Actor.Type))
		b.WriteString(`},`)
	}
	b.WriteString(`"createdAt":"`)
	b.WriteString(FromMicros(Micros(e.CreatedAt)).Format(time.RFC3339Nano))
	b.WriteString(`","data":`)
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if err := canonicalValue(b, data); err != nil {
		return nil, fmt.Errorf("remit.CanonicalEvent %s: %w", e.ID, err)
	}
	for _, kv := range [...][2]string{{"environment", string(e.Environment)}, {"eventId", e.ID}, {"merchantAccountId", e.MerchantAccountID}, {"object", "event"}} {
		b.WriteString(`,"` + kv[0] + `":`)
		writeCanonicalString(b, kv[1])
	}
	b.WriteString(`,"sequence":`)
	b.WriteString(strconv.FormatInt(e.Sequence, 10))
	b.WriteString(`,"type":`)
	writeCanonicalString(b, e.Type)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Canonicalize rewrites one JSON value canonically: object keys sorted by code point (the byte
// order of their UTF-8), no whitespace, strings escaping only '"', '\' and U+0000–U+001F (\b, \t,
// \n, \f, \r, the rest as \u00xx), every other character as itself; numbers exactly as written.
// A "hash" key of the top-level object is left out.
func Canonicalize(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(raw))
	c := canonicalizer{in: raw, out: &b, dropHash: true}
	if err := c.value(); err != nil {
		return nil, fmt.Errorf("remit.Canonicalize: %w", err)
	}
	if c.skipSpace(); c.pos != len(c.in) {
		return nil, fmt.Errorf("remit.Canonicalize: data after the value at byte %d", c.pos)
	}
	return b.Bytes(), nil
}

// canonicalValue writes raw (one JSON value) canonically to b.
func canonicalValue(b *bytes.Buffer, raw []byte) error {
	c := canonicalizer{in: raw, out: b}
	if err := c.value(); err != nil {
		return err
	}
	if c.skipSpace(); c.pos != len(c.in) {
		return fmt.Errorf("data after the value at byte %d", c.pos)
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
