package remit_test

import (
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

func TestAddInterval(t *testing.T) {
	d := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		from     string
		interval string
		n        int64
		want     string
	}{
		{"2027-01-31T10:00:00Z", "month", 1, "2027-02-28T10:00:00Z"}, // clamped, not Mar 3
		{"2028-01-31T10:00:00Z", "month", 1, "2028-02-29T10:00:00Z"}, // leap year
		{"2027-01-31T10:00:00Z", "month", 2, "2027-03-31T10:00:00Z"}, // from the anchor: no drift to the 28th
		{"2027-01-31T10:00:00Z", "month", 11, "2027-12-31T10:00:00Z"},
		{"2027-01-31T10:00:00Z", "month", 13, "2028-02-29T10:00:00Z"},
		{"2027-11-15T00:00:00Z", "month", 3, "2028-02-15T00:00:00Z"}, // across a year
		{"2028-02-29T12:00:00Z", "year", 1, "2029-02-28T12:00:00Z"},
		{"2028-02-29T12:00:00Z", "year", 4, "2032-02-29T12:00:00Z"},
		{"2027-03-01T00:00:00Z", "week", 2, "2027-03-15T00:00:00Z"},
		{"2027-02-27T23:59:59Z", "day", 3, "2027-03-02T23:59:59Z"},
	} {
		if got := remit.AddInterval(d(c.from), c.interval, c.n); !got.Equal(d(c.want)) {
			t.Errorf("AddInterval(%s, %s, %d) = %s, want %s", c.from, c.interval, c.n, got.Format(time.RFC3339), c.want)
		}
	}
	// Sub-second precision is kept.
	from := time.Date(2027, 5, 31, 1, 2, 3, 456789000, time.UTC)
	if got := remit.AddInterval(from, "month", 1); !got.Equal(time.Date(2027, 6, 30, 1, 2, 3, 456789000, time.UTC)) {
		t.Errorf("precision: %s", got)
	}
}
