package locale

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// TestCatalogsAgree fails when a language misses a key another has, or a translation uses other
// placeholders than the English text (date patterns may use any of the date's parts).
func TestCatalogsAgree(t *testing.T) {
	en := Catalog("en")
	if len(en) == 0 {
		t.Fatal("the English catalog is empty")
	}
	for _, tag := range remit.Locales {
		cat := For(tag).msgs
		if For(tag).Tag() != tag || cat == nil {
			t.Fatalf("no catalog for %q", tag)
		}
		for _, other := range remit.Locales {
			for k := range Catalog(other) {
				if _, ok := cat[k]; !ok {
					t.Errorf("%s: missing key %q (in %s)", tag, k, other)
				}
			}
		}
		for k, v := range cat {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %q is empty", tag, k)
			}
			got, want := Placeholders(v), Placeholders(en[k])
			if strings.HasPrefix(k, "date.") {
				for _, p := range got {
					if !slices.Contains([]string{"d", "dd", "mm", "month", "yyyy", "start", "end"}, p) {
						t.Errorf("%s: %q uses {%s}, which is not a part of a date", tag, k, p)
					}
				}
				continue
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %q has placeholders %v, English has %v", tag, k, got, want)
			}
		}
	}
}

func TestFormatsPerLocale(t *testing.T) {
	d := time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
	end := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	nbsp := func(s string) string { return strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(s) }
	for _, c := range []struct {
		tag, date, period, money, country string
	}{
		{"en", "Mar 3, 2026", "Mar 3 – Apr 1, 2026", "€1,234.56", "Germany"},
		{"fr", "3 mars 2026", "3 mars – 1 avr. 2026", "1 234,56 €", "Allemagne"},
		{"de", "03.03.2026", "03.03. – 01.04.2026", "1.234,56 €", "Deutschland"},
		{"es", "3 mar 2026", "3 mar – 1 abr 2026", "1234,56 €", "Alemania"},
		{"xx", "Mar 3, 2026", "Mar 3 – Apr 1, 2026", "€1,234.56", "Germany"},
	} {
		tr := For(c.tag)
		if got := tr.Date(d); got != c.date {
			t.Errorf("%s Date = %q, want %q", c.tag, got, c.date)
		}
		if got := tr.Period(d, end); got != c.period {
			t.Errorf("%s Period = %q, want %q", c.tag, got, c.period)
		}
		if got := nbsp(tr.Money(123456, "EUR")); got != c.money {
			t.Errorf("%s Money = %q, want %q", c.tag, got, c.money)
		}
		if got := tr.Country("DE"); got != c.country {
			t.Errorf("%s Country = %q, want %q", c.tag, got, c.country)
		}
	}
	if got := For("en").Period(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), end); got != "Dec 1, 2025 – Apr 1, 2026" {
		t.Errorf("Period across years = %q", got)
	}
}

func TestPlaceholdersAreFilled(t *testing.T) {
	tr := &Tr{msgs: map[string]string{"k": "Invoice {number} of {merchant}", "plain": "Hello"}}
	if got := tr.T("k", "number", "INV-1", "merchant", "Acme {x}"); got != "Invoice INV-1 of Acme {x}" {
		t.Errorf("T = %q", got)
	}
	if got := tr.T("plain"); got != "Hello" {
		t.Errorf("T = %q", got)
	}
	if got := tr.T("absent"); got != "absent" {
		t.Errorf("T of a missing key = %q", got)
	}
}
