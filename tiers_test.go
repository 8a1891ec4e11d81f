package remit_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/remit-billing/remit"
)

// tierOpen stands for a null upTo in tierOf.
const tierOpen = -1

// tierOf is a tier up to upTo (tierOpen: none) at unit per unit plus flat.
func tierOf(upTo, unit, flat int64) remit.Tier {
	t := remit.Tier{UnitAmount: unit, FlatAmount: flat, UnitAmountGiven: true}
	if upTo != tierOpen {
		t.UpTo = &upTo
	}
	return t
}

// tierLine is a breakdown entry of quantity units in the tier up to upTo (tierOpen: none).
func tierLine(upTo, quantity, unit, flat, amount int64) remit.TierBreakdown {
	b := remit.TierBreakdown{Quantity: quantity, UnitAmount: unit, FlatAmount: flat, Amount: amount}
	if upTo != tierOpen {
		b.UpTo = &upTo
	}
	return b
}

var (
	// three tiers: 1-10 at 100, 11-20 at 80, 21+ at 50
	tiersThree = []remit.Tier{tierOf(10, 100, 0), tierOf(20, 80, 0), tierOf(tierOpen, 50, 0)}
	// the same with flat amounts 1000, 500 and 200
	tiersThreeFlat = []remit.Tier{tierOf(10, 100, 1000), tierOf(20, 80, 500), tierOf(tierOpen, 50, 200)}
	// 5 per unit up to 100, then nothing more: the open-ended tier has no unitAmount
	tiersCapped = []remit.Tier{tierOf(100, 5, 0), {}}
	// free up to 1000, then a flat 5000 however much more
	tiersFlatAbove = []remit.Tier{tierOf(1000, 0, 0), tierOf(tierOpen, 0, 5000)}
	// one open-ended tier at 3 per unit
	tiersSingle = []remit.Tier{tierOf(tierOpen, 3, 0)}
)

