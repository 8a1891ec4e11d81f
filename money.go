package remit

import (
	"regexp"

	"golang.org/x/text/currency"
)

// Amounts are int64 counts of a currency's minor unit (cents; JPY has none), never floating point.

// SupportedCurrencies are the currencies the rails process.
var SupportedCurrencies = map[string]int{ // currency -> minor-unit digits
	"USD": 2, "EUR": 2, "GBP": 2, "CAD": 2, "AUD": 2, "JPY": 0, "CHF": 2,
	"SEK": 2, "NOK": 2, "DKK": 2, "NZD": 2, "SGD": 2,
}

var currencyShape = regexp.MustCompile(`^[A-Z]{3}$`)

// CheckCurrency validates an ISO 4217 alpha-3 code against the rails. It returns "" when the code
// is usable, "invalid_currency" when it is not an ISO code, and "currency_not_supported" when it is
// a valid code the rails do not process.
func CheckCurrency(code string) (reason string) {
	if _, ok := SupportedCurrencies[code]; ok {
		return ""
	}
	if currencyShape.MatchString(code) && isISOCurrency(code) {
		return "currency_not_supported"
	}
	return "invalid_currency"
}

// CurrencyProblem adds the problem with a currency field to p, if any.
func CurrencyProblem(p *Problems, location, field, code string) {
	switch CheckCurrency(code) {
	case "currency_not_supported":
		p.Add(location, field, "currency_not_supported", "Currency '"+code+"' is a valid ISO 4217 code but is not processable on the current rails; use one of USD, EUR, GBP, CAD, AUD, JPY, CHF, SEK, NOK, DKK, NZD, SGD.")
	case "invalid_currency":
		p.Add(location, field, "invalid_currency", "Currency must be an upper-case ISO 4217 alpha-3 code such as USD.")
	}
}

// RoundHalfUp divides num by den (den > 0) and rounds half away from zero for non-negative values.
// It is the one rounding rule for money (tax per line, percent discounts, fees).
func RoundHalfUp(num, den int64) int64 {
	if den <= 0 {
		panic("remit.RoundHalfUp: non-positive denominator")
	}
	if num < 0 {
		return -RoundHalfUp(-num, den)
	}
	q, r := num/den, num%den
	if 2*r >= den {
		q++
	}
	return q
}

func isISOCurrency(code string) bool {
	_, err := currency.ParseISO(code)
	return err == nil
}
