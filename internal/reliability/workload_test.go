package reliability_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// op is one idempotent write of a workload: sent with its key until an answer is seen.
type op struct {
	kind   string // grant | finalize | credit_note | usage_event
	method string
	path   string
	body   map[string]any
	key    string
	target string // the customer (grant) or invoice (finalize, credit note)

	// outcome
	first     answer // the first answer seen
	acked     bool   // an answer was seen before the crash
	retried   bool   // the answer was lost (or never sent) and the op was retried after the restart
	objectID  string // entryId, invoiceId or creditNoteId of the 2xx answer
	sendCount int
}

// billing is the fixture the workload writes against: auto-charged customers (a test card, so a
// finalization charges and makes a receipt) and send_invoice customers.
type billing struct {
	tn        tenant
	customers []string
	auto      map[string]bool
	cnTargets []string // finalized invoices that credit notes are issued against
}

func setupBilling(t *testing.T, c *client, tn tenant) *billing {
	t.Helper()
	b := &billing{tn: tn, auto: map[string]bool{}}
	c.must(t, 200, tn, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})
	for i := range 4 {
		id := fmt.Sprintf("open-%d", i)
		collection := "send_invoice"
		if i%2 == 0 {
			id, collection = fmt.Sprintf("auto-%d", i), "charge_automatically"
		}
		c.must(t, 201, tn, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
		c.must(t, 201, tn, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id,
			"currency": "USD", "collectionMethod": collection})
		if collection == "charge_automatically" {
			s := c.must(t, 201, tn, "POST", "/v1/customers/"+id+"/payment-method-setup", map[string]any{"billingAccountId": "ba-" + id, "setAsDefault": true})
			u, err := url.Parse(s["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.http.Do(mustRequest(t, "PUT", c.base()+u.RequestURI()+"&paymentMethod=pm_card_visa"))
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("attach card: %v %v", err, res)
			}
			res.Body.Close()
			b.auto[id] = true
		}
		b.customers = append(b.customers, id)
	}
	for _, id := range []string{"open-1", "open-3"} {
		inv := b.draft(t, c, id, 1_000_000)
		c.must(t, 200, tn, "POST", "/v1/invoices/"+inv+"/finalize", map[string]any{})
		b.cnTargets = append(b.cnTargets, inv)
	}
	return b
}

func (b *billing) draft(t *testing.T, c *client, customer string, amount int64) string {
	t.Helper()
	d := c.must(t, 201, b.tn, "POST", "/v1/invoices", map[string]any{"customerId": customer, "billingAccountId": "ba-" + customer,
		"currency": "USD", "lines": []any{map[string]any{"priceId": "item", "unitAmount": amount}}})
	return d["invoiceId"].(string)
}

