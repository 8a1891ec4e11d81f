package httpapi_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// billingFixture creates the catalog of the hand-checked invoice: a monthly plan of 50.00, seats
// at 12.34 (one-time), a setup fee of 25.00, a 10% coupon and a 5.00 coupon.
func billingFixture(t *testing.T, e *testkit.Env) {
	t.Helper()
	for _, p := range []map[string]any{
		{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 5000},
		{"priceId": "seats", "productId": "seats", "name": "Seats", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1234},
		{"priceId": "setup", "productId": "setup", "name": "Setup", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 2500},
		{"priceId": "eur-plan", "productId": "pro", "name": "Pro plan EUR", "priceType": "fixed_one_time", "currency": "EUR", "unitAmount": 100},
	} {
		e.Must(200, "POST", "/v1/prices", p)
	}
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "ten", "name": "10% off", "percentOff": 10})
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "five", "name": "5.00 off", "amountOff": 500, "currency": "USD"})
}

func customerAt(t *testing.T, e *testkit.Env, id, country, region string, exempt bool) {
	t.Helper()
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id, "taxExempt": exempt,
		"address": map[string]any{"line1": "1 Main St", "city": "City", "postalCode": "V5K 0A1", "country": country, "region": region}})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD"})
}

func draftBody(customer string, coupons ...string) map[string]any {
	b := map[string]any{"customerId": customer, "billingAccountId": "ba-" + customer, "currency": "USD", "lines": []any{
		map[string]any{"priceId": "plan"},
		map[string]any{"priceId": "seats", "quantity": 10},
		map[string]any{"priceId": "setup"},
	}}
	if len(coupons) > 0 {
		b["couponIds"] = coupons
	}
	return b
}

func figures(d map[string]any, names ...string) string {
	s := ""
	for _, n := range names {
		s += fmt.Sprintf("%s=%d ", n, num(d[n]))
	}
	return s
}

func lineFigures(d map[string]any, field string) []int64 {
	var out []int64
	for _, l := range d["lines"].([]any) {
		out = append(out, num(l.(map[string]any)[field]))
	}
	return out
}

