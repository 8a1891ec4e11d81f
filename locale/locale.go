// Package locale is how Remit speaks to a merchant's customers in their language: the message
// catalogs (catalog/*.json, embedded), and dates, amounts and country names formatted for the
// locale. A customer's preferredLocale (remit.Locales: en, fr, de, es) picks the Tr that renders
// its e-mails, PDFs and hosted pages. See docs/email.md ("Languages").
//
// A catalog file is catalog/AREA.LANG.json: a flat object from message key to text. Texts name
// their placeholders in braces ("Invoice {number}"); T fills them from name/value pairs. Every
// language has every key of every area, with the same placeholders (TestCatalogsAgree), so a
// missing translation is a failing test, not an English word in a French e-mail.
//
// Amounts use github.com/bojanz/currency's CLDR data for the locale (symbol, grouping, decimal
// separator: "1 234,56 €" in French). Dates use the CLDR medium date pattern and abbreviated month
// names of the locale, which the catalogs carry (keys date.*, month.*): golang.org/x/text has no
// date formatting. Country names come from golang.org/x/text/language/display.
package locale

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bojanz/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/message"

	"github.com/remit-billing/remit"
)

//go:embed catalog/*.json
var catalogFS embed.FS

// Tr renders messages, amounts and dates in one language. The Tr of a language is shared and safe
// for concurrent use.
type Tr struct {
	tag     string
	msgs    map[string]string
	money   *currency.Formatter
	regions display.Namer
	numbers *message.Printer
}

var translators = func() map[string]*Tr {
	cats, err := loadCatalogs(catalogFS)
	if err != nil {
		panic(err) // the catalogs are embedded: a broken one fails every test at once
	}
	out := map[string]*Tr{}
	for _, tag := range remit.Locales {
		out[tag] = &Tr{
			tag: tag, msgs: cats[tag], money: currency.NewFormatter(currency.NewLocale(tag)),
			regions: display.Regions(language.MustParse(tag)), numbers: message.NewPrinter(language.MustParse(tag)),
		}
	}
	return out
}()

// For is the Tr of a locale; an unknown or empty one is English (remit.DefaultLocale).
func For(tag string) *Tr {
	if t, ok := translators[tag]; ok {
		return t
	}
	return translators[remit.DefaultLocale]
}

// Tag is the locale's code ("fr").
func (t *Tr) Tag() string { return t.tag }

// T is the text of key with its placeholders filled from name/value pairs:
// T("invoice.title", "number", "INV-7"). A key the catalog lacks renders as the key itself
// (TestCatalogsAgree keeps that from shipping).
func (t *Tr) T(key string, pairs ...string) string {
	s, ok := t.msgs[key]
	if !ok {
		return key
	}
	if len(pairs) == 0 || !strings.Contains(s, "{") {
		return s
	}
	r := make([]string, 0, len(pairs))
	for i := 0; i+1 < len(pairs); i += 2 {
		r = append(r, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(r...).Replace(s)
}

// Money formats minor units of a currency for the locale: "$1,234.56" (en), "1 234,56 $US" (fr),
// "1.234,56 €" (de). The currency's own minor-unit digits decide where the decimal separator goes.
func (t *Tr) Money(amount int64, code string) string {
	a, err := currency.NewAmountFromInt64(amount, code)
	if err != nil {
		return fmt.Sprintf("%d %s", amount, code) // not an ISO code: never happens for stored money
	}
	return t.money.Format(a)
}

// Number formats an integer with the locale's digit grouping: "12,500" (en), "12 500" (fr),
// "12.500" (de, es), through golang.org/x/text/message's CLDR data.
func (t *Tr) Number(n int64) string { return t.numbers.Sprintf("%d", n) }

// Date formats a moment as a UTC calendar date in the locale's medium pattern: "Mar 3, 2026",
// "3 mars 2026", "03.03.2026", "3 mar 2026".
func (t *Tr) Date(d time.Time) string { return t.datePattern("date.medium", d) }

// Period formats a service period [start, end) as "Mar 1 – Apr 1, 2026" (the year once when both
// ends share it).
func (t *Tr) Period(start, end time.Time) string {
	s, e := start.UTC(), end.UTC()
	if s.Year() == e.Year() {
		return t.T("date.period", "start", t.datePattern("date.medium_no_year", s), "end", t.Date(e))
	}
	return t.T("date.period", "start", t.Date(s), "end", t.Date(e))
}

func (t *Tr) datePattern(key string, d time.Time) string {
	d = d.UTC()
	return t.T(key, "d", strconv.Itoa(d.Day()), "dd", fmt.Sprintf("%02d", d.Day()),
		"mm", fmt.Sprintf("%02d", int(d.Month())), "month", t.T(fmt.Sprintf("month.%d", int(d.Month()))),
		"yyyy", strconv.Itoa(d.Year()))
}

// Country is the locale's name of an ISO 3166-1 alpha-2 code ("DE" → "Allemagne" in French), or
// the code.
func (t *Tr) Country(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if n := t.regions.Name(r); n != "" {
		return n
	}
	return code
}

// Catalog is one language's messages, by key (for tests and tools).
func Catalog(tag string) map[string]string { return For(tag).msgs }

var catalogName = regexp.MustCompile(`^([a-z_]+)\.([a-z]{2})\.json$`)

// loadCatalogs reads every catalog file and merges each language's areas into one map.
func loadCatalogs(fsys fs.FS) (map[string]map[string]string, error) {
	files, err := fs.Glob(fsys, "catalog/*.json")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, f := range files {
		m := catalogName.FindStringSubmatch(path.Base(f))
		if m == nil {
			return nil, fmt.Errorf("locale: %s: a catalog is named AREA.LANG.json", f)
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var msgs map[string]string
		if err := json.Unmarshal(b, &msgs); err != nil {
			return nil, fmt.Errorf("locale: %s: %w", f, err)
		}
		if out[m[2]] == nil {
			out[m[2]] = map[string]string{}
		}
		for k, v := range msgs {
			if _, dup := out[m[2]][k]; dup {
				return nil, fmt.Errorf("locale: %s: key %q is in two areas", f, k)
			}
			out[m[2]][k] = v
		}
	}
	return out, nil
}

// Placeholders are the names in braces a text uses, in order of appearance.
func Placeholders(s string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

var placeholder = regexp.MustCompile(`\{([a-zA-Z_]+)\}`)
