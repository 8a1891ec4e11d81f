package app

import (
	"testing"
	"time"
)

// Busy judges by the last complete 250 ms window, and by the window under way once 50 ms of it
// have passed: busy when a request was in flight for more than half of either.
func TestForegroundBusy(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type span struct{ from, to time.Duration } // a request in flight, from the start
	cases := []struct {
		name     string
		requests []span
		at       time.Duration
		want     bool // Busy
		idle     bool // Idle: nothing served in the last window nor in this one
	}{
		{"nothing served", nil, ms(600), false, true},
		{"too early in the first window to judge", []span{{0, ms(40)}}, ms(45), false, false},
		{"busy in the window under way", []span{{0, ms(60)}}, ms(70), true, false},
		{"idle in the window under way", []span{{0, ms(20)}}, ms(100), false, false},
		{"a burst early in the second window", []span{{ms(260), ms(400)}}, ms(400), true, false},
		{"one long request over most of the last window", []span{{ms(10), ms(200)}}, ms(260), true, false},
		{"half of it is not more than half", []span{{0, ms(125)}}, ms(260), false, false},
		{"overlapping requests count once", []span{{0, ms(100)}, {ms(50), ms(120)}}, ms(260), false, false},
		{"many short requests back to back", []span{{0, ms(60)}, {ms(60), ms(120)}, {ms(120), ms(180)}, {ms(180), ms(240)}}, ms(251), true, false},
		{"a request still in flight across windows", []span{{ms(100), ms(10_000)}}, ms(600), true, false},
		{"busy, then a whole idle window", []span{{0, ms(240)}}, ms(520), false, true},
		{"busy, then the next window idle so far", []span{{0, ms(240)}}, ms(300), true, false},
		{"busy, then long idle", []span{{0, ms(240)}}, ms(60_000), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := base
			f := NewForeground(func() time.Time { return now })
			// Replay the starts and ends in time order.
			type edge struct {
				at    time.Duration
				start bool
				i     int
			}
			var edges []edge
			for i, r := range c.requests {
				edges = append(edges, edge{r.from, true, i}, edge{r.to, false, i})
			}
			for i := range edges {
				for j := i + 1; j < len(edges); j++ {
					if edges[j].at < edges[i].at || (edges[j].at == edges[i].at && !edges[j].start && edges[i].start) {
						edges[i], edges[j] = edges[j], edges[i]
					}
				}
			}
			done := make([]func(), len(c.requests))
			for _, e := range edges {
				if e.at > c.at {
					break
				}
				now = base.Add(e.at)
				if e.start {
					done[e.i] = f.Serving()
				} else {
					done[e.i]()
				}
			}
			now = base.Add(c.at)
			if got := f.Busy(); got != c.want {
				t.Fatalf("Busy at %v = %v, want %v", c.at, got, c.want)
			}
			if got := f.Idle(); got != c.idle {
				t.Fatalf("Idle at %v = %v, want %v", c.at, got, c.idle)
			}
		})
	}
	if (*Foreground)(nil).Busy() || !(*Foreground)(nil).Idle() {
		t.Fatal("a nil Foreground is busy, or not idle")
	}
}
