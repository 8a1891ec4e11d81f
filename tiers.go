package remit

import (
	"errors"
	"fmt"
)

// Tiered and package pricing of usage (docs/usage.md describes the pricing). A price may carry
// tiers instead of a unitAmount, with a tiersMode saying how a quantity meets them, and a
// transformQuantity that bills usage by the package. These are the pure rules: validation of the
// fields, and the amount of a quantity with its breakdown by tier. Amounts are int64 minor units,
// never floating point, and no figure may exceed MaxAmount: a larger one is an error, never a
// wrapped number.

// Tiers modes: how a quantity meets a price's tiers.
const (
	// TiersGraduated prices each unit at the tier it falls in, and adds the flat amount of every
	// tier reached (a tier is reached when at least one unit falls in it).
	TiersGraduated = "graduated"
	// TiersVolume prices the whole quantity at the unit amount of the one tier the total falls
	// in, and adds that tier's flat amount only.
	TiersVolume = "volume"
)

// Package rounding (TransformQuantity.Round).
const (
	RoundUp   = "up"   // a started package is billed whole: ceil(quantity ÷ divideBy)
	RoundDown = "down" // only full packages are billed: floor(quantity ÷ divideBy)
)

// ErrAmountTooLarge is the error of pricing a quantity whose amount, or any tier's amount, is more
// than MaxAmount minor units (which includes every product or sum that would overflow int64).
var ErrAmountTooLarge = fmt.Errorf("remit: amount is more than %d minor units", int64(MaxAmount))

// Tier is one tier of a tiered price. It holds the quantities above the previous tier's UpTo up to
// and including its own; UpTo is nil on the last tier only, which is open-ended. UnitAmount is the
// price of each unit in the tier (0 when absent, as the open-ended tier may leave it out), and
// FlatAmount is added once when the tier is charged (0 when absent).
type Tier struct {
	UpTo       *int64 `json:"upTo"`
	UnitAmount int64  `json:"unitAmount"`
	FlatAmount int64  `json:"flatAmount"`
	// UnitAmountGiven is whether the request gave unitAmount (only the open-ended tier may leave
	// it out); TieredPriceProblems checks it, on the request only.
	UnitAmountGiven bool `json:"-"`
}

// TransformQuantity bills usage by the package: the billed quantity is the number of packages of
// DivideBy units (≥ 1), rounded up or down (RoundUp, RoundDown). The price's unit amount is then
// the price of one package, and the line's quantity is the number of packages.
type TransformQuantity struct {
	DivideBy int64  `json:"divideBy"`
	Round    string `json:"round"`
}

// TierBreakdown is one tier's part of a tiered line: the tier's UpTo (nil for the open-ended
// tier), the Quantity priced in it, its unit and flat amounts, and Amount = Quantity × UnitAmount +
// FlatAmount. The amounts of a line's breakdown sum to the line's amount.
type TierBreakdown struct {
	UpTo       *int64 `json:"upTo"`
	Quantity   int64  `json:"quantity"`
	UnitAmount int64  `json:"unitAmount"`
	FlatAmount int64  `json:"flatAmount"`
	Amount     int64  `json:"amount"`
}