// The hand-checked case (see invoice_arithmetic_test.go for the arithmetic): coupons of 10% and 5.00, a
// grant of 30.00 targeted at the seats price, billed in British Columbia (GST 5% + PST 7%).
func TestInvoiceLifecycleHandChecked(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "bc", "CA", "BC", false)
		customerAt(t, e, "exempt", "US", "CA", true)
		grant := e.Must(201, "POST", "/v1/customers/bc/balance/grant", map[string]any{"currency": "USD", "amount": 3000, "targets": map[string]any{"priceIds": []string{"seats"}}}).Data()

		inv := e.Must(201, "POST", "/v1/invoices", draftBody("bc", "ten", "five")).Data()
		id := inv["invoiceId"].(string)
		if inv["status"] != "draft" || inv["number"] != nil {
			t.Fatalf("new invoice: %v", inv)
		}
		// A draft carries no prepaid balance; tax is quoted on the discounted amounts:
		// taxable 4374, 10795, 2187 → GST 219+540+109, PST 306+756+153.
		if got, want := figures(inv, "subtotal", "discountTotal", "prepaidApplied", "taxTotal", "total", "amountDue"),
			"subtotal=19840 discountTotal=2484 prepaidApplied=0 taxTotal=2083 total=19439 amountDue=19439 "; got != want {
			t.Fatalf("draft figures %s, want %s", got, want)
		}
		if got := fmt.Sprint(lineFigures(inv, "discountAmount")); got != "[626 1545 313]" {
			t.Fatalf("line discounts %s", got)
		}
		txnID := inv["taxTransactionId"].(string)
		txn := e.Must(200, "GET", "/v1/tax-transactions/"+txnID, nil).Data()
		if txn["status"] != "quoted" || num(txn["totalTax"]) != 2083 || len(txn["lines"].([]any)) != 6 {
			t.Fatalf("quoted tax transaction: %v", txn)
		}

		refreshed := e.Must(200, "POST", "/v1/invoices/"+id+"/refresh", map[string]any{}).Data()
		if num(refreshed["total"]) != 19439 || refreshed["taxTransactionId"] != txnID {
			t.Fatalf("refresh changed figures or the tax transaction: %v", refreshed)
		}

		fin := e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{"finalizedByRef": "ops@example.com"}).Data()
		if got, want := figures(fin, "subtotal", "discountTotal", "prepaidApplied", "taxTotal", "total", "amountDue", "amountRemaining"),
			"subtotal=19840 discountTotal=2484 prepaidApplied=3000 taxTotal=1723 total=16079 amountDue=16079 amountRemaining=16079 "; got != want {
			t.Fatalf("finalized figures %s, want %s", got, want)
		}
		if got := fmt.Sprint(lineFigures(fin, "prepaidApplied"), lineFigures(fin, "taxAmount")); got != "[0 3000 0] [525 936 262]" {
			t.Fatalf("line prepaid and tax %s", got)
		}
		if fin["status"] != "open" || fin["number"] != "INV-000001" || fin["paymentUrl"] == nil || fin["finalizedByRef"] != "ops@example.com" {
			t.Fatalf("finalized invoice: %v", fin)
		}
		txn = e.Must(200, "GET", "/v1/tax-transactions/"+fin["taxTransactionId"].(string), nil).Data()
		if txn["status"] != "committed" || num(txn["totalTax"]) != 1723 {
			t.Fatalf("committed tax transaction: %v", txn)
		}
		_, entries := newCatalogKit(t, e).balance("bc")
		applied := false
		for _, en := range entries {
			if en["type"] == "application" && en["invoiceId"] == id && num(en["amount"]) == -3000 && en["sourceEntryId"] == grant["entryId"] {
				applied = true
			}
		}
		if !applied {
			t.Fatalf("no application entry of 30.00 naming the invoice: %v", entries)
		}

		// A finalized invoice cannot be refreshed or finalized again.
		for _, path := range []string{"/refresh", "/finalize"} {
			r := e.Must(409, "POST", "/v1/invoices/"+id+path, map[string]any{})
			if r.ErrorDetails()["currentState"] != "open" {
				t.Fatalf("%s: %s", path, r.Body)
			}
		}

		// An exempt customer owes no tax.
		ex := e.Must(201, "POST", "/v1/invoices", draftBody("exempt")).Data()
		ex = e.Must(200, "POST", "/v1/invoices/"+ex["invoiceId"].(string)+"/finalize", map[string]any{}).Data()
		if got := figures(ex, "subtotal", "taxTotal", "total"); got != "subtotal=19840 taxTotal=0 total=19840 " || ex["number"] != "INV-000002" {
			t.Fatalf("exempt invoice: %s %v", got, ex["number"])
		}

		// Void: open → void, once; the committed tax is reversed.
		v := e.Must(200, "POST", "/v1/invoices/"+id+"/void", map[string]any{}).Data()
		if v["status"] != "void" || v["paymentUrl"] != nil {
			t.Fatalf("void: %v", v)
		}
		e.Must(409, "POST", "/v1/invoices/"+id+"/void", map[string]any{})
		rev := e.Must(200, "GET", "/v1/tax-transactions?sourceDocumentId="+id+"&status=committed", nil).Data()["items"].([]any)
		var total int64
		for _, r := range rev {
			total += num(r.(map[string]any)["totalTax"])
		}
		if total != 0 || len(rev) != 2 {
			t.Fatalf("sale and reversal of the voided invoice should cancel out: %v", rev)
		}
	})
}

func TestInvoiceValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "CA", false)
		b := draftBody("c1")
		b["lines"] = []any{map[string]any{"priceId": "eur-plan"}, map[string]any{"priceId": "plan", "quantity": 0}}
		r := e.Do("POST", "/v1/invoices", b)
		wantFields(t, r, "body:lines[1].quantity:out_of_range")
		b["lines"] = []any{map[string]any{"priceId": "eur-plan"}, map[string]any{"priceId": "plan", "quantity": 999_999_999, "unitAmount": 999_999}}
		b["periodStart"], b["periodEnd"] = "2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z"
		r = e.Do("POST", "/v1/invoices", b)
		wantFields(t, r, "body:lines[0].priceId:currency_mismatch", "body:lines[1].quantity:amount_too_large", "body:periodEnd:before_start")
		b = draftBody("c1")
		b["lines"] = []any{map[string]any{"priceId": "nope"}}
		r = e.Must(404, "POST", "/v1/invoices", b)
		if r.ErrorDetails()["field"] != "lines[0].priceId" {
			t.Fatalf("404 field: %s", r.Body)
		}
		r = e.Must(404, "POST", "/v1/invoices", draftBody("c1", "ten", "missing"))
		if r.ErrorDetails()["field"] != "couponIds[1]" {
			t.Fatalf("404 coupon field: %s", r.Body)
		}
		e.Must(404, "GET", "/v1/invoices/inv_nope", nil)
		// Another merchant account's invoice is not visible.
		id := e.Must(201, "POST", "/v1/invoices", draftBody("c1")).Data()["invoiceId"].(string)
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/invoices/"+id, nil, testkit.As(other))
		e.Must(404, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}, testkit.As(other))
	})
}

