package remit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// The rules of metering in depth (docs/usage.md): meters, line amounts through tiers and packages,
// what a finalized line billed and what a correction gives back.

func TestCheckMeter(t *testing.T) {
	for _, c := range []struct {
		name     string
		m        remit.Meter
		problems []string
	}{
		{"sum", remit.Meter{Aggregation: remit.AggSum}, nil},
		{"latest", remit.Meter{Aggregation: remit.AggLatest}, nil},
		{"unique_count with its property", remit.Meter{Aggregation: remit.AggUniqueCount, UniqueProperty: ptr("user")}, nil},
		{"unique_count without", remit.Meter{Aggregation: remit.AggUniqueCount}, []string{"uniqueProperty:required"}},
		{"max with a property", remit.Meter{Aggregation: remit.AggMax, UniqueProperty: ptr("user")}, []string{"uniqueProperty:not_allowed"}},
		{"unknown", remit.Meter{Aggregation: "median"}, []string{"aggregation:invalid_enum"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.CheckMeter(c.m, &p)
			wantProblems(t, &p, c.problems...)
		})
	}
}

func TestMeterChangeConflict(t *testing.T) {
	count := remit.Meter{MeterID: "m", Aggregation: remit.AggCount}
	used := count
	used.HasEvents = true
	unique := func(prop string) remit.Meter {
		return remit.Meter{MeterID: "m", Aggregation: remit.AggUniqueCount, UniqueProperty: &prop, HasEvents: true}
	}
	for _, c := range []struct {
		name     string
		was, now remit.Meter
		conflict bool
	}{
		{"no events: any change", count, remit.Meter{Aggregation: remit.AggMax}, false},
		{"events: same aggregation (a rename)", used, remit.Meter{Aggregation: remit.AggCount, Name: ptr("Calls")}, false},
		{"events: another aggregation", used, remit.Meter{Aggregation: remit.AggSum}, true},
		{"events: the same unique property", unique("user"), remit.Meter{Aggregation: remit.AggUniqueCount, UniqueProperty: ptr("user")}, false},
		{"events: another unique property", unique("user"), remit.Meter{Aggregation: remit.AggUniqueCount, UniqueProperty: ptr("team")}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := remit.MeterChangeConflict(c.was, c.now)
			if (err != nil) != c.conflict {
				t.Fatalf("err %v, want conflict %v", err, c.conflict)
			}
			var e *remit.Error
			if err != nil && (!errors.As(err, &e) || e.Code != remit.EConflict || e.Details["reason"] != "meter_has_events") {
				t.Fatalf("err %#v", err)
			}
		})
	}
}

func TestMeterUniqueValue(t *testing.T) {
	m := remit.Meter{Aggregation: remit.AggUniqueCount, UniqueProperty: ptr("user")}
	if v := m.UniqueValue(map[string]string{"user": "ana", "plan": "pro"}); v == nil || *v != "ana" {
		t.Fatalf("value %v", v)
	}
	if v := m.UniqueValue(map[string]string{"plan": "pro"}); v != nil {
		t.Fatalf("an event without the property counts: %v", *v)
	}
	if v := (remit.Meter{Aggregation: remit.AggSum}).UniqueValue(map[string]string{"user": "ana"}); v != nil {
		t.Fatalf("a sum meter has a unique value: %v", *v)
	}
}