// TestPriceTiers: graduated and volume amounts with their breakdowns.
func TestPriceTiers(t *testing.T) {
	for _, c := range []struct {
		name     string
		mode     string
		tiers    []remit.Tier
		quantity int64
		want     int64
		lines    []remit.TierBreakdown
	}{
		{"graduated 0 reaches no tier", remit.TiersGraduated, tiersThreeFlat, 0, 0, nil},
		{"graduated, 1 tier", remit.TiersGraduated, tiersThree, 1, 100, []remit.TierBreakdown{tierLine(10, 1, 100, 0, 100)}},
		{"graduated, at the first boundary", remit.TiersGraduated, tiersThree, 10, 1000, []remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000)}},
		{"graduated, 2 tiers", remit.TiersGraduated, tiersThree, 11, 1080,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000), tierLine(20, 1, 80, 0, 80)}},
		{"graduated, at the second boundary", remit.TiersGraduated, tiersThree, 20, 1800,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000), tierLine(20, 10, 80, 0, 800)}},
		{"graduated, 3 tiers", remit.TiersGraduated, tiersThree, 25, 2050,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000), tierLine(20, 10, 80, 0, 800), tierLine(tierOpen, 5, 50, 0, 250)}},
		{"graduated flat, 1 tier", remit.TiersGraduated, tiersThreeFlat, 1, 1100, []remit.TierBreakdown{tierLine(10, 1, 100, 1000, 1100)}},
		{"graduated flat, at the boundary: the next flat amount is not reached", remit.TiersGraduated, tiersThreeFlat, 10, 2000,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 1000, 2000)}},
		{"graduated flat, 2 tiers: both flat amounts", remit.TiersGraduated, tiersThreeFlat, 11, 2580,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 1000, 2000), tierLine(20, 1, 80, 500, 580)}},
		{"graduated flat, 3 tiers: every flat amount", remit.TiersGraduated, tiersThreeFlat, 25, 3750,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 1000, 2000), tierLine(20, 10, 80, 500, 1300), tierLine(tierOpen, 5, 50, 200, 450)}},
		{"open-ended tier without unitAmount", remit.TiersGraduated, tiersCapped, 150, 500,
			[]remit.TierBreakdown{tierLine(100, 100, 5, 0, 500), tierLine(tierOpen, 50, 0, 0, 0)}},
		{"free tier up to its boundary", remit.TiersGraduated, tiersFlatAbove, 1000, 0, []remit.TierBreakdown{tierLine(1000, 1000, 0, 0, 0)}},
		{"flat amount once past it", remit.TiersGraduated, tiersFlatAbove, 1001, 5000,
			[]remit.TierBreakdown{tierLine(1000, 1000, 0, 0, 0), tierLine(tierOpen, 1, 0, 5000, 5000)}},
		{"one open-ended tier", remit.TiersGraduated, tiersSingle, 7, 21, []remit.TierBreakdown{tierLine(tierOpen, 7, 3, 0, 21)}},
		{"the largest amount is allowed", remit.TiersGraduated, tiersSingle, remit.MaxAmount / 3, remit.MaxAmount,
			[]remit.TierBreakdown{tierLine(tierOpen, remit.MaxAmount/3, 3, 0, remit.MaxAmount)}},

		{"volume 0 charges no flat amount", remit.TiersVolume, tiersThreeFlat, 0, 0, nil},
		{"volume, first tier", remit.TiersVolume, tiersThreeFlat, 1, 1100, []remit.TierBreakdown{tierLine(10, 1, 100, 1000, 1100)}},
		{"volume, at the first boundary", remit.TiersVolume, tiersThreeFlat, 10, 2000, []remit.TierBreakdown{tierLine(10, 10, 100, 1000, 2000)}},
		{"volume, past it: every unit at the second tier", remit.TiersVolume, tiersThreeFlat, 11, 1380, []remit.TierBreakdown{tierLine(20, 11, 80, 500, 1380)}},
		{"volume, at the second boundary", remit.TiersVolume, tiersThreeFlat, 20, 2100, []remit.TierBreakdown{tierLine(20, 20, 80, 500, 2100)}},
		{"volume, open-ended tier", remit.TiersVolume, tiersThreeFlat, 21, 1250, []remit.TierBreakdown{tierLine(tierOpen, 21, 50, 200, 1250)}},
		{"volume without flat amounts", remit.TiersVolume, tiersThree, 15, 1200, []remit.TierBreakdown{tierLine(20, 15, 80, 0, 1200)}},
		{"volume, open-ended tier without unitAmount", remit.TiersVolume, tiersCapped, 101, 0, []remit.TierBreakdown{tierLine(tierOpen, 101, 0, 0, 0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, lines, err := remit.PriceTiers(c.mode, c.tiers, c.quantity)
			if err != nil || got != c.want || !reflect.DeepEqual(lines, c.lines) {
				t.Fatalf("got %d %s %v, want %d %s", got, showTierLines(lines), err, c.want, showTierLines(c.lines))
			}
		})
	}
}

// TestPriceTiersErrors: an amount above MaxAmount, or anything that cannot be priced, is an error.
func TestPriceTiersErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		mode     string
		tiers    []remit.Tier
		quantity int64
		tooLarge bool
	}{
		{"graduated product above MaxAmount", remit.TiersGraduated, []remit.Tier{tierOf(tierOpen, remit.MaxAmount, 0)}, 2, true},
		{"graduated product that would wrap int64", remit.TiersGraduated, tiersSingle, 1<<62 + 1, true},
		{"graduated sum of flat amounts above MaxAmount", remit.TiersGraduated,
			[]remit.Tier{tierOf(1, 0, remit.MaxAmount), tierOf(tierOpen, 0, 1)}, 2, true},
		{"graduated units plus flat above MaxAmount", remit.TiersGraduated, []remit.Tier{tierOf(tierOpen, 1, 1)}, remit.MaxAmount, true},
		{"volume product that would wrap int64", remit.TiersVolume, []remit.Tier{tierOf(tierOpen, 3, 0)}, 1<<62 - 1, true},
		{"volume flat amount past MaxAmount", remit.TiersVolume, []remit.Tier{tierOf(tierOpen, 1, 1)}, remit.MaxAmount, true},
		{"unknown mode", "stairstep", tiersThree, 5, false},
		{"no tiers", remit.TiersGraduated, nil, 5, false},
		{"last tier not open-ended", remit.TiersVolume, []remit.Tier{tierOf(10, 1, 0)}, 11, false},
		{"negative quantity", remit.TiersGraduated, tiersThree, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, lines, err := remit.PriceTiers(c.mode, c.tiers, c.quantity)
			if err == nil || got != 0 || lines != nil {
				t.Fatalf("got %d %v %v, want an error", got, lines, err)
			}
			if errors.Is(err, remit.ErrAmountTooLarge) != c.tooLarge {
				t.Fatalf("err %v: ErrAmountTooLarge is %v, want %v", err, !c.tooLarge, c.tooLarge)
			}
		})
	}
}

