package httpapi_test

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestBalanceLedgerProperties runs many random sequences of grants, expiries and sandbox clock
// moves (math/rand with fixed seeds, so a failure reproduces) and checks after every step that:
//   - every currency's balance equals the sum of its entries, and available + pending equals the
//     sum of the lots' remaining (nothing due is left unexpired);
//   - no lot's remaining, and no available or pending figure, is ever negative;
//   - each lot's remaining equals its amount less what its expiries took;
//   - entries come newest first;
//   - the figures and every answer (201, 404, 409) equal those of an independent model.
//
// Time is modelled in half hours: every effectiveAt and expiresAt is a whole number of half hours
// from the clock at the moment of the grant, and the clock only moves by whole half hours, so the
// real time that passes during the test (far less than half an hour) never decides a boundary.
func TestBalanceLedgerProperties(t *testing.T) {
	const sequences, steps = 10, 30
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		halves := 0 // half hours the clock was advanced since the test began
		for seed := int64(1); seed <= sequences; seed++ {
			rng := rand.New(rand.NewSource(seed))
			cus := fmt.Sprintf("prop-%d", seed)
			k.customer(cus)
			m := &ledgerModel{}
			for step := 0; step < steps; step++ {
				what := ""
				switch op := rng.Intn(10); {
				case op < 4:
					what = m.grant(t, k, rng, cus, halves)
				case op < 8:
					what = m.expire(t, k, rng, cus)
				default:
					n := 1 + rng.Intn(6)
					halves += n
					e.AdvanceClock(int64(n) * 1800)
					m.advance(halves)
					what = fmt.Sprintf("advance %d half hours", n)
				}
				m.check(t, k, cus, halves, fmt.Sprintf("seed %d step %d (%s)", seed, step, what))
			}
		}
	})
}

type modelLot struct {
	id                 string
	currency           string
	amount, remaining  int64
	effective, expires int // in half hours since the test began; expires 0: never
	taken              int64
}

type ledgerModel struct {
	lots    []*modelLot
	entries int
	next    int
}

var propCurrencies = []string{"USD", "EUR", "JPY"}

func (m *ledgerModel) grant(t *testing.T, k catalogKit, rng *rand.Rand, cus string, now int) string {
	t.Helper()
	m.next++
	l := &modelLot{id: fmt.Sprintf("g%d", m.next), currency: propCurrencies[rng.Intn(len(propCurrencies))], amount: 1 + rng.Int63n(1000), effective: now}
	l.remaining = l.amount
	clock := k.clockNow()
	body := map[string]any{"entryId": l.id, "currency": l.currency, "amount": l.amount}
	switch rng.Intn(3) {
	case 0: // effective now (the default)
	case 1: // effective in the future
		d := 1 + rng.Intn(8)
		l.effective = now + d
		body["effectiveAt"] = clock.Add(time.Duration(d) * 30 * time.Minute)
	case 2: // effective since a while
		d := 1 + rng.Intn(8)
		l.effective = now - d
		body["effectiveAt"] = clock.Add(-time.Duration(d) * 30 * time.Minute)
	}
	if rng.Intn(3) > 0 {
		from := max(l.effective, now)
		d := 1 + rng.Intn(10)
		l.expires = from + d
		body["expiresAt"] = clock.Add(time.Duration(l.expires-now) * 30 * time.Minute)
	}
	k.grant(cus, body)
	m.lots = append(m.lots, l)
	m.entries++
	return fmt.Sprintf("grant %s %d %s effective %+d expires %+d", l.id, l.amount, l.currency, l.effective-now, l.expires-now)
}

