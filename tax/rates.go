package tax

// Default is the shipped rate table. Rates are standard rates as of 2026 and are defaults, not
// tax advice: replace them with a file (REMIT_TAX_RATES_FILE) for production use.
//
//   - United States: state-level sales tax for CA, NY, TX and WA (local add-ons are not included).
//   - European Union: every member state's standard VAT rate.
//   - United Kingdom: standard VAT.
//   - Canada: GST (jurisdiction "CA") for every province and territory, plus PST/QST as a second
//     jurisdiction where levied (BC, MB, SK, QC), or a single HST (ON, NB, NL, NS, PE).
func Default() *Table {
	pct := func(j string, ppm int64) []Component { return []Component{{Jurisdiction: j, RatePPM: ppm}} }
	gst := Component{Jurisdiction: "CA", RatePPM: 50000}
	e := map[string][]Component{
		"US-CA": pct("US-CA", 72500),
		"US-NY": pct("US-NY", 40000),
		"US-TX": pct("US-TX", 62500),
		"US-WA": pct("US-WA", 65000),

		"AT": pct("AT", 200000), "BE": pct("BE", 210000), "BG": pct("BG", 200000), "HR": pct("HR", 250000),
		"CY": pct("CY", 190000), "CZ": pct("CZ", 210000), "DK": pct("DK", 250000), "EE": pct("EE", 240000),
		"FI": pct("FI", 255000), "FR": pct("FR", 200000), "DE": pct("DE", 190000), "GR": pct("GR", 240000),
		"HU": pct("HU", 270000), "IE": pct("IE", 230000), "IT": pct("IT", 220000), "LV": pct("LV", 210000),
		"LT": pct("LT", 210000), "LU": pct("LU", 170000), "MT": pct("MT", 180000), "NL": pct("NL", 210000),
		"PL": pct("PL", 230000), "PT": pct("PT", 230000), "RO": pct("RO", 210000), "SK": pct("SK", 230000),
		"SI": pct("SI", 220000), "ES": pct("ES", 210000), "SE": pct("SE", 250000),

		"GB": pct("GB", 200000),

		"CA":    {gst},
		"CA-AB": {gst}, "CA-NT": {gst}, "CA-NU": {gst}, "CA-YT": {gst},
		"CA-BC": {gst, {Jurisdiction: "CA-BC", RatePPM: 70000}},
		"CA-MB": {gst, {Jurisdiction: "CA-MB", RatePPM: 70000}},
		"CA-SK": {gst, {Jurisdiction: "CA-SK", RatePPM: 60000}},
		"CA-QC": {gst, {Jurisdiction: "CA-QC", RatePPM: 99750}},
		"CA-ON": pct("CA-ON", 130000),
		"CA-NB": pct("CA-NB", 150000),
		"CA-NL": pct("CA-NL", 150000),
		"CA-NS": pct("CA-NS", 140000),
		"CA-PE": pct("CA-PE", 150000),
	}
	return &Table{entries: e}
}