// TestTiersGraduatedProperties: for graduated tiers, the breakdown sums to the amount and to the
// quantity, each entry is quantity × unit + flat of a reached tier, and the amount never falls as
// the quantity grows.
func TestTiersGraduatedProperties(t *testing.T) {
	sets := map[string][]remit.Tier{"tiersThree": tiersThree, "tiersThreeFlat": tiersThreeFlat, "tiersCapped": tiersCapped, "tiersFlatAbove": tiersFlatAbove, "tiersSingle": tiersSingle,
		"narrow": {tierOf(1, 7, 3), tierOf(2, 0, 0), tierOf(3, 9, 0), tierOf(250, 1, 40), tierOf(tierOpen, 2, 1)}}
	for name, tiers := range sets {
		prev := int64(-1)
		for q := int64(0); q <= 500; q++ {
			amount, lines, err := remit.PriceTiers(remit.TiersGraduated, tiers, q)
			if err != nil {
				t.Fatalf("%s at %d: %v", name, q, err)
			}
			var sum, units int64
			for _, l := range lines {
				if l.Quantity < 1 || l.Amount != l.Quantity*l.UnitAmount+l.FlatAmount {
					t.Fatalf("%s at %d: entry %+v", name, q, l)
				}
				sum += l.Amount
				units += l.Quantity
			}
			if sum != amount || units != q {
				t.Fatalf("%s at %d: amount %d, breakdown sums to %d for %d units", name, q, amount, sum, units)
			}
			if amount < prev {
				t.Fatalf("%s: %d units cost %d, less than %d for one fewer", name, q, amount, prev)
			}
			prev = amount
		}
	}
	// the sets do not all price alike: one known value each pins the loop to the right tiers
	for name, want := range map[string]int64{"tiersThree": 1800 + 480*50, "tiersThreeFlat": 1800 + 480*50 + 1700, "tiersCapped": 500, "tiersFlatAbove": 0, "tiersSingle": 1500, "narrow": 10 + 9 + 247 + 40 + 250*2 + 1} {
		if got, _, _ := remit.PriceTiers(remit.TiersGraduated, sets[name], 500); got != want {
			t.Errorf("%s at 500: %d, want %d", name, got, want)
		}
	}
}

