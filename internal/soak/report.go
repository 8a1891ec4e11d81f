package soak

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Finding classes: the two defects known when the soak was written (issue 44) and everything else.
const (
	ClassTieredProration = "a: tiered/package price after a proration (known)"
	ClassDeadlock        = "b: deadlock answered 500 / job failed (known)"
	ClassOther           = "c: other"
)

// Finding is one kind of defect the soak saw, with the requests that led to its first sighting.
type Finding struct {
	Class    string
	Key      string // what makes two sightings the same finding
	Detail   string // the first sighting, in words
	Count    int
	Client   int
	Requests []Exchange // the client's last requests at the first sighting
	History  []Exchange // the requests that touched the resource concerned, if any
	Advances []AdvanceRecord
}

// AdvanceRecord is one sandbox clock advance.
type AdvanceRecord struct {
	At      time.Time // real time it was sent
	Seconds int64
	Status  int
	Took    time.Duration
	ClockTo string // the clock after it
}

func (a AdvanceRecord) String() string {
	return fmt.Sprintf("%s advance %ds (%.1f days) → %d in %s, clock %s", a.At.Format("15:04:05.000"), a.Seconds,
		float64(a.Seconds)/86400, a.Status, a.Took.Round(time.Millisecond), a.ClockTo)
}

// Report is what a run did and found.
type Report struct {
	Seed      int64
	Store     string
	Clients   int
	Customers int
	Elapsed   time.Duration
	Ops       map[string]int // operations run, by name
	Requests  int
	Statuses  map[int]int    // answers by status (0: no answer)
	Checks    map[string]int // invariants checked, by name (each resource checked counts one)
	Advances  int
	Advanced  time.Duration // sandbox time advanced in all
	Notes     []string      // checks skipped and why
	Findings  []Finding
}

// OK reports whether the run found nothing.
func (r Report) OK() bool { return len(r.Findings) == 0 }

// Figures is the run's summary table: operations, requests, answers by status, invariants checked.
func (r Report) Figures() string {
	var b strings.Builder
	ops := 0
	for _, n := range r.Ops {
		ops += n
	}
	checks := 0
	for _, n := range r.Checks {
		checks += n
	}
	fmt.Fprintf(&b, "soak on %s: seed %d, %d clients, %d customers, %s\n", r.Store, r.Seed, r.Clients, r.Customers, r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "  operations %d, requests %d, clock advances %d (%.0f days of sandbox time)\n", ops, r.Requests, r.Advances, r.Advanced.Hours()/24)
	fmt.Fprintf(&b, "  answers by status: %s\n", countsLine(r.Statuses))
	fmt.Fprintf(&b, "  operations: %s\n", namedLine(r.Ops))
	fmt.Fprintf(&b, "  invariants checked %d: %s\n", checks, namedLine(r.Checks))
	byClass := map[string]int{}
	for _, f := range r.Findings {
		byClass[f.Class] += f.Count
	}
	fmt.Fprintf(&b, "  findings %d kinds: %s\n", len(r.Findings), namedLine(byClass))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

// Text is every finding with its requests: what to read when a run failed.
func (r Report) Text() string {
	var b strings.Builder
	for i, f := range r.Findings {
		fmt.Fprintf(&b, "\n=== finding %d [%s] seen %d times (seed %d, store %s)\n%s\n", i+1, f.Class, f.Count, r.Seed, r.Store, f.Detail)
		if len(f.History) > 0 {
			b.WriteString("  the requests that touched the resource:\n")
			for _, x := range f.History {
				fmt.Fprintf(&b, "    %s\n", x)
			}
		}
		if f.Client >= 0 {
			fmt.Fprintf(&b, "  client %d's last requests:\n", f.Client)
		}
		for _, x := range f.Requests {
			fmt.Fprintf(&b, "    %s\n", x)
		}
		b.WriteString("  the last clock advances:\n")
		for _, a := range f.Advances {
			fmt.Fprintf(&b, "    %s\n", a)
		}
	}
	return b.String()
}

func countsLine(m map[int]int) string { return sortedLine(m, "%d: %d") }

func namedLine(m map[string]int) string { return sortedLine(m, "%s %d") }

// sortedLine writes a tally's entries in key order, each by format (key, count), comma separated.
func sortedLine[K cmp.Ordered](m map[K]int, format string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, m[k])
	}
	return strings.Join(parts, ", ")
}

// tally counts what a run did; safe for concurrent use.
type tally struct {
	mu       sync.Mutex
	ops      map[string]int
	requests int
	statuses map[int]int
	checks   map[string]int
	notes    map[string]bool
	findings []*Finding
	byKey    map[string]*Finding
}

func newTally() *tally {
	return &tally{ops: map[string]int{}, statuses: map[int]int{}, checks: map[string]int{}, notes: map[string]bool{}, byKey: map[string]*Finding{}}
}

func (t *tally) op(name string)    { t.mu.Lock(); t.ops[name]++; t.mu.Unlock() }
func (t *tally) check(name string) { t.mu.Lock(); t.checks[name]++; t.mu.Unlock() }
func (t *tally) answer(status int) { t.mu.Lock(); t.requests++; t.statuses[status]++; t.mu.Unlock() }
func (t *tally) note(s string) (new bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	new = !t.notes[s]
	t.notes[s] = true
	return new
}

// find records a sighting; the first of its key keeps its requests. It reports whether the key is
// new.
func (t *tally) find(f Finding) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.byKey[f.Key]; ok {
		old.Count++
		return false
	}
	f.Count = 1
	t.byKey[f.Key] = &f
	t.findings = append(t.findings, &f)
	return true
}

func (t *tally) report(r *Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Ops, r.Requests, r.Statuses, r.Checks = t.ops, t.requests, t.statuses, t.checks
	for n := range t.notes {
		r.Notes = append(r.Notes, n)
	}
	sort.Strings(r.Notes)
	for _, f := range t.findings {
		r.Findings = append(r.Findings, *f)
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Class < r.Findings[j].Class })
}