// Gap-free numbering under concurrency, and one winner when the same draft is finalized at once.
func TestConcurrentFinalization(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		var ids []string
		for range 20 {
			ids = append(ids, e.Must(201, "POST", "/v1/invoices", draftBody("c1")).Data()["invoiceId"].(string))
		}
		var wg sync.WaitGroup
		numbers := make([]string, len(ids))
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do("POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
				if r.Status == 200 {
					numbers[i], _ = r.Data()["number"].(string)
				} else {
					t.Errorf("finalize %s: %d %s", id, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		sort.Strings(numbers)
		for i, n := range numbers {
			if want := fmt.Sprintf("INV-%06d", i+1); n != want {
				t.Fatalf("numbers %v are not 1..20 without gaps", numbers)
			}
		}

		id := e.Must(201, "POST", "/v1/invoices", draftBody("c1")).Data()["invoiceId"].(string)
		testkit.OnlyOneWins(t, e.Race(10, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{}), 200, 409)
		if n := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()["number"]; n != "INV-000021" {
			t.Fatalf("number %v", n)
		}
	})
}

func TestTaxTransactionsListAndCommit(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "NY", false)
		var drafts []string
		for i := range 15 {
			id := e.Must(201, "POST", "/v1/invoices", draftBody("c1")).Data()["invoiceId"].(string)
			drafts = append(drafts, id)
			if i%3 == 0 {
				e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
			}
		}
		// Page through everything with limit 7: 15 transactions, none lost or repeated.
		seen := map[string]bool{}
		path := "/v1/tax-transactions?limit=7"
		pages := 0
		for {
			d := e.Must(200, "GET", path, nil).Data()
			pages++
			for _, it := range d["items"].([]any) {
				id := it.(map[string]any)["taxTransactionId"].(string)
				if seen[id] {
					t.Fatalf("%s repeated", id)
				}
				seen[id] = true
			}
			next, _ := d["nextCursor"].(string)
			if next == "" {
				if d["hasMore"] != false {
					t.Fatal("hasMore without nextCursor")
				}
				break
			}
			path = "/v1/tax-transactions?cursor=" + next // the cursor keeps the page size
		}
		if len(seen) != 15 || pages != 3 {
			t.Fatalf("saw %d in %d pages", len(seen), pages)
		}
		committed := e.Must(200, "GET", "/v1/tax-transactions?status=committed", nil).Data()["items"].([]any)
		if len(committed) != 5 {
			t.Fatalf("%d committed, want 5", len(committed))
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=garbage", "status=bogus"} {
			r := e.Do("GET", "/v1/tax-transactions?"+q, nil)
			if r.Status != 422 {
				t.Fatalf("%s: %d %s", q, r.Status, r.Body)
			}
		}
		// A cursor of another list or tampered with is refused.
		d := e.Must(200, "GET", "/v1/tax-transactions?limit=2", nil).Data()
		cur := d["nextCursor"].(string)
		tampered := cur[:len(cur)-2] + "AA"
		if tampered == cur {
			tampered = cur[:len(cur)-2] + "BB"
		}
		wantFields(t, e.Do("GET", "/v1/tax-transactions?cursor="+tampered, nil), "query:cursor:invalid_cursor")
		other := e.NewTenant("Other", false)
		wantFields(t, e.Do("GET", "/v1/tax-transactions?cursor="+cur, nil, testkit.As(other)), "query:cursor:invalid_cursor")

		// Commit a quoted transaction through its route, once.
		q := e.Must(200, "GET", "/v1/tax-transactions?status=quoted&sourceDocumentId="+drafts[1], nil).Data()["items"].([]any)
		if len(q) != 1 {
			t.Fatalf("quoted for draft: %v", q)
		}
		tid := q[0].(map[string]any)["taxTransactionId"].(string)
		c := e.Must(200, "POST", "/v1/tax-transactions/"+tid+"/finalize", map[string]any{}).Data()
		if c["status"] != "committed" {
			t.Fatalf("commit: %v", c)
		}
		r := e.Must(409, "POST", "/v1/tax-transactions/"+tid+"/finalize", map[string]any{})
		if r.ErrorDetails()["currentState"] != "committed" {
			t.Fatalf("second commit: %s", r.Body)
		}
		// The draft's next refresh quotes a new transaction.
		inv := e.Must(200, "POST", "/v1/invoices/"+drafts[1]+"/refresh", map[string]any{}).Data()
		if inv["taxTransactionId"] == tid {
			t.Fatal("refresh kept a committed transaction")
		}
	})
}