// TestValidateTiers: every problem of tiers and tiersMode, each at its own field.
func TestValidateTiers(t *testing.T) {
	for _, c := range []struct {
		name     string
		field    string
		mode     string
		tiers    []remit.Tier
		problems []string
	}{
		{"graduated three tiers", "", remit.TiersGraduated, tiersThreeFlat, nil},
		{"volume with an open-ended tier without amounts", "", remit.TiersVolume, tiersCapped, nil},
		{"one open-ended tier", "", remit.TiersVolume, tiersSingle, nil},
		{"upTo 1 then 2", "", remit.TiersGraduated, []remit.Tier{tierOf(1, 1, 0), tierOf(2, 1, 0), tierOf(tierOpen, 0, 0)}, nil},
		{"largest amounts", "", remit.TiersGraduated, []remit.Tier{tierOf(tierOpen, remit.MaxAmount, remit.MaxAmount)}, nil},
		{"no tiers", "", remit.TiersGraduated, []remit.Tier{}, []string{"tiers:required"}},
		{"no mode", "", "", tiersThree, []string{"tiersMode:required"}},
		{"unknown mode", "", "tiered", tiersThree, []string{"tiersMode:invalid_enum"}},
		{"out of order", "", remit.TiersGraduated, []remit.Tier{tierOf(10, 1, 0), tierOf(5, 1, 0), tierOf(tierOpen, 1, 0)}, []string{"tiers[1].upTo:not_increasing"}},
		{"equal upTo", "", remit.TiersGraduated, []remit.Tier{tierOf(10, 1, 0), tierOf(10, 1, 0), tierOf(tierOpen, 1, 0)}, []string{"tiers[1].upTo:not_increasing"}},
		{"below an earlier upTo, not only the one before", "", remit.TiersVolume,
			[]remit.Tier{tierOf(10, 1, 0), tierOf(0, 1, 0), tierOf(7, 1, 0), tierOf(tierOpen, 1, 0)},
			[]string{"tiers[1].upTo:out_of_range", "tiers[2].upTo:not_increasing"}},
		{"two open-ended", "", remit.TiersGraduated, []remit.Tier{tierOf(tierOpen, 1, 0), tierOf(tierOpen, 1, 0)}, []string{"tiers[0].upTo:not_allowed"}},
		{"open-ended not last", "", remit.TiersGraduated, []remit.Tier{tierOf(tierOpen, 1, 0), tierOf(5, 1, 0)},
			[]string{"tiers[0].upTo:not_allowed", "tiers[1].upTo:not_allowed"}},
		{"no open-ended tier", "", remit.TiersGraduated, []remit.Tier{tierOf(10, 1, 0), tierOf(20, 1, 0)}, []string{"tiers[1].upTo:not_allowed"}},
		{"upTo 0", "", remit.TiersGraduated, []remit.Tier{tierOf(0, 1, 0), tierOf(tierOpen, 1, 0)}, []string{"tiers[0].upTo:out_of_range"}},
		{"negative amounts", "", remit.TiersVolume, []remit.Tier{tierOf(10, -1, 0), tierOf(tierOpen, 0, -5)},
			[]string{"tiers[0].unitAmount:out_of_range", "tiers[1].flatAmount:out_of_range"}},
		{"amounts above MaxAmount", "", remit.TiersVolume, []remit.Tier{tierOf(tierOpen, remit.MaxAmount+1, remit.MaxAmount+1)},
			[]string{"tiers[0].unitAmount:out_of_range", "tiers[0].flatAmount:out_of_range"}},
		{"everything at once, under a line", "lines[2]", "stairstep",
			[]remit.Tier{tierOf(10, 100, 0), tierOf(5, -1, 0), tierOf(tierOpen, 50, 0), tierOf(0, 0, -5), tierOf(tierOpen, 0, 0)},
			[]string{"lines[2].tiersMode:invalid_enum", "lines[2].tiers[1].upTo:not_increasing", "lines[2].tiers[1].unitAmount:out_of_range",
				"lines[2].tiers[2].upTo:not_allowed", "lines[2].tiers[3].upTo:out_of_range", "lines[2].tiers[3].flatAmount:out_of_range"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.ValidateTiers(&p, c.field, c.mode, c.tiers)
			wantProblems(t, &p, c.problems...)
		})
	}
}

// TestValidateTiersMessages: the words of the problems say what is wrong and what is expected.
func TestValidateTiersMessages(t *testing.T) {
	var p remit.Problems
	remit.ValidateTiers(&p, "", "", []remit.Tier{tierOf(10, 1, 0), tierOf(tierOpen, 1, 0), tierOf(9, -3, 0)})
	remit.ValidateTransform(&p, "", &remit.TransformQuantity{DivideBy: 0, Round: "nearest"})
	want := []string{
		"tiersMode is required with tiers: graduated (each unit at the price of its tier) or volume (every unit at the price of the tier the total falls in).",
		"upTo may be null (open-ended) only on the last tier; give this tier an upTo above the one before it, or make it the last.",
		"The last tier is open-ended: its upTo must be null, so that every quantity falls in a tier.",
		"unitAmount must be between 0 and 999999999999 minor units; got -3.",
		"divideBy must be at least 1: it is the number of units in one package; got 0.",
		"round must be up or down; got \"nearest\".",
	}
	fields := p.Fields()
	if len(fields) != len(want) {
		t.Fatalf("problems %v, want %d", problems(&p), len(want))
	}
	for i, f := range fields {
		if f.Message != want[i] || f.Location != remit.InBody {
			t.Errorf("%s: %s %q, want body %q", f.Field, f.Location, f.Message, want[i])
		}
	}
}

