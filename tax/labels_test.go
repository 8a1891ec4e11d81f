package tax

import "testing"

func TestLabelAndFormatRate(t *testing.T) {
	for j, want := range map[string]string{"CA": "GST", "CA-BC": "PST", "CA-MB": "PST", "CA-SK": "PST", "CA-QC": "QST", "CA-ON": "HST",
		"CA-AB": "Tax", "US-CA": "Sales tax", "DE": "VAT", "GB": "VAT", "JP": "Tax", "ca-bc": "PST"} {
		if got := Label(j); got != want {
			t.Errorf("Label(%q) = %q, want %q", j, got, want)
		}
	}
	for ppm, want := range map[int64]string{50000: "5%", 72500: "7.25%", 99750: "9.975%", 149750: "14.975%", 0: "0%", 1: "0.0001%", 1000000: "100%", -50000: "-5%"} {
		if got := FormatRate(ppm); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", ppm, got, want)
		}
	}
	// Every jurisdiction of the shipped table has a name but Alberta and the territories, which
	// owe GST only under their country's code.
	for _, place := range Default().Places() {
		for _, c := range Default().Lookup(place[:2], place[min(len(place), 3):]) {
			if Label(c.Jurisdiction) == "Tax" {
				t.Errorf("shipped jurisdiction %q has no tax name", c.Jurisdiction)
			}
		}
	}
}
