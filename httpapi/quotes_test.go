package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// quoteFixture is billingFixture plus what subscriptions need: metered API calls billed monthly, an
// annual plan, a pay-what-you-want price and a coupon in euros.
func quoteFixture(t *testing.T, e *testkit.Env) {
	t.Helper()
	billingFixture(t, e)
	for _, p := range []map[string]any{
		{"priceId": "api-calls", "productId": "api", "name": "API calls", "priceType": "usage_metered", "currency": "USD", "billingInterval": "month", "unitAmount": 2, "meterId": "api"},
		{"priceId": "plan-annual", "productId": "pro", "name": "Pro plan (annual)", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "year", "unitAmount": 50000},
		{"priceId": "tip", "productId": "tip", "name": "Tip", "priceType": "pay_what_you_want", "currency": "USD"},
	} {
		e.Must(200, "POST", "/v1/prices", p)
	}
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "eur-five", "name": "5.00 EUR off", "amountOff": 500, "currency": "EUR"})
}

func quoteBody(orderType, customer string, lines ...map[string]any) map[string]any {
	ls := []any{}
	for _, l := range lines {
		ls = append(ls, l)
	}
	return map[string]any{"orderType": orderType, "customerId": customer, "billingAccountId": "ba-" + customer, "currency": "USD", "lines": ls}
}

func line(priceID string, kv ...any) map[string]any {
	l := map[string]any{"priceId": priceID}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i].(string)] = kv[i+1]
	}
	return l
}