// ops makes one round of the workload: finalizations of fresh drafts, grants and credit notes,
// shuffled. Drafts are made here, before the crash window.
func (b *billing) ops(t *testing.T, c *client, round, scale int, rng *rand.Rand) []*op {
	t.Helper()
	var out []*op
	for i := range 6 * scale {
		cus := b.customers[i%len(b.customers)]
		inv := b.draft(t, c, cus, int64(1000+i))
		out = append(out, &op{kind: "finalize", method: "POST", path: "/v1/invoices/" + inv + "/finalize", body: map[string]any{},
			key: fmt.Sprintf("r%d-fin-%d", round, i), target: inv})
	}
	for i := range 10 * scale {
		cus := b.customers[i%len(b.customers)]
		out = append(out, &op{kind: "grant", method: "POST", path: "/v1/customers/" + cus + "/balance/grant",
			body: map[string]any{"currency": "USD", "amount": 50 + i}, key: fmt.Sprintf("r%d-grant-%d", round, i), target: cus})
	}
	for i := range 6 * scale {
		inv := b.cnTargets[i%len(b.cnTargets)]
		out = append(out, &op{kind: "credit_note", method: "POST", path: "/v1/credit-notes", body: map[string]any{"invoiceId": inv,
			"reason": "order_change", "lines": []any{map[string]any{"description": "credit", "amount": 100, "bucket": "credit"}}},
			key: fmt.Sprintf("r%d-cn-%d", round, i), target: inv})
	}
	out = append(out, usageEventOps(round, scale, b)...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// usageEventOps makes the round's usage events (POST /v1/usage-events): a unique eventId and key
// per op, quantities 1..n over the customers. checkStore verifies each eventId is stored once and
// every customer's running total equals the sum of its events.
func usageEventOps(round, scale int, b *billing) []*op {
	var out []*op
	for i := range 10 * scale {
		cus := b.customers[i%len(b.customers)]
		out = append(out, &op{kind: "usage_event", method: "POST", path: "/v1/usage-events",
			body: map[string]any{"eventId": fmt.Sprintf("r%d-ue-%d", round, i), "customerId": cus, "meterId": "api_calls", "quantity": 1 + i%7},
			key:  fmt.Sprintf("r%d-ue-%d", round, i), target: cus})
	}
	return out
}

// outcome of one round under crash.
type crashStats struct {
	sent, acked, lost, retried, inFlight409 int
}

// runOps sends ops with workers concurrent workers. Each op is sent once; an op whose answer was
// not seen (the server died) stays !acked. onAck is called after each answer seen.
func runOps(c *client, tn tenant, ops []*op, workers int, onAck func()) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ops) {
					return
				}
				o := ops[i]
				o.sendCount++
				a, err := c.do(context.Background(), tn, o.method, o.path, o.body, o.key)
				if err != nil {
					continue
				}
				o.first, o.acked = a, true
				onAck()
			}
		}()
	}
	wg.Wait()
}

