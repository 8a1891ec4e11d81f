package remit_test

import (
	"encoding/binary"
	"testing"

	"github.com/remit-billing/remit"
)

// maxAmount is the contract's bound on any amount (999,999,999,999 minor units).
const maxAmount = 999_999_999_999

// amounts reads up to 500 amounts in [0, maxAmount] from raw (8 bytes each).
func amounts(raw []byte) []int64 {
	var out []int64
	for len(raw) >= 8 && len(out) < 500 {
		out = append(out, int64(binary.LittleEndian.Uint64(raw)%(maxAmount+1)))
		raw = raw[8:]
	}
	return out
}

// FuzzAllocateProportionally: for any weights and total within the contract's bounds, the parts
// add up to the total exactly (or to nothing when no weight is positive), none is negative and
// none exceeds its weight when the total does not exceed the weights' sum.
func FuzzAllocateProportionally(f *testing.F) {
	f.Add(int64(100), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0})
	f.Add(int64(maxAmount), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add(int64(7), []byte{})
	f.Fuzz(func(t *testing.T, total int64, raw []byte) {
		weights := amounts(raw)
		if total < 0 {
			total = -(total + 1)
		}
		total %= maxAmount + 1
		var sum int64
		for _, w := range weights {
			sum += w
		}
		parts := remit.AllocateProportionally(total, weights)
		if len(parts) != len(weights) {
			t.Fatalf("%d parts for %d weights", len(parts), len(weights))
		}
		var got int64
		for i, p := range parts {
			if p < 0 || (total <= sum && p > weights[i]) {
				t.Fatalf("part %d = %d of weight %d (total %d, sum %d)", i, p, weights[i], total, sum)
			}
			got += p
		}
		want := total
		if sum == 0 {
			want = 0
		}
		if got != want {
			t.Fatalf("parts add up to %d, want %d", got, want)
		}
	})
}

// FuzzDiscountLines: any number of lines and coupons; no line is discounted below zero, and an
// amount coupon is spread exactly (up to what is left).
func FuzzDiscountLines(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0}, uint8(10), int64(7), uint8(50), int64(0))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, uint8(100), int64(maxAmount), uint8(0), int64(3))
	f.Fuzz(func(t *testing.T, raw []byte, pct1 uint8, off1 int64, pct2 uint8, off2 int64) {
		lines := amounts(raw)
		clamp := func(v int64) int64 {
			if v < 0 {
				v = -(v + 1)
			}
			return v % (maxAmount + 1)
		}
		coupons := []remit.CouponTerms{{PercentOff: int64(pct1) % 101}, {AmountOff: clamp(off1)}, {PercentOff: int64(pct2) % 101}, {AmountOff: clamp(off2)}}
		disc := remit.DiscountLines(lines, coupons)
		if len(disc) != len(lines) {
			t.Fatalf("%d discounts for %d lines", len(disc), len(lines))
		}
		var subtotal, total int64
		for i, d := range disc {
			if d < 0 || d > lines[i] {
				t.Fatalf("line %d: discount %d of %d", i, d, lines[i])
			}
			subtotal += lines[i]
			total += d
		}
		if total > subtotal {
			t.Fatalf("discounts %d exceed the subtotal %d", total, subtotal)
		}
		// An amount coupon alone takes exactly min(amount, subtotal).
		only := remit.DiscountLines(lines, []remit.CouponTerms{{AmountOff: clamp(off1)}})
		var got int64
		for _, d := range only {
			got += d
		}
		if want := min(clamp(off1), subtotal); got != want {
			t.Fatalf("amount coupon %d over subtotal %d took %d", clamp(off1), subtotal, got)
		}
	})
}
