package tax

import (
	"strconv"
	"strings"
)

// Label is the name a document prints for a jurisdiction's tax: GST, PST, QST and HST in Canada,
// VAT in the EU and the UK, sales tax in the US. A jurisdiction the shipped table does not know
// (a replacement rate file may add any) is simply "Tax"; documents print the code beside it.
func Label(jurisdiction string) string {
	j := strings.ToUpper(jurisdiction)
	country, region, _ := strings.Cut(j, "-")
	switch {
	case j == "CA":
		return "GST"
	case j == "CA-QC":
		return "QST"
	case country == "CA" && (region == "BC" || region == "MB" || region == "SK"):
		return "PST"
	case country == "CA" && (region == "ON" || region == "NB" || region == "NL" || region == "NS" || region == "PE"):
		return "HST"
	case country == "US":
		return "Sales tax"
	case country == "GB" || euMember[country]:
		return "VAT"
	}
	return "Tax"
}

var euMember = map[string]bool{
	"AT": true, "BE": true, "BG": true, "HR": true, "CY": true, "CZ": true, "DK": true, "EE": true, "FI": true,
	"FR": true, "DE": true, "GR": true, "HU": true, "IE": true, "IT": true, "LV": true, "LT": true, "LU": true,
	"MT": true, "NL": true, "PL": true, "PT": true, "RO": true, "SK": true, "SI": true, "ES": true, "SE": true,
}

// FormatRate prints a rate in parts per million as a percentage without trailing zeros:
// 50000 → "5%", 72500 → "7.25%", 99750 → "9.975%". Exact: no floating point.
func FormatRate(ppm int64) string {
	sign := ""
	if ppm < 0 {
		sign, ppm = "-", -ppm
	}
	whole, frac := ppm/10000, ppm%10000
	s := sign + strconv.FormatInt(whole, 10)
	if frac != 0 {
		f := strings.TrimRight(strconv.FormatInt(frac+10000, 10)[1:], "0")
		s += "." + f
	}
	return s + "%"
}