func TestLineAmount(t *testing.T) {
	graduated := remit.Price{Tiers: tiersThreeFlat, TiersMode: ptr(remit.TiersGraduated)}
	packages := remit.Price{UnitAmount: ptr[int64](300), TransformQuantity: &remit.TransformQuantity{DivideBy: 1000, Round: remit.RoundUp}}
	for _, c := range []struct {
		name             string
		price            remit.Price
		unit             int64
		override         bool
		units            int64
		quantity, amount int64
		tiers            int
		err              error
	}{
		{"unit × quantity", remit.Price{UnitAmount: ptr[int64](250)}, 250, false, 4, 4, 1000, 0, nil},
		{"a line's own unit amount", remit.Price{UnitAmount: ptr[int64](250)}, 99, true, 4, 4, 396, 0, nil},
		// 10 × 100 + 1000, 10 × 80 + 500, 5 × 50 + 200
		{"graduated tiers", graduated, 0, false, 25, 25, 3750, 3, nil},
		{"a tiered price's line with its own amount (a trial's 0)", graduated, 0, true, 25, 25, 0, 0, nil},
		{"packages, rounded up", packages, 300, false, 2500, 3, 900, 0, nil},
		{"no usage, no package", packages, 300, false, 0, 0, 0, 0, nil},
		{"too large", remit.Price{UnitAmount: ptr[int64](remit.MaxAmount)}, remit.MaxAmount, false, 2, 2, 0, 0, remit.ErrAmountTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, amount, bd, err := remit.LineAmount(c.price, c.unit, c.override, c.units)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err == nil && (q != c.quantity || amount != c.amount || len(bd) != c.tiers) {
				t.Fatalf("quantity %d amount %d tiers %d, want %d %d %d", q, amount, len(bd), c.quantity, c.amount, c.tiers)
			}
		})
	}
}

func TestCorrectedUsage(t *testing.T) {
	for _, c := range []struct {
		name                        string
		billed, before, after, want int64
	}{
		{"a sum: the event's quantity comes off", 1200, 1200, 1000, 1000},
		{"usage recorded after finalization is neither billed nor corrected", 1200, 1500, 1300, 1000},
		{"never below 0", 100, 500, 0, 0},
		{"a void that raises the figure (latest) corrects nothing", 5, 5, 8, 5},
		{"nothing changed", 7, 7, 7, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.CorrectedUsage(c.billed, c.before, c.after); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestUsageCorrectionTotal(t *testing.T) {
	line := func(amount, discount, prepaid, tax, credited int64) remit.InvoiceLine {
		return remit.InvoiceLine{Amount: amount, DiscountAmount: discount, PrepaidApplied: prepaid, TaxAmount: tax, CreditedAmount: credited}
	}
	for _, c := range []struct {
		name   string
		l      remit.InvoiceLine
		amount int64
		want   int64
	}{
		{"no discount or tax: the amount itself", line(5900, 0, 0, 0, 0), 200, 200},
		{"discount and tax in proportion", line(5900, 590, 0, 425, 0), 200, 194}, // 5735 × 200 / 5900 = 194.4
		{"the whole line: all that was billed", line(5900, 590, 0, 425, 0), 5900, 5735},
		{"never more than is left to credit", line(5900, 0, 0, 0, 5800), 200, 100},
		{"nothing to give back", line(5900, 0, 0, 0, 0), 0, 0},
		{"a line of 0", line(0, 0, 0, 0, 0), 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := remit.UsageCorrectionTotal(c.l, c.amount); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestInvoiceLineBilled(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seq := func(n int64) *int64 { return &n }
	ev := func(s *int64, created time.Time) remit.UsageEvent {
		return remit.UsageEvent{Seq: s, CreatedAt: created}
	}
	for _, c := range []struct {
		name string
		line remit.InvoiceLine
		e    remit.UsageEvent
		want bool
	}{
		{"counted before the finalization read", remit.InvoiceLine{UsageSeq: seq(7)}, ev(seq(7), at.Add(time.Hour)), true},
		{"counted after, whatever the clocks say", remit.InvoiceLine{UsageSeq: seq(7)}, ev(seq(8), at.Add(-time.Hour)), false},
		{"from before seqs: recorded at or before finalization", remit.InvoiceLine{}, ev(nil, at), true},
		{"from before seqs: recorded after", remit.InvoiceLine{}, ev(nil, at.Add(time.Microsecond)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.line.Billed(c.e, at); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// A correction never fails or charges when less usage would cost more than any amount Remit
// accepts (volume tiers whose lower tier is dearer): nothing is given back.
func TestUsageCorrectionCreditNeverFails(t *testing.T) {
	up := int64(10)
	p := remit.UsagePricing{Mode: remit.TiersVolume, Tiers: []remit.Tier{{UpTo: &up, UnitAmount: remit.MaxAmount}, {UnitAmount: 1}}}
	got, err := remit.UsageCorrectionCredit(p, 11, 10)
	if err != nil || got != 0 {
		t.Fatalf("credit %d, %v; want 0 and no error", got, err)
	}
}
