package soak

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Model is what the driver believes is true of the merchant account: what it created and what it
// did to it. The server's own work (renewals, auto-finalization, dunning, expiries) moves
// resources without the model, so operations read a resource before acting on it and the checks
// compare the server with what the model can know for certain.
//
// Locking: the maps and slices of Model are guarded by mu; everything of one customer (its
// subscriptions, invoices, grants and usage events included) by that customer's mu, which an
// operation holds while it acts on the customer.
type Model struct {
	mu        sync.Mutex
	clockAt   time.Time // the merchant clock, as last read
	realAt    time.Time // real time when it was read
	prices    map[string]*Price
	groups    map[string][]string // priceGroup(...) → price IDs
	customers []*Customer
	subs      map[string]*Sub
	invoices  map[string]*Inv
	notes     []string // credit notes issued
}

// Price is a catalog price the model created.
type Price struct {
	ID       string
	Type     string // fixed_one_time, fixed_recurring, usage_metered
	Interval string // month, year; "" for one-time
	Priced   bool   // by tiers or packages: a line may not carry its own unitAmount
	Body     string // the request that created it
}

// Customer is a customer with its one USD billing account.
type Customer struct {
	mu         sync.Mutex
	ID, BA     string
	Collection string // charge_automatically, send_invoice
	Card       string // the default payment method's test token; "" for none
	granted    int64  // the sum of the grants the API accepted
	grants     []string
	subs       []*Sub
	invoices   []*Inv
	usage      []*Usage
	usageLost  bool // a usage request had no answer or a 5xx: whether it counted is unknown
}

// Sub is a subscription the model made through a quote.
type Sub struct {
	ID, Customer string
	Interval     string
	Status       string // as last read
	Priced       bool   // has (had) a fixed item priced by tiers or packages
	Prorated     bool   // a change prorated an item priced by tiers or packages
	CanceledByUs bool   // canceled now by the driver: must stay canceled
	history      *ring
}

// Inv is an invoice the model knows of.
type Inv struct {
	ID, Customer, Sub string
	Status            string // as last read
	Manual            bool   // a draft without autoFinalizeAt: it waits for the merchant
	history           *ring
}

// Usage is a usage event the model sent, with what the server answered of it.
type Usage struct {
	ID       string
	Body     map[string]any
	Voided   bool
	At       time.Time // its timestamp
	Recorded time.Time // its createdAt (merchant clock)
	VoidedAt time.Time
	// Unsure: recorded or voided while a clock advance ran, whose auto-finalizations may have
	// read the usage before or after it; the invoices of its period are not checked against it.
	Unsure bool
}

func newModel() *Model {
	return &Model{prices: map[string]*Price{}, groups: map[string][]string{}, subs: map[string]*Sub{}, invoices: map[string]*Inv{}}
}

// priceGroup names the prices that can share a subscription: kind "fixed" or "usage" on one
// interval, or "one_time".
func priceGroup(kind, interval string) string {
	if kind == "one_time" {
		return kind
	}
	return kind + ":" + interval
}

func (m *Model) addPrice(p *Price) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prices[p.ID] = p
	kind := map[string]string{"fixed_one_time": "one_time", "fixed_recurring": "fixed", "usage_metered": "usage"}[p.Type]
	g := priceGroup(kind, p.Interval)
	m.groups[g] = append(m.groups[g], p.ID)
}

func (m *Model) price(id string) *Price { m.mu.Lock(); defer m.mu.Unlock(); return m.prices[id] }

// pickPrices answers up to n distinct prices of a group.
func (m *Model) pickPrices(rng *rand.Rand, group string, n int) []*Price {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := append([]string(nil), m.groups[group]...)
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var out []*Price
	for _, id := range ids {
		if len(out) == n {
			break
		}
		out = append(out, m.prices[id])
	}
	return out
}

func (m *Model) addCustomer(c *Customer) {
	m.mu.Lock()
	m.customers = append(m.customers, c)
	m.mu.Unlock()
}

func (m *Model) customerCount() int { m.mu.Lock(); defer m.mu.Unlock(); return len(m.customers) }

// allCustomers answers the customers known now.
func (m *Model) allCustomers() []*Customer {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Customer(nil), m.customers...)
}

func (m *Model) randomCustomer(rng *rand.Rand) *Customer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.customers) == 0 {
		return nil
	}
	return m.customers[rng.IntN(len(m.customers))]
}

// addSub records a subscription of cu; the caller holds cu.mu.
func (m *Model) addSub(cu *Customer, s *Sub) {
	s.history = newRing(12)
	cu.subs = append(cu.subs, s)
	m.mu.Lock()
	m.subs[s.ID] = s
	m.mu.Unlock()
}

// invoice answers the model's invoice id of cu, recording it when new; the caller holds cu.mu.
func (m *Model) invoice(cu *Customer, id, sub string) *Inv {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inv, ok := m.invoices[id]; ok {
		return inv
	}
	inv := &Inv{ID: id, Customer: cu.ID, Sub: sub, history: newRing(8)}
	m.invoices[id] = inv
	cu.invoices = append(cu.invoices, inv)
	return inv
}

func (m *Model) invoiceByID(id string) *Inv { m.mu.Lock(); defer m.mu.Unlock(); return m.invoices[id] }

func (m *Model) addNote(id string) { m.mu.Lock(); m.notes = append(m.notes, id); m.mu.Unlock() }

func (m *Model) allNotes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.notes...)
}

// setClock records the merchant clock read from an answer.
func (m *Model) setClock(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.now()) || m.clockAt.IsZero() {
		m.clockAt, m.realAt = t, time.Now()
	}
}

// now is the merchant clock: the last reading plus the real time since.
func (m *Model) now() time.Time {
	if m.clockAt.IsZero() {
		return time.Now().UTC()
	}
	return m.clockAt.Add(time.Since(m.realAt))
}

// Now is now for callers that do not hold mu.
func (m *Model) Now() time.Time { m.mu.Lock(); defer m.mu.Unlock(); return m.now() }

// customerByID answers the customer of that ID, nil when the model does not know it.
func (m *Model) customerByID(id string) *Customer {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.customers {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (m *Model) subByID(id string) *Sub { m.mu.Lock(); defer m.mu.Unlock(); return m.subs[id] }