// TestValidateTransform: divideBy at least 1, round up or down.
func TestValidateTransform(t *testing.T) {
	for _, c := range []struct {
		name     string
		field    string
		t        *remit.TransformQuantity
		problems []string
	}{
		{"none", "", nil, nil},
		{"packages of 100 rounded up", "", &remit.TransformQuantity{DivideBy: 100, Round: remit.RoundUp}, nil},
		{"divideBy 1 rounded down", "", &remit.TransformQuantity{DivideBy: 1, Round: remit.RoundDown}, nil},
		{"divideBy 0", "", &remit.TransformQuantity{DivideBy: 0, Round: remit.RoundUp}, []string{"transformQuantity.divideBy:out_of_range"}},
		{"negative divideBy", "", &remit.TransformQuantity{DivideBy: -4, Round: remit.RoundDown}, []string{"transformQuantity.divideBy:out_of_range"}},
		{"no round", "", &remit.TransformQuantity{DivideBy: 10}, []string{"transformQuantity.round:required"}},
		{"bad round", "", &remit.TransformQuantity{DivideBy: 10, Round: "Up"}, []string{"transformQuantity.round:invalid_enum"}},
		{"both, under a line", "lines[0]", &remit.TransformQuantity{DivideBy: 0, Round: "half"},
			[]string{"lines[0].transformQuantity.divideBy:out_of_range", "lines[0].transformQuantity.round:invalid_enum"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.ValidateTransform(&p, c.field, c.t)
			wantProblems(t, &p, c.problems...)
		})
	}
}

// TestTiersAllProblemsAtOnce: one validation error lists the problems of the tiers, the mode and
// the transform together, not the first one only.
func TestTiersAllProblemsAtOnce(t *testing.T) {
	var p remit.Problems
	remit.TieredPriceProblems(&p, "", ptr[int64](5), "banded", []remit.Tier{
		tierOf(20, 1, 0), tierOf(10, -2, 0), tierOf(tierOpen, 1, 0), tierOf(0, 1, -1), tierOf(tierOpen, 1, 0)})
	remit.ValidateTransform(&p, "", &remit.TransformQuantity{DivideBy: 0, Round: "sideways"})
	var e *remit.Error
	if !errorAs(p.Err(), &e) || e.Code != remit.EInvalid {
		t.Fatalf("err %v, want validation_failure", p.Err())
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Field+":"+f.Reason)
	}
	want := []string{"unitAmount:not_allowed", "tiersMode:invalid_enum", "tiers[1].upTo:not_increasing", "tiers[1].unitAmount:out_of_range",
		"tiers[2].upTo:not_allowed", "tiers[3].upTo:out_of_range", "tiers[3].flatAmount:out_of_range",
		"transformQuantity.divideBy:out_of_range", "transformQuantity.round:invalid_enum"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v\nwant %v", got, want)
	}
	if e.Message != "The request has 9 invalid fields; see error.details.fields." {
		t.Errorf("message %q", e.Message)
	}
}

// TestTieredPriceProblems: tiersMode only with tiers, and a tiered price has no unitAmount.
func TestTieredPriceProblems(t *testing.T) {
	for _, c := range []struct {
		name       string
		unitAmount *int64
		mode       string
		tiers      []remit.Tier
		problems   []string
	}{
		{"a flat price", ptr[int64](5), "", nil, nil},
		{"tiersMode without tiers", ptr[int64](5), remit.TiersVolume, nil, []string{"tiersMode:not_allowed"}},
		{"a tiered price", nil, remit.TiersVolume, tiersThree, nil},
		{"a tiered price with a unitAmount", ptr[int64](0), remit.TiersGraduated, tiersThree, []string{"unitAmount:not_allowed"}},
		{"empty tiers", nil, remit.TiersGraduated, []remit.Tier{}, []string{"tiers:required"}},
		{"tiers without tiersMode", nil, "", tiersThree, []string{"tiersMode:required"}},
		{"a tier but the last without unitAmount", nil, remit.TiersGraduated,
			[]remit.Tier{tierOf(10, 100, 0), {UpTo: ptr[int64](20), FlatAmount: 5}, {FlatAmount: 7}},
			[]string{"tiers[1].unitAmount:required"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.TieredPriceProblems(&p, "", c.unitAmount, c.mode, c.tiers)
			wantProblems(t, &p, c.problems...)
		})
	}
}