// ValidateTiers records every problem of a price's tiers and tiersMode in p, under field (the
// path of the object that carries them: "" for a price, "lines[2]" for a line), as "tiersMode"
// and "tiers[i].upTo", "tiers[i].unitAmount", "tiers[i].flatAmount". The rules: tiersMode is
// graduated or volume; there is at least one tier; each upTo is at least 1 and above the upTo of
// the tier before it; exactly one tier is open-ended (upTo null) and it is the last; unit and flat
// amounts are between 0 and MaxAmount. Whether unitAmount is given on a tier that is not the last
// is the contract's check: Tier cannot tell 0 from absent.
func ValidateTiers(p *Problems, field string, mode string, tiers []Tier) {
	switch mode {
	case TiersGraduated, TiersVolume:
	case "":
		p.Body(subField(field, "tiersMode"), "required", "tiersMode is required with tiers: graduated (each unit at the price of its tier) or volume (every unit at the price of the tier the total falls in).")
	default:
		p.Body(subField(field, "tiersMode"), "invalid_enum", fmt.Sprintf("tiersMode must be graduated or volume; got %q.", mode))
	}
	if len(tiers) == 0 {
		p.Body(subField(field, "tiers"), "required", "tiers needs at least one tier; the last one is open-ended (upTo null).")
		return
	}
	var prev int64 // the highest upTo before this tier
	for i, t := range tiers {
		f := subField(field, fmt.Sprintf("tiers[%d]", i))
		last := i == len(tiers)-1
		switch {
		case t.UpTo == nil && !last:
			p.Body(f+".upTo", "not_allowed", "upTo may be null (open-ended) only on the last tier; give this tier an upTo above the one before it, or make it the last.")
		case t.UpTo == nil:
		case last:
			p.Body(f+".upTo", "not_allowed", "The last tier is open-ended: its upTo must be null, so that every quantity falls in a tier.")
		case *t.UpTo < 1:
			p.Body(f+".upTo", "out_of_range", fmt.Sprintf("upTo must be at least 1 (a tier holds the quantities up to and including its upTo); got %d.", *t.UpTo))
		case *t.UpTo <= prev:
			p.Body(f+".upTo", "not_increasing", fmt.Sprintf("Tiers ascend by upTo: %d is not above %d, the upTo of a tier before it.", *t.UpTo, prev))
		}
		if t.UpTo != nil {
			prev = max(prev, *t.UpTo)
		}
		amountRangeProblem(p, f+".unitAmount", "unitAmount", t.UnitAmount)
		amountRangeProblem(p, f+".flatAmount", "flatAmount", t.FlatAmount)
	}
}

// TieredPriceProblems records the problems of a price's tiered fields under field (as
// ValidateTiers): without tiers, a tiersMode is not allowed; with tiers, the unit amounts are the
// tiers', so a top-level unitAmount is not allowed, and the tiers are validated (ValidateTiers).
func TieredPriceProblems(p *Problems, field string, unitAmount *int64, mode string, tiers []Tier) {
	if tiers == nil {
		if mode != "" {
			p.Body(subField(field, "tiersMode"), "not_allowed", "tiersMode is given only with tiers.")
		}
		return
	}
	if unitAmount != nil {
		p.Body(subField(field, "unitAmount"), "not_allowed", "A tiered price takes its unit amounts from its tiers; leave unitAmount out.")
	}
	for i, t := range tiers {
		if !t.UnitAmountGiven && i < len(tiers)-1 {
			p.Body(subField(field, fmt.Sprintf("tiers[%d].unitAmount", i)), "required", "unitAmount is required on every tier but the last (open-ended) one, which may give a flatAmount only.")
		}
	}
	ValidateTiers(p, field, mode, tiers)
}

// ValidateTransform records every problem of a transformQuantity (nil: none) in p, under field
// (the path of the object that carries it, as ValidateTiers), as "transformQuantity.divideBy"
// (at least 1) and "transformQuantity.round" (up or down).
func ValidateTransform(p *Problems, field string, t *TransformQuantity) {
	if t == nil {
		return
	}
	f := subField(field, "transformQuantity")
	if t.DivideBy < 1 {
		p.Body(f+".divideBy", "out_of_range", fmt.Sprintf("divideBy must be at least 1: it is the number of units in one package; got %d.", t.DivideBy))
	}
	switch t.Round {
	case RoundUp, RoundDown:
	case "":
		p.Body(f+".round", "required", "round is required: up (a started package is billed whole) or down (only full packages are billed).")
	default:
		p.Body(f+".round", "invalid_enum", fmt.Sprintf("round must be up or down; got %q.", t.Round))
	}
}

