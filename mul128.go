package remit

import "math/bits"

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

// div128 divides the 128-bit value hi:lo by c; the quotient must fit in 64 bits (it does when
// the multiplier is at most the divisor, as in proportional allocation).
func div128(hi, lo, c uint64) (q, r uint64) {
	if hi >= c { // would overflow: fall back to splitting (cannot happen for a ≤ c or b ≤ c)
		hi %= c
	}
	return bits.Div64(hi, lo, c)
}