// TestPackageQuantity: packages of divideBy units, rounded up or down.
func TestPackageQuantity(t *testing.T) {
	up := func(n int64) *remit.TransformQuantity {
		return &remit.TransformQuantity{DivideBy: n, Round: remit.RoundUp}
	}
	down := func(n int64) *remit.TransformQuantity {
		return &remit.TransformQuantity{DivideBy: n, Round: remit.RoundDown}
	}
	for _, c := range []struct {
		name     string
		quantity int64
		t        *remit.TransformQuantity
		want     int64
	}{
		{"no transform", 7, nil, 7},
		{"no transform, 0", 0, nil, 0},
		{"up, 0", 0, up(10), 0},
		{"up, 1 unit is a package", 1, up(10), 1},
		{"up, one short of a package", 9, up(10), 1},
		{"up, exactly one package", 10, up(10), 1},
		{"up, one past a package", 11, up(10), 2},
		{"up, exact multiple", 20, up(10), 2},
		{"up, past a multiple", 21, up(10), 3},
		{"down, 0", 0, down(10), 0},
		{"down, less than a package", 9, down(10), 0},
		{"down, exactly one package", 10, down(10), 1},
		{"down, one short of two", 19, down(10), 1},
		{"down, exact multiple", 20, down(10), 2},
		{"up, divideBy 1", 7, up(1), 7},
		{"down, divideBy 1", 7, down(1), 7},
		{"up, the largest quantity", 1<<63 - 1, up(2), 1 << 62},
		{"down, the largest quantity", 1<<63 - 1, down(2), 1<<62 - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.PackageQuantity(c.quantity, c.t); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
	for _, bad := range []*remit.TransformQuantity{{DivideBy: 0, Round: remit.RoundUp}, {DivideBy: 10, Round: "nearest"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PackageQuantity with %+v did not panic", *bad)
				}
			}()
			remit.PackageQuantity(5, bad)
		}()
	}
}

// TestTiersUsagePricingAmount: the transform first, then the tiers or the unit amount.
func TestTiersUsagePricingAmount(t *testing.T) {
	per100Up := &remit.TransformQuantity{DivideBy: 100, Round: remit.RoundUp}
	per10Up := &remit.TransformQuantity{DivideBy: 10, Round: remit.RoundUp}
	for _, c := range []struct {
		name     string
		pricing  remit.UsagePricing
		quantity int64
		want     int64
		lines    []remit.TierBreakdown
	}{
		{"per unit", remit.UsagePricing{UnitAmount: 2}, 150, 300, nil},
		{"per unit, no usage", remit.UsagePricing{UnitAmount: 2}, 0, 0, nil},
		{"per package, a started one is billed", remit.UsagePricing{UnitAmount: 500, Transform: per100Up}, 150, 1000, nil},
		{"per package, exact", remit.UsagePricing{UnitAmount: 500, Transform: per100Up}, 100, 500, nil},
		{"per package, no usage", remit.UsagePricing{UnitAmount: 500, Transform: per100Up}, 0, 0, nil},
		{"per full package", remit.UsagePricing{UnitAmount: 500, Transform: &remit.TransformQuantity{DivideBy: 100, Round: remit.RoundDown}}, 199, 500, nil},
		{"tiers ignore the unit amount", remit.UsagePricing{UnitAmount: 9, Mode: remit.TiersGraduated, Tiers: tiersThree}, 11, 1080,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000), tierLine(20, 1, 80, 0, 80)}},
		{"tiers priced on packages", remit.UsagePricing{Mode: remit.TiersGraduated, Tiers: tiersThree, Transform: per10Up}, 105, 1080,
			[]remit.TierBreakdown{tierLine(10, 10, 100, 0, 1000), tierLine(20, 1, 80, 0, 80)}},
		{"volume on packages", remit.UsagePricing{Mode: remit.TiersVolume, Tiers: tiersThreeFlat, Transform: per10Up}, 101, 1380,
			[]remit.TierBreakdown{tierLine(20, 11, 80, 500, 1380)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, lines, err := c.pricing.Amount(c.quantity)
			if err != nil || got != c.want || !reflect.DeepEqual(lines, c.lines) {
				t.Fatalf("got %d %s %v, want %d %s", got, showTierLines(lines), err, c.want, showTierLines(c.lines))
			}
		})
	}
	for _, c := range []struct {
		name     string
		pricing  remit.UsagePricing
		quantity int64
		tooLarge bool
	}{
		{"per unit above MaxAmount", remit.UsagePricing{UnitAmount: remit.MaxAmount}, 2, true},
		{"per unit wrapping int64", remit.UsagePricing{UnitAmount: 4}, 1 << 62, true},
		{"tiers above MaxAmount", remit.UsagePricing{Mode: remit.TiersVolume, Tiers: tiersSingle}, remit.MaxAmount, true},
		{"negative quantity", remit.UsagePricing{UnitAmount: 1}, -1, false},
		{"negative unit amount", remit.UsagePricing{UnitAmount: -1}, 1, false},
		{"invalid transform is an error, not a panic", remit.UsagePricing{UnitAmount: 1, Transform: &remit.TransformQuantity{Round: remit.RoundUp}}, 5, false},
		{"invalid tiers", remit.UsagePricing{Mode: "stepped", Tiers: tiersThree}, 5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, lines, err := c.pricing.Amount(c.quantity)
			if err == nil || got != 0 || lines != nil || errors.Is(err, remit.ErrAmountTooLarge) != c.tooLarge {
				t.Fatalf("got %d %v %v, want an error (too large: %v)", got, lines, err, c.tooLarge)
			}
		})
	}
}

