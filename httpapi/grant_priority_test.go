package httpapi_test

import (
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestGrantPriorityAndCategory: grants are spent by priority (lower first), then the earliest
// expiry, then the oldest; each entry shows its category, an application its lot's; priority
// and category are checked.
func TestGrantPriorityAndCategory(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		k := newCatalogKit(t, e)
		customerAt(t, e, "c", "US", "TX", true)
		now := k.clockNow()
		g := k.grant("c", map[string]any{"entryId": "soon", "currency": "USD", "amount": 1000, "expiresAt": now.Add(24 * time.Hour)})
		if g["priority"] != float64(50) || g["category"] != "promotional" {
			t.Fatalf("defaults %v %v", g["priority"], g["category"])
		}
		k.grant("c", map[string]any{"entryId": "paid-first", "currency": "USD", "amount": 1500, "priority": 10, "category": "paid"})
		k.grant("c", map[string]any{"entryId": "old", "currency": "USD", "amount": 1000, "priority": 90})
		k.grant("c", map[string]any{"entryId": "new", "currency": "USD", "amount": 1000, "priority": 90})
		for _, bad := range []map[string]any{{"priority": 101}, {"priority": -1}, {"category": "gift"}} {
			body := map[string]any{"currency": "USD", "amount": 1}
			for k, v := range bad {
				body[k] = v
			}
			if r := e.Do("POST", "/v1/customers/c/balance/grant", body); r.Status != 422 {
				t.Fatalf("%v: %d %s", bad, r.Status, r.Body)
			}
		}
		// 25.00 + 12.34 = 37.34: paid-first 15.00, soon 10.00, old 10.00, new 2.34.
		inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c", "billingAccountId": "ba-c", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "setup"}, map[string]any{"priceId": "seats"}}}).Data()
		e.Must(200, "POST", "/v1/invoices/"+inv["invoiceId"].(string)+"/finalize", map[string]any{})
		_, entries := k.balance("c")
		var applied []string
		categories := map[string]string{}
		for i := len(entries) - 1; i >= 0; i-- { // oldest first
			en := entries[i]
			categories[en["entryId"].(string)] = en["category"].(string)
			if en["type"] == "application" {
				applied = append(applied, en["sourceEntryId"].(string)+":"+jsonOf(-num(en["amount"]))+":"+en["category"].(string))
			}
		}
		if got := jsonOf(applied); got != `["paid-first:1500:paid","soon:1000:promotional","old:1000:promotional","new:234:promotional"]` {
			t.Fatalf("applied %s", got)
		}
		if categories["paid-first"] != "paid" || categories["new"] != "promotional" {
			t.Fatalf("categories %v", categories)
		}
	})
}
