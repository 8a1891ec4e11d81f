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

// MinorDigits is the number of minor-unit digits of a currency: the rails' table, else ISO 4217's
// (an amount stored in a currency the rails no longer take still reads right), else 2.
func MinorDigits(code string) int {
	if d, ok := SupportedCurrencies[code]; ok {
		return d
	}
	if unit, err := currency.ParseISO(code); err == nil {
		scale, _ := currency.Standard.Rounding(unit)
		return scale
	}
	return 2
}

// DecimalAmount writes an amount of minor units as a plain decimal in its currency's major unit,
// with exactly the currency's minor digits, a '.' and no grouping: 123456 USD is "1234.56", -5 USD
// "-0.05", 500 JPY "500". It is exact (integer arithmetic, never floating point), for every int64.
func DecimalAmount(amount int64, code string) string {
	digits := MinorDigits(code)
	mag := uint64(amount)
	if amount < 0 {
		mag = -mag // two's complement: exact for math.MinInt64 too
	}
	var buf [32]byte // 20 digits of a uint64, the point, the sign, and the zeros a small amount needs
	i := len(buf)
	for n := 0; mag > 0 || n <= digits; n++ { // from the right: the minor digits, the point, the rest
		if n == digits && digits > 0 {
			i--
			buf[i] = '.'
		}
		i--
		buf[i] = byte('0' + mag%10)
		mag /= 10
	}
	if amount < 0 {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