// retryUntilAnswered resends op with its key until a final answer: 409 in_flight (the dead
// request's lease) is retried until the deadline.
func retryUntilAnswered(t *testing.T, c *client, tn tenant, o *op, deadline time.Time, stats *crashStats) answer {
	t.Helper()
	for {
		a, err := c.do(context.Background(), tn, o.method, o.path, o.body, o.key)
		switch {
		case err != nil:
		case a.status == 409 && a.errorReason() == "idempotency_key_in_flight":
			stats.inFlight409++
		default:
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s (key %s) still unanswered at the deadline: %v %d %s", o.method, o.path, o.key, err, a.status, a.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func objectIDOf(o *op, a answer) string {
	d := a.data()
	for _, k := range []string{"entryId", "invoiceId", "creditNoteId", "eventId"} {
		if s, ok := d[k].(string); ok && (k != "invoiceId" || o.kind == "finalize") {
			return s
		}
	}
	return ""
}

// checkStore verifies the invariants of the whole store for merchant ma after a workload:
// every operation applied exactly once, ledgers that add up, gap-free numbers and an event for
// every committed change.
func checkStore(t *testing.T, db *sql.DB, c *client, b *billing, ops []*op) {
	t.Helper()
	ma := b.tn.sandbox()
	want := map[string]int{}
	for _, o := range ops {
		want[o.kind]++
		if o.first.status/100 != 2 {
			t.Errorf("%s %s (key %s): final answer %d %s", o.method, o.path, o.key, o.first.status, o.first.body)
			continue
		}
		switch o.kind {
		case "grant":
			if n := count(t, db, `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND id = $2 AND type = 'grant'`, ma, o.objectID); n != 1 {
				t.Errorf("grant %s (key %s) stored %d times", o.objectID, o.key, n)
			}
		case "usage_event":
			id, _ := o.body["eventId"].(string)
			if n := count(t, db, `SELECT COUNT(*) FROM usage_events WHERE merchant_account_id = $1 AND id = $2`, ma, id); n != 1 {
				t.Errorf("usage event %s (key %s) stored %d times", id, o.key, n)
			}
		case "credit_note":
			if n := count(t, db, `SELECT COUNT(*) FROM credit_notes WHERE merchant_account_id = $1 AND id = $2`, ma, o.objectID); n != 1 {
				t.Errorf("credit note %s (key %s) stored %d times", o.objectID, o.key, n)
			}
		case "finalize":
			if n := count(t, db, `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND id = $2 AND number IS NOT NULL`, ma, o.target); n != 1 {
				t.Errorf("invoice %s (key %s) not finalized", o.target, o.key)
			}
			if n := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = 'invoice.finalized' AND object_id = $2`, ma, o.target); n != 1 {
				t.Errorf("invoice %s finalized %d times (events)", o.target, n)
			}
			if b.auto[customerOf(o, b)] {
				if n := count(t, db, `SELECT COUNT(*) FROM payments WHERE merchant_account_id = $1 AND invoice_id = $2`, ma, o.target); n > 1 {
					t.Errorf("invoice %s charged %d times", o.target, n)
				}
			}
		}
	}
	// Nothing more than the operations: no duplicate applied under another ID.
	setupGrants, setupCN := 0, 0
	if n := count(t, db, `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'grant'`, ma); n != want["grant"]+setupGrants {
		t.Errorf("%d grants stored, %d operations", n, want["grant"])
	}
	if n := count(t, db, `SELECT COUNT(*) FROM credit_notes WHERE merchant_account_id = $1`, ma); n != want["credit_note"]+setupCN {
		t.Errorf("%d credit notes stored, %d operations", n, want["credit_note"])
	}
	if n := count(t, db, `SELECT COUNT(*) FROM usage_events WHERE merchant_account_id = $1`, ma); n != want["usage_event"] {
		t.Errorf("%d usage events stored, %d operations", n, want["usage_event"])
	}
	// Each customer's running total is the sum of its events: nothing counted twice.
	if n := count(t, db, `SELECT COUNT(*) FROM usage_totals u WHERE merchant_account_id = $1 AND total <>
		(SELECT COALESCE(SUM(quantity), 0) FROM usage_events e WHERE e.merchant_account_id = u.merchant_account_id
		 AND e.customer_id = u.customer_id AND e.meter_id = u.meter_id)`, ma); n != 0 {
		t.Errorf("%d usage totals differ from the sum of their events", n)
	}
	// Every committed change has its event, once.
	for _, pair := range [][2]string{
		{"customer_balance.granted", `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'grant'`},
		{"credit_note.created", `SELECT COUNT(*) FROM credit_notes WHERE merchant_account_id = $1`},
		{"invoice.finalized", `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND number IS NOT NULL`},
		{"payment_receipt.created", `SELECT COUNT(*) FROM payment_receipts WHERE merchant_account_id = $1`},
		{"payment.succeeded", `SELECT COUNT(*) FROM payments WHERE merchant_account_id = $1 AND status = 'succeeded'`},
		{"customer_balance.applied", `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'application'`},
		{"customer_balance.credited", `SELECT COUNT(*) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'credit_note'`},
	} {
		events := count(t, db, `SELECT COUNT(*) FROM events WHERE merchant_account_id = $1 AND type = $2`, ma, pair[0])
		if rows := count(t, db, pair[1], ma); events != rows {
			t.Errorf("%d %s events for %d committed changes", events, pair[0], rows)
		}
	}
	checkGapFree(t, db, ma)
	checkLedger(t, db, c, b)
}

func customerOf(o *op, b *billing) string {
	for _, cus := range b.customers {
		if strings.Contains(o.path, cus) {
			return cus
		}
	}
	return ""
}

// checkGapFree: invoice, receipt and credit note numbers are 1..N without gap or repeat, and N is
// the counter's value.
func checkGapFree(t *testing.T, db *sql.DB, ma string) {
	t.Helper()
	for _, s := range []struct{ table, counter, prefix string }{
		{"invoices", "invoice", "INV-"}, {"payment_receipts", "receipt", "RCPT-"}, {"credit_notes", "credit_note", "CN-"},
	} {
		rows, err := db.Query(`SELECT number FROM `+s.table+` WHERE merchant_account_id = $1 AND number IS NOT NULL`, ma)
		if err != nil {
			t.Fatal(err)
		}
		var nums []int
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			v, err := strconv.Atoi(strings.TrimPrefix(n, s.prefix))
			if err != nil {
				t.Errorf("%s number %q", s.table, n)
			}
			nums = append(nums, v)
		}
		rows.Close()
		sort.Ints(nums)
		for i, n := range nums {
			if n != i+1 {
				t.Errorf("%s numbers are not 1..%d: %v", s.table, len(nums), nums)
				break
			}
		}
		var counter int
		_ = db.QueryRow(`SELECT value FROM counters WHERE scope = $1 AND name = $2`, ma, s.counter).Scan(&counter)
		if counter != len(nums) {
			t.Errorf("%s: counter at %d for %d numbers", s.table, counter, len(nums))
		}
	}
}

// checkLedger: every lot's remaining is its amount less what entries took from it; each
// customer's entries add up to its lots' remaining, and to the balance the API shows.
func checkLedger(t *testing.T, db *sql.DB, c *client, b *billing) {
	t.Helper()
	ma := b.tn.sandbox()
	rows, err := db.Query(`SELECT l.id, l.amount, l.remaining, COALESCE((SELECT SUM(x.amount) FROM balance_entries x
		WHERE x.merchant_account_id = l.merchant_account_id AND x.customer_id = l.customer_id AND x.source_entry_id = l.id), 0)
		FROM balance_entries l WHERE l.merchant_account_id = $1 AND l.remaining IS NOT NULL`, ma)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var amount, remaining, taken int64
		if err := rows.Scan(&id, &amount, &remaining, &taken); err != nil {
			t.Fatal(err)
		}
		if remaining != amount+taken {
			t.Errorf("lot %s: remaining %d, amount %d, taken %d", id, remaining, amount, -taken)
		}
	}
	rows.Close()
	for _, cus := range b.customers {
		var sum, remaining int64
		if err := db.QueryRow(`SELECT COALESCE(SUM(amount), 0), COALESCE(SUM(remaining), 0) FROM balance_entries
			WHERE merchant_account_id = $1 AND customer_id = $2 AND currency = 'USD'`, ma, cus).Scan(&sum, &remaining); err != nil {
			t.Fatal(err)
		}
		if sum != remaining || sum < 0 {
			t.Errorf("%s: entries add up to %d, lots hold %d", cus, sum, remaining)
		}
		d := c.must(t, 200, b.tn, "GET", "/v1/customers/"+cus+"/balance", nil)
		var shown int64
		for _, x := range d["balances"].([]any) {
			m := x.(map[string]any)
			if m["currency"] == "USD" {
				shown = int64(m["available"].(float64) + m["pending"].(float64))
			}
		}
		if shown != sum {
			t.Errorf("%s: the API shows a balance of %d, the entries add up to %d", cus, shown, sum)
		}
	}
	// Each finalized invoice took from the ledger exactly what it says it applied.
	rows, err = db.Query(`SELECT id FROM invoices WHERE merchant_account_id = $1 AND number IS NOT NULL`, ma)
	if err != nil {
		t.Fatal(err)
	}
	var invs []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		invs = append(invs, id)
	}
	rows.Close()
	for _, id := range invs {
		var applied int64
		_ = db.QueryRow(`SELECT COALESCE(-SUM(amount), 0) FROM balance_entries WHERE merchant_account_id = $1 AND type = 'application' AND invoice_id = $2`, ma, id).Scan(&applied)
		inv := c.must(t, 200, b.tn, "GET", "/v1/invoices/"+id, nil)
		if got := int64(inv["prepaidApplied"].(float64)); got != applied {
			t.Errorf("invoice %s: prepaidApplied %d, ledger applications %d", id, got, applied)
		}
	}
}