func (m *ledgerModel) expire(t *testing.T, k catalogKit, rng *rand.Rand, cus string) string {
	t.Helper()
	if len(m.lots) == 0 || rng.Intn(12) == 0 {
		k.e.Must(404, "POST", "/v1/customers/"+cus+"/balance/expire", map[string]any{"sourceEntryId": "unknown"})
		return "expire unknown: 404"
	}
	l := m.lots[rng.Intn(len(m.lots))]
	body := map[string]any{"sourceEntryId": l.id}
	amount := l.remaining
	if rng.Intn(3) > 0 {
		amount = 1 + rng.Int63n(l.remaining+l.remaining/4+2)
		body["amount"] = amount
	}
	want := 201
	if amount > l.remaining || amount == 0 {
		want = 409
	}
	r := k.e.Must(want, "POST", "/v1/customers/"+cus+"/balance/expire", body)
	if want == 409 {
		if got := r.ErrorDetails()["remaining"]; got != float64(l.remaining) {
			t.Fatalf("409 says %v remains of %s, model %d", got, l.id, l.remaining)
		}
		return fmt.Sprintf("expire %d of %s (%d left): 409", amount, l.id, l.remaining)
	}
	l.remaining -= amount
	l.taken += amount
	m.entries++
	return fmt.Sprintf("expire %d of %s: 201", amount, l.id)
}

// advance expires, like the server's jobs, what remains of every lot whose expiresAt passed.
func (m *ledgerModel) advance(now int) {
	for _, l := range m.lots {
		if l.expires != 0 && now >= l.expires && l.remaining > 0 {
			l.taken += l.remaining
			l.remaining = 0
			m.entries++
		}
	}
}

func (m *ledgerModel) check(t *testing.T, k catalogKit, cus string, now int, step string) {
	t.Helper()
	bal, entries := k.balance(cus)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s", step, fmt.Sprintf(format, args...))
	}
	if len(entries) != m.entries {
		fail("%d entries, model %d", len(entries), m.entries)
	}
	// Invariants of the answer itself.
	sum := map[string]int64{}
	lotRemaining := map[string]int64{}
	taken := map[string]int64{}
	var last time.Time
	for i, en := range entries {
		cur := en["currency"].(string)
		sum[cur] += num(en["amount"])
		if en["remaining"] != nil {
			r := num(en["remaining"])
			if r < 0 || r > num(en["amount"]) {
				fail("entry %v: remaining out of [0, amount]", en)
			}
			lotRemaining[cur] += r
		} else if src, ok := en["sourceEntryId"].(string); ok {
			taken[src] -= num(en["amount"])
		}
		created, _ := time.Parse(time.RFC3339Nano, en["createdAt"].(string))
		if i > 0 && created.After(last) {
			fail("entries not newest first at %d", i)
		}
		last = created
	}
	for _, en := range entries {
		if en["remaining"] != nil && num(en["amount"])-taken[en["entryId"].(string)] != num(en["remaining"]) {
			fail("lot %v: amount - taken %d != remaining", en, taken[en["entryId"].(string)])
		}
	}
	for cur, b := range bal {
		if b["available"] < 0 || b["pending"] < 0 {
			fail("negative balance %s %v", cur, b)
		}
		if sum[cur] != lotRemaining[cur] || b["available"]+b["pending"] != sum[cur] {
			fail("%s: entries sum %d, lots remaining %d, available %d + pending %d", cur, sum[cur], lotRemaining[cur], b["available"], b["pending"])
		}
	}
	// The model.
	want := map[string]map[string]int64{}
	for _, l := range m.lots {
		if want[l.currency] == nil {
			want[l.currency] = map[string]int64{"available": 0, "pending": 0}
		}
		switch {
		case now < l.effective:
			want[l.currency]["pending"] += l.remaining
		case l.expires == 0 || now < l.expires:
			want[l.currency]["available"] += l.remaining
		}
		if en := entryByID(entries, l.id); en == nil || num(en["remaining"]) != l.remaining || taken[l.id] != l.taken {
			fail("lot %s: got %v (taken %d), model remaining %d taken %d", l.id, en, taken[l.id], l.remaining, l.taken)
		}
	}
	if fmt.Sprint(sorted(bal)) != fmt.Sprint(sorted(want)) {
		fail("balances %v, model %v", bal, want)
	}
}

func sorted(m map[string]map[string]int64) []string {
	var out []string
	for cur, b := range m {
		out = append(out, fmt.Sprintf("%s:%d/%d", cur, b["available"], b["pending"]))
	}
	sort.Strings(out)
	return out
}
