package remit

import (
	"slices"
	"strings"
)

// The text rule (docs/security.md, "Input characters"). Names, addresses, descriptions and
// metadata reach invoices, PDFs, e-mails and the dashboard as they were sent, where a control
// character or a bidirectional override can make a reader see something else than what is stored
// (U+202E between "invoice" and "fdp.exe" shows "invoiceexe.pdf"). So no text field takes:
//
//   - a control character (Unicode Cc: U+0000–U+001F, U+007F, U+0080–U+009F), except tab, line
//     feed and carriage return in multi-line fields;
//   - a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which reorder
//     everything up to their end;
//   - a line or paragraph separator (U+2028, U+2029) in a single-line field.
//
// The bidirectional marks (U+200E, U+200F, U+061C) are allowed: right-to-left text needs them to
// place a number or a punctuation mark, and they move only the neutral characters beside them.
// Multi-line fields are the free texts (MultilineFields) and the values of the free maps
// (FreeTextMaps: metadata, a usage event's properties); every other field and every key is one
// line.

// MultilineFields are the body fields whose text may span lines (tab, line feed, carriage return),
// wherever they appear in a body.
var MultilineFields = []string{"description", "terms", "businessDescription", "refundPolicy", "memo"}

// FreeTextMaps are the body fields that are maps of free text; their values may span lines, their
// keys may not.
var FreeTextMaps = []string{"metadata", "properties"}

// MultilineField reports whether the body field at path (its keys and array indexes, outermost
// first) is multi-line text.
func MultilineField(path []string) bool {
	n := len(path)
	return (n > 0 && slices.Contains(MultilineFields, path[n-1])) ||
		(n > 1 && slices.Contains(FreeTextMaps, path[n-2]))
}

// TextRefused reports whether r may not appear in a text field (multiline: one of
// MultilineField's).
func TextRefused(r rune, multiline bool) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
		return !multiline
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return true
	}
	return false
}

// CheckText records the problem of the text s of field (invalid_characters) when it holds a
// character TextRefused refuses.
func CheckText(p *Problems, field, s string, multiline bool) {
	if !strings.ContainsFunc(s, func(r rune) bool { return TextRefused(r, multiline) }) {
		return
	}
	if multiline {
		p.Body(field, "invalid_characters", field+" may not contain control characters other than tab and line breaks, nor bidirectional overrides or isolates (U+202A–U+202E, U+2066–U+2069).")
		return
	}
	p.Body(field, "invalid_characters", field+" may not contain control characters (tabs and line breaks included), nor bidirectional overrides or isolates (U+202A–U+202E, U+2066–U+2069).")
}

// CleanText is s without the characters TextRefused refuses on one line: a refused key, made fit
// to name in a field list.
func CleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if TextRefused(r, false) {
			return -1
		}
		return r
	}, s)
}