// PackageQuantity is the quantity billed for quantity (≥ 0) units: with no transform (nil), the
// quantity itself; else the number of packages, quantity ÷ DivideBy rounded up (a started package
// is billed whole) or down (only full packages are billed). Like RoundHalfUp, it panics on a
// transform that ValidateTransform refuses.
func PackageQuantity(quantity int64, t *TransformQuantity) int64 {
	if t == nil {
		return quantity
	}
	if t.DivideBy < 1 {
		panic("remit.PackageQuantity: divideBy below 1")
	}
	q := quantity / t.DivideBy
	switch t.Round {
	case RoundDown:
		return q
	case RoundUp:
		if quantity%t.DivideBy != 0 {
			q++ // no overflow: DivideBy ≥ 2 here, so q ≤ MaxInt64/2
		}
		return q
	}
	panic("remit.PackageQuantity: round is neither up nor down")
}

// PriceTiers prices quantity (≥ 0) on tiers in mode, and returns the amount with its breakdown
// (one entry per tier reached in graduated mode, the one tier used in volume mode; the entries'
// amounts sum to the amount). Graduated: each unit is priced at the tier it falls in, plus the
// flat amount of every tier reached. Volume: every unit is priced at the unit amount of the tier
// the whole quantity falls in, plus that tier's flat amount only. Quantity 0 reaches no tier in
// either mode: the amount is 0 and the breakdown empty, so a volume price's first flat amount is
// not charged for no usage. Tiers that ValidateTiers refuses, a negative quantity, or an amount
// above MaxAmount (ErrAmountTooLarge) is an error.
func PriceTiers(mode string, tiers []Tier, quantity int64) (amount int64, breakdown []TierBreakdown, err error) {
	var p Problems
	ValidateTiers(&p, "", mode, tiers)
	if err := p.Err(); err != nil {
		return 0, nil, fmt.Errorf("remit: cannot price on invalid tiers: %w", err)
	}
	switch {
	case quantity < 0:
		return 0, nil, fmt.Errorf("remit: cannot price a negative quantity %d", quantity)
	case quantity == 0:
		return 0, nil, nil
	case mode == TiersVolume:
		return priceVolume(tiers, quantity)
	}
	return priceGraduated(tiers, quantity)
}

// priceGraduated prices each unit at its tier, for valid tiers (the last is open-ended).
func priceGraduated(tiers []Tier, quantity int64) (int64, []TierBreakdown, error) {
	var total, below int64 // below: the units of the tiers before
	var out []TierBreakdown
	for i, t := range tiers {
		if below >= quantity {
			break
		}
		n := quantity - below
		if t.UpTo != nil {
			n = min(n, *t.UpTo-below)
			below = *t.UpTo
		}
		b, err := tierBreakdown(i, t, n)
		if err == nil {
			total, err = addAmounts(total, b.Amount)
		}
		if err != nil {
			return 0, nil, err
		}
		out = append(out, b)
	}
	return total, out, nil
}

// priceVolume prices the whole quantity at the tier it falls in, for valid tiers.
func priceVolume(tiers []Tier, quantity int64) (int64, []TierBreakdown, error) {
	for i, t := range tiers {
		if t.UpTo == nil || quantity <= *t.UpTo {
			b, err := tierBreakdown(i, t, quantity)
			if err != nil {
				return 0, nil, err
			}
			return b.Amount, []TierBreakdown{b}, nil
		}
	}
	return 0, nil, errors.New("remit: no tier holds the quantity") // valid tiers end open-ended
}

// tierBreakdown is the entry of tier i (t) for n units: n × unit amount + flat amount.
func tierBreakdown(i int, t Tier, n int64) (TierBreakdown, error) {
	units, err := mulAmount(n, t.UnitAmount)
	if err == nil {
		units, err = addAmounts(units, t.FlatAmount)
	}
	if err != nil {
		return TierBreakdown{}, fmt.Errorf("tiers[%d]: %d × %d + %d: %w", i, n, t.UnitAmount, t.FlatAmount, err)
	}
	b := TierBreakdown{Quantity: n, UnitAmount: t.UnitAmount, FlatAmount: t.FlatAmount, Amount: units}
	if t.UpTo != nil {
		upTo := *t.UpTo
		b.UpTo = &upTo // the breakdown does not share the price's tier
	}
	return b, nil
}

// UsagePricing is how a usage line is priced: Tiers in Mode, else UnitAmount per unit, after
// Transform (nil: none) turns the usage into packages. docs/usage.md describes the pricing.
type UsagePricing struct {
	UnitAmount int64
	Mode       string
	Tiers      []Tier
	Transform  *TransformQuantity
}

