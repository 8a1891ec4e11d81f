// Package tax is Remit's built-in tax engine: a rate table by country and region, and the one
// rounding rule — tax per line and per jurisdiction, rounded half-up to the minor unit.
//
// A rate is in parts per million (ppm) so that rates such as 14.975% (Québec) are exact:
// 14.975% = 149750 ppm. A place may owe tax to several jurisdictions at once (Canada's GST plus a
// province's PST); each is computed and rounded on its own, per line.
package tax

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/remit-billing/remit"
)

// Component is one jurisdiction's rate.
type Component struct {
	Jurisdiction string `json:"jurisdiction"` // "US-CA", "DE", "CA" (GST), "CA-BC" (PST)
	RatePPM      int64  `json:"ratePpm"`      // 72500 = 7.25%
}

// Table maps "COUNTRY" or "COUNTRY-REGION" to the components owed there. A region not listed
// falls back to its country's entry (if any); a place with no entry owes no tax.
type Table struct {
	entries map[string][]Component
}

// Lookup returns the components owed at country/region (upper-case ISO codes; region may be "").
func (t *Table) Lookup(country, region string) []Component {
	country, region = strings.ToUpper(country), strings.ToUpper(region)
	if region != "" {
		if c, ok := t.entries[country+"-"+region]; ok {
			return c
		}
	}
	return t.entries[country]
}

// Places lists the table's keys, sorted (for docs and tests).
func (t *Table) Places() []string {
	keys := make([]string, 0, len(t.entries))
	for k := range t.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadFile reads a replacement table: a JSON object mapping "COUNTRY" or "COUNTRY-REGION" to a
// list of {"jurisdiction", "ratePpm"}.
func LoadFile(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse reads a table from JSON (see LoadFile).
func Parse(b []byte) (*Table, error) {
	var m map[string][]Component
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("tax table: %w", err)
	}
	for place, comps := range m {
		for _, c := range comps {
			if c.Jurisdiction == "" || c.RatePPM < 0 || c.RatePPM > 1_000_000 {
				return nil, fmt.Errorf("tax table: %s: each component needs a jurisdiction and a ratePpm from 0 to 1000000", place)
			}
		}
	}
	return &Table{entries: m}, nil
}

// LineTax is the tax of one line in one jurisdiction (the invoice arithmetic's type).
type LineTax = remit.TaxOnLine

// Amount is the one rounding rule: taxable × rate, rounded half-up to the minor unit.
func Amount(taxable, ratePPM int64) int64 {
	return remit.RoundHalfUp(taxable*ratePPM, 1_000_000)
}

// Compute taxes each line's taxable amount in every component; an exempt customer owes nothing
// (the lines are still reported, at rate 0, so the transaction shows what was exempted).
func Compute(taxable []int64, comps []Component, exempt bool) []LineTax {
	var out []LineTax
	for i, amt := range taxable {
		for _, c := range comps {
			lt := LineTax{Line: i, Jurisdiction: c.Jurisdiction, RatePPM: c.RatePPM, TaxableAmount: amt}
			if exempt {
				lt.RatePPM = 0
			} else {
				lt.TaxAmount = Amount(amt, c.RatePPM)
			}
			out = append(out, lt)
		}
	}
	return out
}