func with(b map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func ts(t *testing.T, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("not a timestamp: %#v", v)
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return tm
}

// wantEvents fails unless the events about objectID are exactly types, oldest first.
func wantEvents(t *testing.T, e *testkit.Env, objectID string, types ...string) {
	t.Helper()
	if got := newCatalogKit(t, e).eventTypes(e.Tenant.Sandbox, objectID); !slices.Equal(got, types) {
		t.Fatalf("events of %s: %v, want %v", objectID, got, types)
	}
}

// renewedInvoices returns the latestInvoiceId of each subscription.renewed event, oldest first.
func renewedInvoices(t testing.TB, e *testkit.Env, subID string) []string {
	t.Helper()
	evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), e.Tenant.Sandbox, subID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type != "subscription.renewed" {
			continue
		}
		var d struct {
			Object struct {
				LatestInvoiceID string `json:"latestInvoiceId"`
			} `json:"object"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Object.LatestInvoiceID)
	}
	return out
}

func advanceTo(e *testkit.Env, to time.Time) {
	e.T.Helper()
	e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339Nano)})
}

func TestQuoteValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		quoteFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		customerAt(t, e, "c2", "US", "TX", false)
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1-eur", "customerId": "c1", "currency": "EUR"})
		plan := line("plan")

		// Schema bounds and enums (the contract).
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("renewal", "c1", plan)), "body:orderType:invalid_enum")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1", line("plan", "quantity", 0))), "body:lines[0].quantity:out_of_range")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1", line("plan", "unitAmount", -1))), "body:lines[0].unitAmount:out_of_range")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1", line("plan", "unitAmount", 1_000_000_000_000))), "body:lines[0].unitAmount:out_of_range")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "quoteId", "bad id")), "body:quoteId:invalid_format")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "expiresAt", "soon")), "body:expiresAt:unknown_field")
		wantFields(t, e.Do("POST", "/v1/quotes", map[string]any{"orderType": "one_off"}),
			"body:customerId:required", "body:billingAccountId:required", "body:currency:required", "body:lines:required")

		// Currency: invalid, not supported, and agreeing with prices, billing account and coupons.
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "currency", "usd")), "body:currency:invalid_currency")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "currency", "ZZZ")), "body:currency:invalid_currency")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "currency", "BRL")), "body:currency:currency_not_supported")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1", plan, line("eur-plan"))), "body:lines[1].priceId:currency_mismatch")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", line("eur-plan")), "currency", "EUR")), "body:currency:currency_mismatch")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", line("eur-plan")), "currency", "EUR", "billingAccountId", "ba-c1-eur", "couponIds", []string{"ten", "five"})),
			"body:couponIds[1]:currency_mismatch")

		// subscriptionId: required for and only for amendments, and must exist.
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("subscription_amendment", "c1", plan)), "body:subscriptionId:required")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "subscriptionId", "sub_x")), "body:subscriptionId:not_allowed")
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("subscription_creation", "c1", plan), "subscriptionId", "sub_x")), "body:subscriptionId:not_allowed")
		r := e.Must(404, "POST", "/v1/quotes", with(quoteBody("subscription_amendment", "c1", plan), "subscriptionId", "sub_nope"))
		if r.ErrorDetails()["field"] != "subscriptionId" {
			t.Fatalf("404 field: %s", r.Body)
		}

		// References: 404 naming the field.
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{with(quoteBody("one_off", "c1", plan), "couponIds", []string{"ten", "missing"}), "couponIds[1]"},
			{quoteBody("one_off", "c1", plan, line("nope")), "lines[1].priceId"},
			{with(quoteBody("one_off", "c1", plan), "customerId", "ghost"), "customerId"},
			{with(quoteBody("one_off", "c1", plan), "billingAccountId", "ba-ghost"), "billingAccountId"},
		} {
			r := e.Must(404, "POST", "/v1/quotes", c.body)
			if r.ErrorDetails()["field"] != c.field {
				t.Fatalf("404 field %v, want %s: %s", r.ErrorDetails()["field"], c.field, r.Body)
			}
		}
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "billingAccountId", "ba-c2")), "body:billingAccountId:customer_mismatch")

		// Order-type rules on the lines.
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("subscription_creation", "c1", line("setup"), line("tip", "unitAmount", 100))), "body:lines:recurring_line_required")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("subscription_creation", "c1", plan, line("api-calls"), line("plan-annual"))), "body:lines[2].priceId:interval_mismatch")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("subscription_creation", "c1", line("api-calls", "quantity", 3))), "body:lines[0].quantity:not_allowed")
		wantFields(t, e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1")), "body:lines:invalid_count")

		// Every problem at once.
		all := with(quoteBody("one_off", "c1", line("eur-plan"), line("api-calls"), line("tip"), line("plan", "quantity", 999_999_999, "unitAmount", 999_999), line("free-not-free")),
			"subscriptionId", "sub_x", "couponIds", []string{"eur-five", "ten", "ten"})
		all["lines"] = all["lines"].([]any)[:4]
		wantFields(t, e.Do("POST", "/v1/quotes", all),
			"body:lines[0].priceId:currency_mismatch", "body:lines[1].priceId:not_allowed", "body:lines[2].unitAmount:required",
			"body:lines[3].quantity:amount_too_large", "body:subscriptionId:not_allowed", "body:couponIds[0]:currency_mismatch",
			"body:couponIds[2]:duplicate")

		// A valid quote; its ID is unique per merchant account; another account cannot see it.
		q := e.Must(201, "POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan, line("tip", "unitAmount", 700, "description", "Thanks")), "quoteId", "Q-1", "terms", "Net 30.", "metadata", map[string]any{"crm": "42"})).Data()
		if q["object"] != "quote" || q["quoteId"] != "Q-1" || q["status"] != "draft" || num(q["version"]) != 1 || q["terms"] != "Net 30." ||
			q["subscriptionId"] != nil || q["invoiceId"] != nil || q["environment"] != "sandbox" || q["merchantAccountId"] != e.Tenant.Sandbox {
			t.Fatalf("quote: %v", q)
		}
		if got := figures(q, "subtotal", "discountTotal", "total"); got != "subtotal=5700 discountTotal=0 total=5700 " {
			t.Fatalf("figures %s", got)
		}
		vs := q["versions"].([]any)
		v1 := vs[0].(map[string]any)
		if len(vs) != 1 || num(v1["version"]) != 1 || v1["status"] != "draft" || num(v1["total"]) != 5700 || v1["createdAt"] != q["createdAt"] {
			t.Fatalf("versions: %v", vs)
		}
		if l := q["lines"].([]any)[1].(map[string]any); l["description"] != "Thanks" || num(l["unitAmount"]) != 700 || num(l["quantity"]) != 1 {
			t.Fatalf("override line: %v", l)
		}
		if d := e.Must(200, "GET", "/v1/quotes/Q-1", nil).Data(); d["quoteId"] != "Q-1" || num(d["total"]) != 5700 || d["metadata"].(map[string]any)["crm"] != "42" {
			t.Fatalf("get: %v", d)
		}
		r = e.Must(409, "POST", "/v1/quotes", with(quoteBody("one_off", "c1", plan), "quoteId", "Q-1"))
		if r.ErrorDetails()["reason"] != "duplicate_id" {
			t.Fatalf("duplicate: %s", r.Body)
		}
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/quotes/Q-1", nil, testkit.As(other))
		e.Must(404, "POST", "/v1/quotes/Q-1/accept", map[string]any{}, testkit.As(other))
		e.Must(404, "GET", "/v1/quotes/Q-nope", nil)
		e.Must(404, "GET", "/v1/subscriptions/sub_nope", nil)
		gen := e.Must(201, "POST", "/v1/quotes", quoteBody("one_off", "c1", plan)).Data()
		if id := gen["quoteId"].(string); len(id) < 4 || id[:3] != "qt_" {
			t.Fatalf("generated ID %q", id)
		}
	})
}

// A one_off quote with the hand-checked catalog of invoices_test.go: the quote shows subtotal and
// discounts (no tax, no prepaid), accepting it makes the draft invoice, which refreshes and
// finalizes to the hand-checked total.
func TestQuoteOneOffToInvoice(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		quoteFixture(t, e)
		customerAt(t, e, "bc", "CA", "BC", false)
		e.Must(201, "POST", "/v1/customers/bc/balance/grant", map[string]any{"currency": "USD", "amount": 3000, "targets": map[string]any{"priceIds": []string{"seats"}}})

		body := with(draftBody("bc", "ten", "five"), "orderType", "one_off", "quoteId", "Q-BC")
		q := e.Must(201, "POST", "/v1/quotes", body).Data()
		if got := figures(q, "subtotal", "discountTotal", "total"); got != "subtotal=19840 discountTotal=2484 total=17356 " {
			t.Fatalf("quote figures %s", got)
		}
		if got := fmt.Sprint(lineFigures(q, "amount"), lineFigures(q, "discountAmount")); got != "[5000 12340 2500] [626 1545 313]" {
			t.Fatalf("quote lines %s", got)
		}
		wantEvents(t, e, "Q-BC", "quote.created")

		acc := e.Must(200, "POST", "/v1/quotes/Q-BC/accept", map[string]any{}).Data()
		invID, _ := acc["invoiceId"].(string)
		if acc["status"] != "accepted" || invID == "" || acc["acceptedAt"] == nil || acc["versions"].([]any)[0].(map[string]any)["status"] != "accepted" {
			t.Fatalf("accepted quote: %v", acc)
		}
		wantEvents(t, e, "Q-BC", "quote.created", "quote.accepted")

		inv := e.Must(200, "GET", "/v1/invoices/"+invID, nil).Data()
		if inv["status"] != "draft" || inv["quoteId"] != "Q-BC" || inv["subscriptionId"] != nil || inv["autoFinalizeAt"] != nil {
			t.Fatalf("invoice from quote: %v", inv)
		}
		if got, want := figures(inv, "subtotal", "discountTotal", "taxTotal", "total"), "subtotal=19840 discountTotal=2484 taxTotal=2083 total=19439 "; got != want {
			t.Fatalf("draft figures %s, want %s", got, want)
		}
		inv = e.Must(200, "POST", "/v1/invoices/"+invID+"/refresh", map[string]any{}).Data()
		if num(inv["total"]) != 19439 {
			t.Fatalf("refresh: %v", inv)
		}
		fin := e.Must(200, "POST", "/v1/invoices/"+invID+"/finalize", map[string]any{}).Data()
		if got, want := figures(fin, "subtotal", "discountTotal", "prepaidApplied", "taxTotal", "total", "amountDue"),
			"subtotal=19840 discountTotal=2484 prepaidApplied=3000 taxTotal=1723 total=16079 amountDue=16079 "; got != want || fin["number"] != "INV-000001" {
			t.Fatalf("finalized %s %v, want %s", got, fin["number"], want)
		}

		// Accepting again: 409 with the current state; nothing else changes.
		r := e.Must(409, "POST", "/v1/quotes/Q-BC/accept", map[string]any{})
		if r.ErrorDetails()["currentState"] != "accepted" {
			t.Fatalf("second accept: %s", r.Body)
		}
		if d := e.Must(200, "GET", "/v1/quotes/Q-BC", nil).Data(); d["invoiceId"] != invID {
			t.Fatalf("quote after second accept: %v", d)
		}

		// Negotiated unit amounts are what the invoice bills, even if they differ from the catalog.
		neg := e.Must(201, "POST", "/v1/quotes", quoteBody("one_off", "bc", line("plan", "unitAmount", 4200, "quantity", 2), line("tip", "unitAmount", 150))).Data()
		acc = e.Must(200, "POST", "/v1/quotes/"+neg["quoteId"].(string)+"/accept", map[string]any{}).Data()
		inv = e.Must(200, "GET", "/v1/invoices/"+acc["invoiceId"].(string), nil).Data()
		if got := fmt.Sprint(lineFigures(inv, "unitAmount"), lineFigures(inv, "amount"), num(inv["subtotal"])); got != "[4200 150] [8400 150] 8550" {
			t.Fatalf("negotiated invoice %s", got)
		}
		inv = e.Must(200, "POST", "/v1/invoices/"+acc["invoiceId"].(string)+"/refresh", map[string]any{}).Data()
		if num(inv["subtotal"]) != 8550 {
			t.Fatalf("refresh lost the negotiated amounts: %v", inv["subtotal"])
		}

		// Concurrent accepts of one quote: exactly one wins.
		id := e.Must(201, "POST", "/v1/quotes", quoteBody("one_off", "bc", line("setup"))).Data()["quoteId"].(string)
		testkit.OnlyOneWins(t, e.Race(10, "POST", "/v1/quotes/"+id+"/accept", map[string]any{}), 200, 409)
	})
}

// subscriptionPeriod checks the subscription's current period and returns its latest invoice.
func subscriptionPeriod(t *testing.T, e *testkit.Env, subID string, start, end time.Time) map[string]any {
	t.Helper()
	s := e.Must(200, "GET", "/v1/subscriptions/"+subID, nil).Data()
	if !ts(t, s["currentPeriodStart"]).Equal(start) || !ts(t, s["currentPeriodEnd"]).Equal(end) {
		t.Fatalf("period %v – %v, want %v – %v", s["currentPeriodStart"], s["currentPeriodEnd"], start, end)
	}
	return s
}

// checkInvoicePeriodLines checks each line's service period: fixed lines the new period, usage
// lines the period that ended.
func lineKinds(t *testing.T, inv map[string]any) map[string][2]time.Time {
	t.Helper()
	out := map[string][2]time.Time{}
	for _, l := range inv["lines"].([]any) {
		lm := l.(map[string]any)
		if lm["periodStart"] == nil {
			continue
		}
		out[lm["priceId"].(string)] = [2]time.Time{ts(t, lm["periodStart"]), ts(t, lm["periodEnd"])}
	}
	return out
}

// A subscription across three renewals on the sandbox clock: each renewal makes one draft invoice
// for the new period that finalizes itself an hour after the period starts; an amendment accepted
// mid-period changes only the next period's invoice.
func TestSubscriptionRenewalsAndAmendment(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		quoteFixture(t, e)
		customerAt(t, e, "sub", "US", "TX", false)
		q := e.Must(201, "POST", "/v1/quotes", with(quoteBody("subscription_creation", "sub",
			line("plan", "quantity", 2, "unitAmount", 4500), line("api-calls"), line("setup")), "couponIds", []string{"ten"}, "metadata", map[string]any{"deal": "d-1"})).Data()
		if got := figures(q, "subtotal", "discountTotal", "total"); got != "subtotal=11500 discountTotal=1150 total=10350 " {
			t.Fatalf("quote figures %s", got)
		}
		if l := q["lines"].([]any)[1].(map[string]any); l["quantity"] != nil || num(l["amount"]) != 0 || l["lineType"] != "usage" {
			t.Fatalf("usage line on the quote: %v", l)
		}
		acc := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
		subID, _ := acc["subscriptionId"].(string)
		firstInv, _ := acc["invoiceId"].(string)
		if subID == "" || firstInv == "" || subID[:4] != "sub_" {
			t.Fatalf("accepted: %v", acc)
		}
		start := ts(t, acc["acceptedAt"])
		periodEnd := func(k int64) time.Time { return remit.AddInterval(start, "month", k) }

		s := subscriptionPeriod(t, e, subID, start, periodEnd(1))
		if s["status"] != "active" || s["latestInvoiceId"] != firstInv || s["pendingItems"] != nil || s["quoteId"] != q["quoteId"] ||
			s["billingInterval"] != "month" || num(s["billingIntervalCount"]) != 1 || len(s["items"].([]any)) != 2 ||
			fmt.Sprint(s["couponIds"]) != "[ten]" || s["metadata"].(map[string]any)["deal"] != "d-1" {
			t.Fatalf("subscription: %v", s)
		}
		if it := s["items"].([]any)[1].(map[string]any); it["priceId"] != "api-calls" || it["quantity"] != nil {
			t.Fatalf("usage item: %v", it)
		}
		wantEvents(t, e, subID, "subscription.created")

		// The first invoice: the plan in advance and the one-time setup; no usage yet.
		inv := e.Must(200, "GET", "/v1/invoices/"+firstInv, nil).Data()
		if inv["status"] != "draft" || inv["subscriptionId"] != subID || !ts(t, inv["autoFinalizeAt"]).Equal(start.Add(time.Hour)) ||
			num(inv["subtotal"]) != 11500 || num(inv["discountTotal"]) != 1150 || len(inv["lines"].([]any)) != 2 {
			t.Fatalf("first invoice: %v", inv)
		}
		if p := lineKinds(t, inv)["plan"]; !p[0].Equal(start) || !p[1].Equal(periodEnd(1)) {
			t.Fatalf("plan line period %v", p)
		}
		advanceTo(e, start.Add(time.Hour-time.Second))
		if st := e.Must(200, "GET", "/v1/invoices/"+firstInv, nil).Data()["status"]; st != "draft" {
			t.Fatalf("finalized before its hour: %v", st)
		}
		advanceTo(e, start.Add(time.Hour+time.Second))
		inv = e.Must(200, "GET", "/v1/invoices/"+firstInv, nil).Data()
		if (inv["status"] != "open" && inv["status"] != "paid") || inv["number"] != "INV-000001" {
			t.Fatalf("first invoice after its hour: %v %v", inv["status"], inv["number"])
		}

		finalized := func(id, number string) map[string]any {
			t.Helper()
			inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			if (inv["status"] != "open" && inv["status"] != "paid") || inv["number"] != number {
				t.Fatalf("invoice %s: %v %v, want finalized as %s", id, inv["status"], inv["number"], number)
			}
			return inv
		}
		seen := map[string]bool{firstInv: true}
		// renew advances to the end of period k, checks the new draft, then its finalization an hour later.
		renew := func(k int64, number string) map[string]any {
			t.Helper()
			advanceTo(e, periodEnd(k).Add(time.Second))
			s := subscriptionPeriod(t, e, subID, periodEnd(k), periodEnd(k+1))
			id := s["latestInvoiceId"].(string)
			if seen[id] {
				t.Fatalf("renewal %d made no new invoice", k)
			}
			seen[id] = true
			inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			if inv["status"] != "draft" || !ts(t, inv["periodStart"]).Equal(periodEnd(k)) || !ts(t, inv["periodEnd"]).Equal(periodEnd(k+1)) ||
				!ts(t, inv["autoFinalizeAt"]).Equal(periodEnd(k).Add(time.Hour)) || inv["quoteId"] != nil {
				t.Fatalf("renewal %d draft: %v", k, inv)
			}
			advanceTo(e, periodEnd(k).Add(time.Hour+time.Second))
			return finalized(id, number)
		}

		// Renewal 1: the plan for period 2 in advance, usage for period 1 in arrears.
		inv = renew(1, "INV-000002")
		lk := lineKinds(t, inv)
		if p, u := lk["plan"], lk["api-calls"]; !p[0].Equal(periodEnd(1)) || !p[1].Equal(periodEnd(2)) || !u[0].Equal(start) || !u[1].Equal(periodEnd(1)) {
			t.Fatalf("renewal 1 line periods: %v", lk)
		}
		if got := fmt.Sprint(lineFigures(inv, "amount"), num(inv["subtotal"]), num(inv["discountTotal"])); got != "[9000 0] 9000 900" {
			t.Fatalf("renewal 1 figures %s", got)
		}

		// An amendment accepted during period 2: three seats of the plan at 40.00, no usage, no coupon.
		am := e.Must(201, "POST", "/v1/quotes", with(quoteBody("subscription_amendment", "sub", line("plan", "quantity", 3, "unitAmount", 4000)), "subscriptionId", subID)).Data()
		if got := figures(am, "subtotal", "total"); got != "subtotal=12000 total=12000 " {
			t.Fatalf("amendment figures %s", got)
		}
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("subscription_amendment", "sub", line("setup"), line("plan")), "subscriptionId", subID)), "body:lines[0].priceId:not_allowed")
		customerAt(t, e, "other", "US", "TX", false)
		wantFields(t, e.Do("POST", "/v1/quotes", with(quoteBody("subscription_amendment", "other", line("plan")), "subscriptionId", subID)),
			"body:customerId:subscription_mismatch", "body:billingAccountId:subscription_mismatch")
		acc = e.Must(200, "POST", "/v1/quotes/"+am["quoteId"].(string)+"/accept", map[string]any{}).Data()
		if acc["subscriptionId"] != subID || acc["invoiceId"] != nil || acc["status"] != "accepted" {
			t.Fatalf("accepted amendment: %v", acc)
		}
		s = subscriptionPeriod(t, e, subID, periodEnd(1), periodEnd(2))
		if len(s["items"].([]any)) != 2 || len(s["pendingItems"].([]any)) != 1 || fmt.Sprint(s["pendingCouponIds"]) != "[]" ||
			s["pendingQuoteId"] != am["quoteId"] || fmt.Sprint(s["couponIds"]) != "[ten]" {
			t.Fatalf("amended subscription before the next period: %v", s)
		}
		wantEvents(t, e, subID, "subscription.created", "subscription.renewed", "subscription.updated")
		// The current period's invoice is untouched.
		if got := num(e.Must(200, "GET", "/v1/invoices/"+s["latestInvoiceId"].(string), nil).Data()["subtotal"]); got != 9000 {
			t.Fatalf("current invoice changed: %d", got)
		}

		// Renewal 2: the amended plan in advance, usage of period 2 (old items) in arrears, no coupon.
		inv = renew(2, "INV-000003")
		if got := fmt.Sprint(lineFigures(inv, "unitAmount"), lineFigures(inv, "quantity"), num(inv["subtotal"]), num(inv["discountTotal"]), inv["couponIds"]); got != "[4000 2] [3 0] 12000 0 []" {
			t.Fatalf("renewal 2 figures %s", got)
		}
		s = e.Must(200, "GET", "/v1/subscriptions/"+subID, nil).Data()
		if s["pendingItems"] != nil || s["pendingQuoteId"] != nil || len(s["items"].([]any)) != 1 || fmt.Sprint(s["couponIds"]) != "[]" {
			t.Fatalf("subscription after the amendment took effect: %v", s)
		}

		// Renewal 3: only the amended plan; usage is gone with the old items.
		inv = renew(3, "INV-000004")
		if got := fmt.Sprint(lineFigures(inv, "amount"), num(inv["subtotal"])); got != "[12000] 12000" {
			t.Fatalf("renewal 3 figures %s", got)
		}
		wantEvents(t, e, subID, "subscription.created", "subscription.renewed", "subscription.updated", "subscription.renewed", "subscription.renewed")
	})
}

// One clock advance across three periods runs every renewal and every auto-finalization in order.
func TestSubscriptionLargeAdvance(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		quoteFixture(t, e)
		customerAt(t, e, "big", "US", "TX", false)
		q := e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "big", line("plan"))).Data()
		acc := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
		subID := acc["subscriptionId"].(string)
		start := ts(t, acc["acceptedAt"])
		end := func(k int64) time.Time { return remit.AddInterval(start, "month", k) }

		advanceTo(e, end(3).Add(time.Hour+time.Second))
		s := subscriptionPeriod(t, e, subID, end(3), end(4))
		inv := e.Must(200, "GET", "/v1/invoices/"+s["latestInvoiceId"].(string), nil).Data()
		// Four invoices (the first and three renewals) were finalized in order: the latest is the 4th.
		if inv["number"] != "INV-000004" || (inv["status"] != "open" && inv["status"] != "paid") || !ts(t, inv["periodStart"]).Equal(end(3)) ||
			!ts(t, inv["finalizedAt"]).Equal(end(3).Add(time.Hour)) {
			t.Fatalf("latest invoice after a large advance: %v", inv)
		}
		if st := e.Must(200, "GET", "/v1/invoices/"+acc["invoiceId"].(string), nil).Data()["number"]; st != "INV-000001" {
			t.Fatalf("first invoice number %v", st)
		}
		// Each renewal made one invoice for its own period, finalized an hour after it started.
		renewed := renewedInvoices(t, e, subID)
		if len(renewed) != 3 {
			t.Fatalf("renewals: %v", renewed)
		}
		for k, id := range renewed {
			inv := e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
			p := int64(k + 1)
			if inv["number"] != fmt.Sprintf("INV-%06d", k+2) || !ts(t, inv["periodStart"]).Equal(end(p)) || !ts(t, inv["periodEnd"]).Equal(end(p+1)) ||
				!ts(t, inv["finalizedAt"]).Equal(end(p).Add(time.Hour)) || num(inv["subtotal"]) != 5000 {
				t.Fatalf("renewal %d invoice: %v", k+1, inv)
			}
		}
		wantEvents(t, e, subID, "subscription.created", "subscription.renewed", "subscription.renewed", "subscription.renewed")

		// A usage-only subscription has nothing to bill in advance: no first invoice; its first
		// renewal bills period 1's usage. An amendment to an annual plan starts a yearly cycle.
		q = e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "big", line("api-calls"))).Data()
		acc = e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
		if acc["invoiceId"] != nil {
			t.Fatalf("usage-only subscription billed in advance: %v", acc)
		}
		usub := acc["subscriptionId"].(string)
		ustart := ts(t, acc["acceptedAt"])
		s = subscriptionPeriod(t, e, usub, ustart, remit.AddInterval(ustart, "month", 1))
		if s["latestInvoiceId"] != nil {
			t.Fatalf("latestInvoiceId %v", s["latestInvoiceId"])
		}
		am := e.Must(201, "POST", "/v1/quotes", with(quoteBody("subscription_amendment", "big", line("plan-annual")), "subscriptionId", usub)).Data()
		e.Must(200, "POST", "/v1/quotes/"+am["quoteId"].(string)+"/accept", map[string]any{})
		uend := remit.AddInterval(ustart, "month", 1)
		advanceTo(e, uend.Add(time.Second))
		s = subscriptionPeriod(t, e, usub, uend, remit.AddInterval(uend, "year", 1))
		if s["billingInterval"] != "year" || !ts(t, s["billingCycleAnchor"]).Equal(uend) {
			t.Fatalf("annual cycle: %v", s)
		}
		inv = e.Must(200, "GET", "/v1/invoices/"+s["latestInvoiceId"].(string), nil).Data()
		lk := lineKinds(t, inv)
		if a, u := lk["plan-annual"], lk["api-calls"]; !a[1].Equal(remit.AddInterval(uend, "year", 1)) || !u[0].Equal(ustart) || !u[1].Equal(uend) {
			t.Fatalf("annual renewal lines: %v", lk)
		}
	})
}