// TestTiersUsageCorrectionCredit: a correction gives back the difference of the two amounts, priced by
// the same rules.
func TestTiersUsageCorrectionCredit(t *testing.T) {
	perUnit := remit.UsagePricing{UnitAmount: 2}
	graduated := remit.UsagePricing{Mode: remit.TiersGraduated, Tiers: tiersThreeFlat}
	volume := remit.UsagePricing{Mode: remit.TiersVolume, Tiers: tiersThree}
	packagesUp := remit.UsagePricing{UnitAmount: 500, Transform: &remit.TransformQuantity{DivideBy: 100, Round: remit.RoundUp}}
	packagesDown := remit.UsagePricing{UnitAmount: 500, Transform: &remit.TransformQuantity{DivideBy: 100, Round: remit.RoundDown}}
	for _, c := range []struct {
		name          string
		pricing       remit.UsagePricing
		before, after int64
		want          int64
	}{
		{"per unit", perUnit, 150, 100, 100},
		{"no change", perUnit, 150, 150, 0},
		{"all of it", perUnit, 150, 0, 300},
		{"within a tier", graduated, 25, 22, 150},
		{"back below a boundary removes the tier's flat amount", graduated, 11, 10, 580},
		{"down two tiers removes both flat amounts", graduated, 25, 10, 1300 + 450},
		{"down to 0 removes the first flat amount", graduated, 5, 0, 1500},
		{"volume, into a dearer tier for fewer units", volume, 12, 5, 960 - 500},
		{"volume, less usage would cost more: no credit", volume, 21, 20, 0},
		{"within a started package: no credit", packagesUp, 150, 120, 0},
		{"down to an exact package", packagesUp, 150, 100, 500},
		{"within a full package: no credit", packagesDown, 199, 150, 0},
		{"below a full package", packagesDown, 205, 199, 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := remit.UsageCorrectionCredit(c.pricing, c.before, c.after)
			if err != nil || got != c.want {
				t.Fatalf("got %d %v, want %d", got, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name          string
		pricing       remit.UsagePricing
		before, after int64
	}{
		{"a correction upwards", perUnit, 100, 101},
		{"below 0", perUnit, 100, -1},
		{"before priced above MaxAmount", remit.UsagePricing{UnitAmount: remit.MaxAmount}, 2, 1},
		{"invalid tiers", remit.UsagePricing{Mode: "stepped", Tiers: tiersThree}, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, err := remit.UsageCorrectionCredit(c.pricing, c.before, c.after); err == nil || got != 0 {
				t.Fatalf("got %d %v, want an error", got, err)
			}
		})
	}
}

// showTierLines writes a breakdown with its upTo values, not their addresses.
func showTierLines(lines []remit.TierBreakdown) string {
	s := "["
	for i, l := range lines {
		if i > 0 {
			s += " "
		}
		upTo := "null"
		if l.UpTo != nil {
			upTo = fmt.Sprint(*l.UpTo)
		}
		s += fmt.Sprintf("{upTo %s q %d unit %d flat %d = %d}", upTo, l.Quantity, l.UnitAmount, l.FlatAmount, l.Amount)
	}
	return s + "]"
}
