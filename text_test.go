package remit

import (
	"strings"
	"testing"
)

// TestTextRule: which characters a single-line and a multi-line field refuse, and which fields
// are multi-line.
func TestTextRule(t *testing.T) {
	for _, c := range []struct {
		r                 rune
		oneLine, multiple bool // refused on one line, refused in multi-line text
	}{
		{0, true, true}, {'\a', true, true}, {0x1b, true, true}, {0x1f, true, true}, {0x7f, true, true},
		{0x80, true, true}, {0x85, true, true}, {0x9b, true, true}, {0x9f, true, true},
		{'\t', true, false}, {'\n', true, false}, {'\r', true, false}, {0x2028, true, false}, {0x2029, true, false},
		{0x202a, true, true}, {0x202b, true, true}, {0x202c, true, true}, {0x202d, true, true}, {0x202e, true, true},
		{0x2066, true, true}, {0x2067, true, true}, {0x2068, true, true}, {0x2069, true, true},
		{0x200e, false, false}, {0x200f, false, false}, {0x061c, false, false}, {0x200b, false, false},
		{' ', false, false}, {'a', false, false}, {0xa0, false, false}, {'é', false, false}, {'ש', false, false},
		{0x1f642, false, false}, {0xfeff, false, false},
	} {
		if got := TextRefused(c.r, false); got != c.oneLine {
			t.Errorf("TextRefused(%U, one line) = %v, want %v", c.r, got, c.oneLine)
		}
		if got := TextRefused(c.r, true); got != c.multiple {
			t.Errorf("TextRefused(%U, multi-line) = %v, want %v", c.r, got, c.multiple)
		}
	}
	for path, want := range map[string]bool{
		"description": true, "lines.0.description": true, "terms": true, "underwriting.businessDescription": true,
		"underwriting.refundPolicy": true, "metadata.note": true, "lines.0.metadata.note": true, "properties.region": true,
		"name": false, "address.line1": false, "metadata": false, "lines.0.priceId": false, "email": false, "url": false,
	} {
		if got := MultilineField(strings.Split(path, ".")); got != want {
			t.Errorf("MultilineField(%s) = %v, want %v", path, got, want)
		}
	}
	var p Problems
	CheckText(&p, "name", "Acme\u202eCorp", false)
	CheckText(&p, "description", "two\nlines\tand\r\nmore", true)
	CheckText(&p, "description", "a\u2066b", true)
	if f := p.Fields(); len(f) != 2 || f[0].Field != "name" || f[1].Field != "description" || f[0].Reason != "invalid_characters" {
		t.Errorf("problems %+v", f)
	}
	if got := CleanText("k\u202ee\u0000y\n"); got != "key" {
		t.Errorf("CleanText = %q", got)
	}
}
