package remit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// canonicalizer rewrites JSON text canonically (see Canonicalize) in one pass over its bytes,
// without decoding it into Go values: numbers and plain strings are copied as they are, objects'
// members are sorted by key. Every event is canonicalized when it is written (chain.go), so this
// is on the write path of every change.
type canonicalizer struct {
	in       []byte
	pos      int
	out      *bytes.Buffer
	dropHash bool // leave out a "hash" member of the outermost object
}

var errCanonicalSyntax = errors.New("invalid JSON")

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value writes the value at pos and moves past it.
func (c *canonicalizer) value() error {
	c.skipSpace()
	if c.pos >= len(c.in) {
		return errCanonicalSyntax
	}
	switch ch := c.in[c.pos]; {
	case ch == '{':
		return c.object()
	case ch == '[':
		return c.array()
	case ch == '"':
		start := c.pos
		end, plain, err := c.stringEnd()
		if err != nil {
			return err
		}
		return c.writeString(c.in[start:end], plain)
	default:
		start := c.pos
		for c.pos < len(c.in) && isScalarByte(c.in[c.pos]) {
			c.pos++
		}
		tok := c.in[start:c.pos]
		if !isLiteral(tok) && !isNumber(tok) {
			return fmt.Errorf("%w at byte %d", errCanonicalSyntax, start)
		}
		c.out.Write(tok)
		return nil
	}
}

func isScalarByte(ch byte) bool {
	return ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch == '-' || ch == '+' || ch == '.' || ch == 'E'
}

func isLiteral(tok []byte) bool {
	s := string(tok) // no allocation: compared only
	return s == "true" || s == "false" || s == "null"
}

// isNumber reports whether tok is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(tok []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	if i < len(tok) && tok[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(tok)
}

// stringEnd moves past the string at pos (its opening quote) and returns where it ends and whether
// it is plain: no escapes and no control characters, so that its bytes are already canonical if
// they are valid UTF-8 (invalid bytes are written as U+FFFD, as the API would show them).
func (c *canonicalizer) stringEnd() (end int, plain bool, err error) {
	plain = true
	for i := c.pos + 1; i < len(c.in); i++ {
		switch ch := c.in[i]; {
		case ch == '"':
			c.pos = i + 1
			return c.pos, plain, nil
		case ch == '\\':
			plain = false
			i++
		case ch < 0x20:
			return 0, false, fmt.Errorf("%w: control character in a string at byte %d", errCanonicalSyntax, i)
		}
	}
	return 0, false, fmt.Errorf("%w: unterminated string", errCanonicalSyntax)
}

// writeString writes a JSON string token canonically.
func (c *canonicalizer) writeString(tok []byte, plain bool) error {
	if plain && utf8.Valid(tok) {
		c.out.Write(tok)
		return nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return fmt.Errorf("%w: %v", errCanonicalSyntax, err)
	}
	writeCanonicalString(c.out, s)
	return nil
}

func (c *canonicalizer) array() error {
	c.pos++ // [
	c.out.WriteByte('[')
	for first := true; ; first = false {
		c.skipSpace()
		if c.pos < len(c.in) && c.in[c.pos] == ']' && first {
			c.pos++
			c.out.WriteByte(']')
			return nil
		}
		if !first {
			c.out.WriteByte(',')
		}
		if err := c.value(); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return errCanonicalSyntax
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
		case ']':
			c.pos++
			c.out.WriteByte(']')
			return nil
		default:
			return fmt.Errorf("%w at byte %d", errCanonicalSyntax, c.pos)
		}
	}
}

// member is one object member: its key (decoded UTF-8) and where its canonical value lies in the
// object's scratch buffer.
type member struct {
	key        []byte
	start, end int
}

// scratch holds an object's canonical member values until they are sorted.
var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// object writes the object at pos: each member's value is written canonically once, into a
// scratch buffer, then the members are written out in key order.
func (c *canonicalizer) object() error {
	drop := c.dropHash
	c.dropHash = false
	buf := scratch.Get().(*bytes.Buffer)
	buf.Reset()
	defer scratch.Put(buf)
	members, err := c.members(buf)
	if err != nil {
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) }) // UTF-8 bytes: code points
	c.out.WriteByte('{')
	wrote := false
	for _, m := range members {
		if drop && string(m.key) == "hash" {
			continue
		}
		if wrote {
			c.out.WriteByte(',')
		}
		wrote = true
		writeCanonicalKey(c.out, m.key)
		c.out.WriteByte(':')
		c.out.Write(buf.Bytes()[m.start:m.end])
	}
	c.out.WriteByte('}')
	return nil
}

// members reads the object at pos (its opening brace), writing each member's canonical value to
// buf.
func (c *canonicalizer) members(buf *bytes.Buffer) ([]member, error) {
	c.pos++ // {
	out := make([]member, 0, 16)
	for {
		c.skipSpace()
		if c.pos >= len(c.in) {
			return nil, errCanonicalSyntax
		}
		if c.in[c.pos] == '}' && len(out) == 0 {
			c.pos++
			return out, nil
		}
		key, err := c.key()
		if err != nil {
			return nil, err
		}
		start := buf.Len()
		inner := canonicalizer{in: c.in, pos: c.pos, out: buf}
		if err := inner.value(); err != nil {
			return nil, err
		}
		c.pos = inner.pos
		out = append(out, member{key: key, start: start, end: buf.Len()})
		c.skipSpace()
		if c.pos >= len(c.in) {
			return nil, errCanonicalSyntax
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return out, nil
		default:
			return nil, fmt.Errorf("%w at byte %d", errCanonicalSyntax, c.pos)
		}
	}
}

// key reads a member's key and its colon.
func (c *canonicalizer) key() ([]byte, error) {
	if c.in[c.pos] != '"' {
		return nil, fmt.Errorf("%w: expected a key at byte %d", errCanonicalSyntax, c.pos)
	}
	start := c.pos
	end, plain, err := c.stringEnd()
	if err != nil {
		return nil, err
	}
	key := c.in[start+1 : end-1]
	if !plain || !utf8.Valid(key) {
		var s string
		if err := json.Unmarshal(c.in[start:end], &s); err != nil {
			return nil, fmt.Errorf("%w: %v", errCanonicalSyntax, err)
		}
		key = []byte(s)
	}
	c.skipSpace()
	if c.pos >= len(c.in) || c.in[c.pos] != ':' {
		return nil, fmt.Errorf("%w: expected ':' at byte %d", errCanonicalSyntax, c.pos)
	}
	c.pos++
	return key, nil
}

// writeCanonicalKey writes a decoded key: as it is when it needs no escape.
func writeCanonicalKey(b *bytes.Buffer, key []byte) {
	for _, ch := range key {
		if ch < 0x20 || ch == '"' || ch == '\\' {
			writeCanonicalString(b, string(key))
			return
		}
	}
	b.WriteByte('"')
	b.Write(key)
	b.WriteByte('"')
}
