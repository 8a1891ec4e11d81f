package remit

import (
	"strings"
	"testing"
	"time"
)

func TestCheckDunning(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Dunning
		want []string // field:reason
	}{
		{"the default", DefaultDunning, nil},
		{"one step, leave open", Dunning{Schedule: []string{"60d"}, FinalAction: FinalLeaveOpen}, nil},
		{"no final action (the default)", Dunning{Schedule: []string{"1d"}}, nil},
		{"empty", Dunning{}, []string{"d.schedule:required"}},
		{"eleven", Dunning{Schedule: strings.Split("1d,2d,3d,4d,5d,6d,7d,8d,9d,10d,11d", ",")}, []string{"d.schedule:too_many"}},
		{"every problem", Dunning{Schedule: []string{"5d", "3d", "61d", "x", "0d", "5"}, FinalAction: "nope"},
			[]string{"d.finalAction:invalid_enum", "d.schedule[1]:not_increasing", "d.schedule[2]:out_of_range", "d.schedule[3]:invalid_format",
				"d.schedule[4]:invalid_format", "d.schedule[5]:invalid_format"}},
		{"equal steps", Dunning{Schedule: []string{"3d", "3d"}}, []string{"d.schedule[1]:not_increasing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Problems
			CheckDunning(c.d, "d", &p)
			var got []string
			for _, f := range p.Fields() {
				got = append(got, f.Field+":"+f.Reason)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("problems %v, want %v", got, c.want)
			}
		})
	}
}

func TestDunningSchedule(t *testing.T) {
	d, err := ParseDunningSchedule(" 2d, 4d ,9d")
	if err != nil || strings.Join(d.Schedule, ",") != "2d,4d,9d" || d.FinalAction != FinalMarkUncollectible {
		t.Fatalf("parsed %+v, %v", d, err)
	}
	if _, err := ParseDunningSchedule("3d,2d"); err == nil || !strings.Contains(err.Error(), "REMIT_DUNNING_SCHEDULE") {
		t.Fatalf("a decreasing schedule: %v", err)
	}
	first := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	for done, want := range []time.Time{first.AddDate(0, 0, 2), first.AddDate(0, 0, 4), first.AddDate(0, 0, 9)} {
		if at, ok := d.NextRetry(first, int64(done)); !ok || !at.Equal(want) {
			t.Fatalf("retry %d: %v %v, want %v", done, at, ok, want)
		}
	}
	if _, ok := d.NextRetry(first, 3); ok {
		t.Fatal("a fourth retry of a three-step schedule")
	}
	var none *Dunning
	if got := none.OrDefault(DefaultDunning); got.FinalAction != FinalMarkUncollectible || len(got.Schedule) != 3 {
		t.Fatalf("default %+v", got)
	}
}