// Amount prices quantity (≥ 0) units of usage: the transform first (PackageQuantity), then the
// tiers (PriceTiers), or packages × UnitAmount with no tiers (and then no breakdown). An invalid
// transform or tiers, a negative quantity, or an amount above MaxAmount (ErrAmountTooLarge) is an
// error.
func (u UsagePricing) Amount(quantity int64) (int64, []TierBreakdown, error) {
	if quantity < 0 {
		return 0, nil, fmt.Errorf("remit: cannot price a negative quantity %d", quantity)
	}
	var p Problems
	ValidateTransform(&p, "", u.Transform)
	if err := p.Err(); err != nil {
		return 0, nil, fmt.Errorf("remit: cannot price with an invalid transformQuantity: %w", err)
	}
	q := PackageQuantity(quantity, u.Transform)
	if len(u.Tiers) > 0 {
		return PriceTiers(u.Mode, u.Tiers, q)
	}
	if u.UnitAmount < 0 {
		return 0, nil, fmt.Errorf("remit: cannot price at a negative unit amount %d", u.UnitAmount)
	}
	amount, err := mulAmount(q, u.UnitAmount)
	if err != nil {
		return 0, nil, fmt.Errorf("%d × %d: %w", q, u.UnitAmount, err)
	}
	return amount, nil, nil
}

// UsageCorrectionCredit is what a correction of usage from before to after units (0 ≤ after ≤
// before) gives back: the amount of before less the amount of after, both priced by the same rules
// (UsagePricing.Amount), so that packages and tiers are respected: a correction within a package
// gives back nothing, one that leaves a tier gives back its flat amount. Volume pricing can charge
// less for more units (past a tier boundary); when less usage would cost more, the credit is 0, as
// a correction never charges the customer.
func UsageCorrectionCredit(pricing UsagePricing, before, after int64) (int64, error) {
	if after < 0 || after > before {
		return 0, fmt.Errorf("remit: a usage correction goes from %d down to between 0 and %d units, not to %d", before, before, after)
	}
	was, _, err := pricing.Amount(before)
	if err != nil {
		return 0, err
	}
	is, _, err := pricing.Amount(after)
	if errors.Is(err, ErrAmountTooLarge) {
		return 0, nil // less usage would cost more than any amount (volume tiers): nothing to give back
	}
	if err != nil {
		return 0, err
	}
	return max(was-is, 0), nil
}

// mulAmount is n × unit (both ≥ 0) in minor units, ErrAmountTooLarge above MaxAmount, computed in
// 128 bits so that it never wraps.
func mulAmount(n, unit int64) (int64, error) {
	hi, lo := mul64(uint64(n), uint64(unit))
	if hi != 0 || lo > MaxAmount {
		return 0, ErrAmountTooLarge
	}
	return int64(lo), nil
}

// addAmounts is a + b (each 0 to MaxAmount, so the sum fits in int64), ErrAmountTooLarge above
// MaxAmount.
func addAmounts(a, b int64) (int64, error) {
	if a+b > MaxAmount {
		return 0, ErrAmountTooLarge
	}
	return a + b, nil
}

// amountRangeProblem records an amount outside 0 to MaxAmount at field.
func amountRangeProblem(p *Problems, field, name string, v int64) {
	if v < 0 || v > MaxAmount {
		p.Body(field, "out_of_range", fmt.Sprintf("%s must be between 0 and %d minor units; got %d.", name, int64(MaxAmount), v))
	}
}

// subField is the path of name within the object at field ("" for the request's body itself).
func subField(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// CorrectedUsage is a finalized line's usage after a void: what it billed (billed) less what the
// void took out of its period's aggregate (before − after, read just before and after the void),
// between 0 and billed (a correction never bills more). The difference of the aggregate, not the
// aggregate itself, is used because usage recorded after the invoice was finalized is in the
// period's aggregate but not on the line.
func CorrectedUsage(billed, before, after int64) int64 {
	return min(max(billed-(before-after), 0), billed)
}
