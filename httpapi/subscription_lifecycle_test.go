package httpapi_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// lifecycleKit: the quote fixture, a "team" plan beside "plan", a tax-exempt customer paying by
// card, and a helper that starts a monthly subscription of "plan".
type lifecycleKit struct {
	payKit
}

func newLifecycleKit(t *testing.T, e *testkit.Env) lifecycleKit {
	t.Helper()
	quoteFixture(t, e)
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team-eur", "productId": "team", "name": "Team plan EUR", "priceType": "fixed_recurring",
		"currency": "EUR", "billingInterval": "month", "unitAmount": 9000})
	return lifecycleKit{payKit{catalogKit: newCatalogKit(t, e)}}
}

// customer creates a tax-exempt customer and billing account ba-id, paying with token ("" for none).
func (k lifecycleKit) customer(id, token string) {
	k.t.Helper()
	customerAt(k.t, k.e, id, "US", "TX", true)
	if token != "" {
		k.attach(id, token)
	}
}

// subscribe accepts a subscription_creation quote of lines for the customer and returns the
// subscription and the moment it started.
func (k lifecycleKit) subscribe(customer string, lines ...map[string]any) (map[string]any, time.Time) {
	k.t.Helper()
	q := k.e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", customer, lines...)).Data()
	acc := k.e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
	return k.sub(acc["subscriptionId"].(string)), ts(k.t, acc["acceptedAt"])
}

func (k lifecycleKit) sub(id string) map[string]any {
	k.t.Helper()
	return k.e.Must(200, "GET", "/v1/subscriptions/"+id, nil).Data()
}

func (k lifecycleKit) invoice(id string) map[string]any {
	k.t.Helper()
	return k.e.Must(200, "GET", "/v1/invoices/"+id, nil).Data()
}

// creditNotes returns the IDs of an invoice's credit notes.
func (k lifecycleKit) creditNotes(invoiceID string) []string {
	k.t.Helper()
	cns, err := k.e.App.DB.Read(context.Background()).ListInvoiceCreditNotes(context.Background(), k.e.Tenant.Sandbox, invoiceID)
	if err != nil {
		k.t.Fatal(err)
	}
	var ids []string
	for _, c := range cns {
		ids = append(ids, c.CreditNoteID)
	}
	return ids
}

// creditNote returns an invoice's one credit note.
func (k lifecycleKit) creditNote(t *testing.T, invoiceID string) map[string]any {
	t.Helper()
	ids := k.creditNotes(invoiceID)
	if len(ids) != 1 {
		t.Fatalf("credit notes of %s: %v", invoiceID, ids)
	}
	return k.e.Must(200, "GET", "/v1/credit-notes/"+ids[0], nil).Data()
}

// hasField reports whether a 422 lists field.
func hasField(r *testkit.Response, field string) bool {
	return slices.ContainsFunc(r.FieldErrors(), func(f string) bool { return strings.Contains(f, ":"+field+":") })
}

func TestSubscriptionListAndRead(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("a", "")
		k.customer("b", "")
		sa, _ := k.subscribe("a", line("plan"))
		sb, _ := k.subscribe("b", line("plan"), line("api-calls"))
		if sa["status"] != "active" || sa["trialEnd"] != nil || sa["cancelAt"] != nil || sa["canceledAt"] != nil || sa["pausedAt"] != nil ||
			len(sa["pendingProrations"].([]any)) != 0 {
			t.Fatalf("subscription %v", sa)
		}
		e.Must(200, "POST", "/v1/subscriptions/"+sa["subscriptionId"].(string)+"/pause", map[string]any{})
		ids := func(q string) []string {
			var out []string
			for _, it := range e.Must(200, "GET", "/v1/subscriptions"+q, nil).Data()["items"].([]any) {
				out = append(out, it.(map[string]any)["subscriptionId"].(string))
			}
			return out
		}
		a, b := sa["subscriptionId"].(string), sb["subscriptionId"].(string)
		if got := ids(""); !slices.Equal(got, []string{b, a}) {
			t.Fatalf("list %v", got)
		}
		if got := ids("?customerId=a"); !slices.Equal(got, []string{a}) {
			t.Fatalf("by customer %v", got)
		}
		if got := ids("?status=active"); !slices.Equal(got, []string{b}) {
			t.Fatalf("active %v", got)
		}
		if got := ids("?status=paused&customerId=a"); !slices.Equal(got, []string{a}) {
			t.Fatalf("paused %v", got)
		}
		page := e.Must(200, "GET", "/v1/subscriptions?limit=1", nil).Data()
		if page["hasMore"] != true || len(page["items"].([]any)) != 1 {
			t.Fatalf("page %v", page)
		}
		next := e.Must(200, "GET", "/v1/subscriptions?limit=1&cursor="+page["nextCursor"].(string), nil).Data()
		if it := next["items"].([]any); len(it) != 1 || it[0].(map[string]any)["subscriptionId"] != a {
			t.Fatalf("second page %v", next)
		}
		if r := e.Do("GET", "/v1/subscriptions?status=ended", nil); r.Status != 422 || !hasField(r, "status") {
			t.Fatalf("bad status: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/v1/subscriptions/sub_nope", nil); r.Status != 404 {
			t.Fatalf("unknown: %d", r.Status)
		}
	})
}

// Cancel at period end: cancelAt is set, the renewal ends the subscription instead of renewing,
// and nothing more is billed; a canceled subscription cannot be canceled again.
func TestSubscriptionCancelAtPeriodEnd(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, start := k.subscribe("c", line("plan"))
		id := s["subscriptionId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "period_end"}).Data()
		if got["status"] != "active" || !ts(t, got["cancelAt"]).Equal(end) {
			t.Fatalf("after cancel at period end: %v", got)
		}
		advanceTo(e, start.Add(2*time.Hour))
		latest := k.sub(id)["latestInvoiceId"]
		advanceTo(e, end.Add(2*time.Hour))
		after := k.sub(id)
		if after["status"] != "canceled" || !ts(t, after["canceledAt"]).Equal(end) || after["cancelAt"] != nil || after["latestInvoiceId"] != latest {
			t.Fatalf("after the period: %v", after)
		}
		wantEvents(t, e, id, "subscription.created", "subscription.updated", "subscription.canceled")
		for _, body := range []map[string]any{{"at": "now"}, {"at": "period_end"}} {
			r := e.Do("POST", "/v1/subscriptions/"+id+"/cancel", body)
			if r.Status != 409 || r.ErrorDetails()["currentState"] != "canceled" {
				t.Fatalf("cancel a canceled subscription: %d %s", r.Status, r.Body)
			}
		}
		for _, path := range []string{"pause", "resume"} {
			if r := e.Do("POST", "/v1/subscriptions/"+id+"/"+path, map[string]any{}); r.Status != 409 {
				t.Fatalf("%s a canceled subscription: %d %s", path, r.Status, r.Body)
			}
		}
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "tomorrow", "prorate": "yes"}); r.Status != 422 ||
			!hasField(r, "at") || !hasField(r, "prorate") {
			t.Fatalf("bad cancel body: %d %s", r.Status, r.Body)
		}
	})
}

// Cancel now, prorated: the paid first invoice gets a credit note (reason subscription_canceled,
// bucket credit) for the unused share of the plan, which lands in the prepaid balance; nothing
// renews. Without prorate nothing is credited.
func TestSubscriptionCancelNowProrated(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		s, start := k.subscribe("c", line("plan"))
		id, inv := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		advanceTo(e, start.Add(time.Hour+time.Second))
		if st := k.invoice(inv)["status"]; st != "paid" {
			t.Fatalf("first invoice %v", st)
		}
		at := start.Add(10 * 24 * time.Hour)
		advanceTo(e, at)
		got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "now"}).Data()
		if got["status"] != "canceled" || got["canceledAt"] == nil {
			t.Fatalf("canceled: %v", got)
		}
		// 5000 × the unused share of the period, in whole seconds, rounded half-up (±1 for the
		// moment the request ran after the advance).
		want := (5000*int64(end.Sub(at)/time.Second)*2 + int64(end.Sub(start)/time.Second)) / (2 * int64(end.Sub(start)/time.Second))
		cn := k.creditNote(t, inv)
		if cn["reason"] != "subscription_canceled" || num(cn["creditAmount"]) < want-1 || num(cn["creditAmount"]) > want || num(cn["total"]) != num(cn["creditAmount"]) {
			t.Fatalf("credit note %v, want creditAmount %d", cn, want)
		}
		if l := cn["lines"].([]any)[0].(map[string]any); !strings.HasPrefix(l["description"].(string), "Unused time on Pro plan from ") {
			t.Fatalf("credit note line %v", l)
		}
		bal := e.Must(200, "GET", "/v1/customers/c/balance", nil).Data()["balances"].([]any)[0].(map[string]any)
		if num(bal["available"]) != num(cn["creditAmount"]) {
			t.Fatalf("balance %v", bal)
		}
		advanceTo(e, end.Add(2*time.Hour))
		if after := k.sub(id); after["status"] != "canceled" || after["latestInvoiceId"] != inv {
			t.Fatalf("after the period: %v", after)
		}
		wantEvents(t, e, id, "subscription.created", "subscription.canceled")

		// An open (unpaid) invoice is credited with an offset: less is due.
		k.customer("o", "")
		so, starto := k.subscribe("o", line("plan"))
		advanceTo(e, starto.Add(2*time.Hour))
		open := so["latestInvoiceId"].(string)
		before := num(k.invoice(open)["amountRemaining"])
		e.Must(200, "POST", "/v1/subscriptions/"+so["subscriptionId"].(string)+"/cancel", map[string]any{"at": "now"})
		ocn := k.creditNote(t, open)
		if num(ocn["offsetAmount"]) < 4900 || num(ocn["creditAmount"]) != 0 || num(k.invoice(open)["amountRemaining"]) != before-num(ocn["offsetAmount"]) {
			t.Fatalf("credit note on the open invoice %v (remaining before %d)", ocn, before)
		}

		// Without proration nothing is credited.
		k.customer("d", "pm_card_visa")
		s2, start2 := k.subscribe("d", line("plan"))
		advanceTo(e, start2.Add(2*time.Hour))
		e.Must(200, "POST", "/v1/subscriptions/"+s2["subscriptionId"].(string)+"/cancel", map[string]any{"at": "now", "prorate": false})
		if ids := k.creditNotes(s2["latestInvoiceId"].(string)); len(ids) != 0 {
			t.Fatalf("credit notes without proration: %v", ids)
		}
	})
}

// Canceled within the first hour, while the period's invoice is still a draft: the draft is
// revised to bill the time used, and finalizes as that.
func TestSubscriptionCancelNowRevisesTheDraft(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, start := k.subscribe("c", line("plan"), line("setup"))
		inv := s["latestInvoiceId"].(string)
		advanceTo(e, start.Add(30*time.Minute))
		e.Must(200, "POST", "/v1/subscriptions/"+s["subscriptionId"].(string)+"/cancel", map[string]any{"at": "now"})
		d := k.invoice(inv)
		if d["status"] != "draft" {
			t.Fatalf("draft %v", d["status"])
		}
		plan := d["lines"].([]any)[0].(map[string]any)
		// Half an hour of a month of 5000: 3 or 4 minor units.
		if !strings.HasPrefix(plan["description"].(string), "Used time on Pro plan from ") || num(plan["amount"]) > 4 || num(plan["amount"]) < 3 ||
			num(d["lines"].([]any)[1].(map[string]any)["amount"]) != 2500 {
			t.Fatalf("revised draft %v", d["lines"])
		}
		advanceTo(e, start.Add(2*time.Hour))
		if f := k.invoice(inv); f["status"] != "open" || num(f["total"]) != 2500+num(plan["amount"]) {
			t.Fatalf("finalized %v %v", f["status"], f["total"])
		}
	})
}

// Pause stops renewals; resume starts a new period now and bills it; each is refused from the
// wrong state.
func TestSubscriptionPauseResume(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, start := k.subscribe("c", line("plan"))
		id := s["subscriptionId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/resume", map[string]any{}); r.Status != 409 || r.ErrorDetails()["currentState"] != "active" {
			t.Fatalf("resume an active subscription: %d %s", r.Status, r.Body)
		}
		advanceTo(e, start.Add(2*time.Hour))
		p := e.Must(200, "POST", "/v1/subscriptions/"+id+"/pause", map[string]any{}).Data()
		if p["status"] != "paused" || p["pausedAt"] == nil {
			t.Fatalf("paused %v", p)
		}
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/pause", map[string]any{}); r.Status != 409 || r.ErrorDetails()["currentState"] != "paused" {
			t.Fatalf("pause twice: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "period_end"}); r.Status != 409 {
			t.Fatalf("cancel a paused subscription at period end: %d %s", r.Status, r.Body)
		}
		latest := p["latestInvoiceId"]
		advanceTo(e, end.Add(24*time.Hour))
		if got := k.sub(id); got["status"] != "paused" || got["latestInvoiceId"] != latest {
			t.Fatalf("a paused subscription renewed: %v", got)
		}
		resumedAt := end.Add(24 * time.Hour)
		r := e.Must(200, "POST", "/v1/subscriptions/"+id+"/resume", map[string]any{}).Data()
		if r["status"] != "active" || r["pausedAt"] != nil || r["latestInvoiceId"] == latest ||
			ts(t, r["currentPeriodStart"]).Sub(resumedAt) > time.Minute || ts(t, r["currentPeriodStart"]).Before(resumedAt) {
			t.Fatalf("resumed %v", r)
		}
		inv := k.invoice(r["latestInvoiceId"].(string))
		if inv["status"] != "draft" || num(inv["subtotal"]) != 5000 || !ts(t, inv["periodStart"]).Equal(ts(t, r["currentPeriodStart"])) {
			t.Fatalf("the resumed period's invoice %v", inv)
		}
		wantEvents(t, e, id, "subscription.created", "subscription.paused", "subscription.resumed")
	})
}

// A change with create_prorations on a paid period: the unused Pro time is credited on the paid
// invoice, the remaining Team time waits in pendingProrations and is billed on the next renewal
// invoice with the Team plan's next period.
func TestSubscriptionChangeCreatesProrations(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		s, start := k.subscribe("c", line("plan"), line("api-calls"))
		id, first := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		advanceTo(e, start.Add(5*24*time.Hour))
		got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{
			map[string]any{"priceId": "team"}, map[string]any{"priceId": "api-calls"}}}).Data()
		items := got["items"].([]any)
		if len(items) != 2 || items[0].(map[string]any)["priceId"] != "team" || num(items[0].(map[string]any)["unitAmount"]) != 9000 {
			t.Fatalf("items %v", items)
		}
		pending := got["pendingProrations"].([]any)
		if len(pending) != 1 {
			t.Fatalf("pending prorations %v", pending)
		}
		pp := pending[0].(map[string]any)
		if pp["priceId"] != "team" || !strings.HasPrefix(pp["description"].(string), "Remaining time on Team plan from ") || num(pp["amount"]) < 7000 || num(pp["amount"]) > 7600 {
			t.Fatalf("pending proration %v", pp)
		}
		cn := k.creditNote(t, first)
		if cn["reason"] != "order_change" || num(cn["creditAmount"]) < 4000 || num(cn["creditAmount"]) > 4300 {
			t.Fatalf("credit note %v", cn)
		}
		advanceTo(e, end.Add(time.Second))
		next := k.sub(id)
		if len(next["pendingProrations"].([]any)) != 0 {
			t.Fatalf("prorations still pending after the renewal: %v", next["pendingProrations"])
		}
		inv := k.invoice(next["latestInvoiceId"].(string))
		var descs []string
		var amounts []int64
		for _, l := range inv["lines"].([]any) {
			descs = append(descs, l.(map[string]any)["description"].(string))
			amounts = append(amounts, num(l.(map[string]any)["amount"]))
		}
		if len(descs) != 3 || descs[0] != "Team plan" || amounts[0] != 9000 || descs[2] != pp["description"] || amounts[2] != num(pp["amount"]) {
			t.Fatalf("renewal invoice lines %v %v", descs, amounts)
		}
		wantEvents(t, e, id, "subscription.created", "subscription.updated", "subscription.renewed")
	})
}

// always_invoice bills the remaining time at once; none prorates nothing; a change within the
// first hour revises the period's draft.
func TestSubscriptionChangeBehaviors(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		s, start := k.subscribe("c", line("plan"))
		id, first := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		advanceTo(e, start.Add(5*24*time.Hour))
		got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}},
			"prorationBehavior": "always_invoice"}).Data()
		if got["latestInvoiceId"] != first || len(got["pendingProrations"].([]any)) != 0 {
			t.Fatalf("always_invoice: %v", got)
		}
		var prorationInvoice map[string]any
		for _, it := range e.Must(200, "GET", "/v1/payment-receipts?customerId=c", nil).Data()["items"].([]any) {
			inv := k.invoice(it.(map[string]any)["invoiceId"].(string))
			if inv["invoiceId"] != first {
				prorationInvoice = inv
			}
		}
		if prorationInvoice == nil || prorationInvoice["status"] != "paid" || prorationInvoice["subscriptionId"] != id ||
			!strings.HasPrefix(prorationInvoice["lines"].([]any)[0].(map[string]any)["description"].(string), "Remaining time on Team plan") {
			t.Fatalf("the proration invoice %v", prorationInvoice)
		}

		got = e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "plan", "quantity": 2}},
			"prorationBehavior": "none"}).Data()
		if len(got["pendingProrations"].([]any)) != 0 || num(got["items"].([]any)[0].(map[string]any)["quantity"]) != 2 {
			t.Fatalf("none: %v", got)
		}
		if ids := k.creditNotes(first); len(ids) != 1 {
			t.Fatalf("none credited something: %v", ids)
		}

		// Within the first hour the draft is revised instead.
		k.customer("d", "")
		s2, start2 := k.subscribe("d", line("plan"))
		advanceTo(e, start2.Add(30*time.Minute))
		e.Must(200, "POST", "/v1/subscriptions/"+s2["subscriptionId"].(string)+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}})
		d := k.invoice(s2["latestInvoiceId"].(string))
		lines := d["lines"].([]any)
		if d["status"] != "draft" || len(lines) != 2 || !strings.HasPrefix(lines[0].(map[string]any)["description"].(string), "Used time on Pro plan") ||
			!strings.HasPrefix(lines[1].(map[string]any)["description"].(string), "Remaining time on Team plan") || num(lines[1].(map[string]any)["amount"]) < 8980 {
			t.Fatalf("revised draft %v", lines)
		}
	})
}

// A change's bad input: every problem listed; unknown prices 404; paused subscriptions 409.
func TestSubscriptionChangeValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, _ := k.subscribe("c", line("plan"))
		path := "/v1/subscriptions/" + s["subscriptionId"].(string) + "/change"
		r := e.Do("POST", path, map[string]any{"items": []any{map[string]any{"priceId": "plan"}, map[string]any{"priceId": "plan"}}, "prorationBehavior": "sometimes"})
		if r.Status != 422 || !hasField(r, "prorationBehavior") || !hasField(r, "items[1].priceId") {
			t.Fatalf("duplicate and behavior: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", path, map[string]any{"items": []any{}}); r.Status != 422 || !hasField(r, "items") {
			t.Fatalf("no items: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", path, map[string]any{"items": []any{map[string]any{"priceId": "team-eur"}, map[string]any{"priceId": "plan-annual"},
			map[string]any{"priceId": "setup"}, map[string]any{"priceId": "api-calls", "quantity": 3}}})
		for _, f := range []string{"items[0].priceId", "items[1].priceId", "items[2].priceId", "items[3].quantity"} {
			if !hasField(r, f) {
				t.Fatalf("422 lacks %s: %d %s", f, r.Status, r.Body)
			}
		}
		if r := e.Do("POST", path, map[string]any{"items": []any{map[string]any{"priceId": "nope"}}}); r.Status != 404 {
			t.Fatalf("unknown price: %d %s", r.Status, r.Body)
		}
		e.Must(200, "POST", "/v1/subscriptions/"+s["subscriptionId"].(string)+"/pause", map[string]any{})
		if r := e.Do("POST", path, map[string]any{"items": []any{map[string]any{"priceId": "team"}}}); r.Status != 409 || r.ErrorDetails()["currentState"] != "paused" {
			t.Fatalf("change a paused subscription: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/v1/subscriptions/sub_nope/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}}); r.Status != 404 {
			t.Fatalf("unknown subscription: %d", r.Status)
		}
	})
}

// A trial: trialing with trialEnd, the first invoice bills the plan at 0, trial_ending three days
// before its end, and the first paid period starts at the trial's end. trialDays is refused where
// it means nothing.
func TestSubscriptionTrial(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, start := k.subscribe("c", line("plan", "trialDays", 14), line("setup"))
		id := s["subscriptionId"].(string)
		trialEnd := start.Add(14 * 24 * time.Hour)
		if s["status"] != "trialing" || !ts(t, s["trialEnd"]).Equal(trialEnd) || !ts(t, s["currentPeriodEnd"]).Equal(trialEnd) {
			t.Fatalf("trialing %v", s)
		}
		first := k.invoice(s["latestInvoiceId"].(string))
		if num(first["subtotal"]) != 2500 || num(first["lines"].([]any)[0].(map[string]any)["amount"]) != 0 {
			t.Fatalf("first invoice %v", first["lines"])
		}
		advanceTo(e, trialEnd.Add(-72*time.Hour-time.Second))
		wantEvents(t, e, id, "subscription.created")
		advanceTo(e, trialEnd.Add(-72*time.Hour+time.Second))
		wantEvents(t, e, id, "subscription.created", "subscription.trial_ending")
		advanceTo(e, trialEnd.Add(time.Second))
		after := k.sub(id)
		if after["status"] != "active" || !ts(t, after["currentPeriodStart"]).Equal(trialEnd) ||
			!ts(t, after["currentPeriodEnd"]).Equal(ts(t, after["billingCycleAnchor"]).AddDate(0, 1, 0)) || !ts(t, after["billingCycleAnchor"]).Equal(trialEnd) {
			t.Fatalf("after the trial %v", after)
		}
		if inv := k.invoice(after["latestInvoiceId"].(string)); num(inv["subtotal"]) != 5000 {
			t.Fatalf("first paid invoice %v", inv["subtotal"])
		}
		r := e.Do("POST", "/v1/quotes", quoteBody("one_off", "c", line("setup", "trialDays", 3)))
		if r.Status != 422 || !hasField(r, "lines[0].trialDays") {
			t.Fatalf("trialDays on a one_off quote: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/v1/quotes", quoteBody("subscription_creation", "c", line("plan"), line("setup", "trialDays", 3)))
		if r.Status != 422 || !hasField(r, "lines[1].trialDays") {
			t.Fatalf("trialDays on a one-time line: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/v1/quotes", quoteBody("subscription_creation", "c", line("plan", "trialDays", 731))); r.Status != 422 {
			t.Fatalf("trialDays 731: %d %s", r.Status, r.Body)
		}
	})
}

// A failed automatic charge makes the subscription past_due; paying the invoice makes it active.
func TestSubscriptionPastDue(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_chargeDeclined")
		s, start := k.subscribe("c", line("plan"))
		id, inv := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		advanceTo(e, start.Add(time.Hour+time.Second))
		if got := k.sub(id); got["status"] != "past_due" {
			t.Fatalf("after a declined charge: %v", got["status"])
		}
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/pause", map[string]any{}); r.Status != 409 || r.ErrorDetails()["currentState"] != "past_due" {
			t.Fatalf("pause a past_due subscription: %d %s", r.Status, r.Body)
		}
		k.attach("c", "pm_card_visa") // a new card charges the open invoice at once
		if st := k.invoice(inv)["status"]; st != "paid" {
			t.Fatalf("invoice after a new card: %v", st)
		}
		if got := k.sub(id); got["status"] != "active" {
			t.Fatalf("after paying: %v", got["status"])
		}
		wantEvents(t, e, id, "subscription.created", "subscription.past_due", "subscription.updated")
	})
}

// A change and the renewal falling due at the same moment, and two changes at once: each runs
// after the other, and the period is billed once.
func TestSubscriptionChangeRacesRenewal(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "")
		s, start := k.subscribe("c", line("plan"))
		id := s["subscriptionId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		advanceTo(e, start.Add(2*time.Hour))
		advanceTo(e, end.Add(-time.Second))
		var wg sync.WaitGroup
		statuses, bodies := make([]int, 2), make([]string, 2)
		wg.Add(3)
		go func() { defer wg.Done(); advanceTo(e, end.Add(time.Second)) }()
		for i, price := range []string{"team", "plan"} {
			go func() {
				defer wg.Done()
				qty := i + 2
				r := e.Do("POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": price, "quantity": qty}}})
				statuses[i], bodies[i] = r.Status, string(r.Body)
			}()
		}
		wg.Wait()
		if statuses[0] != 200 || statuses[1] != 200 {
			t.Fatalf("changes %v %v\n%s", statuses, bodies, e.Logs.String())
		}
		if got := renewedInvoices(t, e, id); len(got) != 1 {
			t.Fatalf("renewals %v", got)
		}
		after := k.sub(id)
		if !ts(t, after["currentPeriodStart"]).Equal(end) || len(after["items"].([]any)) != 1 {
			t.Fatalf("after the race %v", after)
		}
	})
}

// Two changes in one paid period: the second cuts the first's pending charge at its own moment
// instead of crediting time never billed; a cancel now bills what is left pending at once.
func TestSubscriptionChangeTwiceThenCancel(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c", "pm_card_visa")
		s, start := k.subscribe("c", line("plan"))
		id, first := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		end := ts(t, s["currentPeriodEnd"])
		period := end.Sub(start)
		advanceTo(e, start.Add(period/4))
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}})
		advanceTo(e, start.Add(period/2))
		got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "plan"}}}).Data()
		pending := got["pendingProrations"].([]any)
		if len(pending) != 2 {
			t.Fatalf("pending %v", pending)
		}
		team, plan := pending[0].(map[string]any), pending[1].(map[string]any)
		// Team for a quarter of the period (2,250), Pro for the second half (2,500), ±1 for the
		// moments the requests ran after the advances.
		if team["priceId"] != "team" || num(team["amount"]) < 2249 || num(team["amount"]) > 2251 || !ts(t, team["periodEnd"]).After(start.Add(period/2-time.Minute)) ||
			plan["priceId"] != "plan" || num(plan["amount"]) < 2499 || num(plan["amount"]) > 2501 {
			t.Fatalf("pending %v", pending)
		}
		if ids := k.creditNotes(first); len(ids) != 1 {
			t.Fatalf("credit notes %v: the second change credited time never billed", ids)
		}
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/cancel", map[string]any{"at": "now"})
		after := k.sub(id)
		if after["status"] != "canceled" || len(after["pendingProrations"].([]any)) != 0 || after["latestInvoiceId"] != first {
			t.Fatalf("canceled %v", after)
		}
		// Nothing more is credited (the Pro time after the second change was never billed on the
		// first invoice's line beyond what the first change gave back), and the team quarter is
		// billed at once on an invoice of its own, which the prepaid balance (the first credit)
		// pays: available = first credit − 2,250.
		cn := k.creditNote(t, first)
		bal := e.Must(200, "GET", "/v1/customers/c/balance", nil).Data()["balances"].([]any)[0].(map[string]any)
		if left := num(cn["creditAmount"]) - num(bal["available"]); left < 2249 || left > 2251 {
			t.Fatalf("credit %v, balance %v: billed at the cancel %d", cn["creditAmount"], bal, left)
		}
	})
}

// Issue 44, finding 1: a proration of a price priced by tiers or packages bills the prorated
// amount, and the subscription keeps renewing. Before the fix the renewal job failed on the
// pending proration's line ("priced by tiers or packages; leave unitAmount out"), was marked
// failed and the subscription's period never moved; always_invoice and a prorated cancel answered
// 422 on lines[0].unitAmount, a field the caller never sent.
func TestTieredSubscriptionProrations(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "seats-grad", "productId": "seats", "name": "Seats", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "tiersMode": "graduated",
			"tiers": []any{map[string]any{"upTo": 2, "unitAmount": 1000}, map[string]any{"upTo": nil, "unitAmount": 700}}})
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "seats-vol", "productId": "seats", "name": "Seats (volume)", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "tiersMode": "volume",
			"tiers": []any{map[string]any{"upTo": 2, "unitAmount": 1000}, map[string]any{"upTo": nil, "unitAmount": 700, "flatAmount": 100}}})
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "seats-pack", "productId": "seats", "name": "Seat packs", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 2500, "transformQuantity": map[string]any{"divideBy": 5, "round": "up"}})

		for _, price := range []string{"seats-grad", "seats-vol", "seats-pack"} {
			func() { // create_prorations, then the renewal
				cust := "c-" + price
				k.customer(cust, "pm_card_visa")
				s, start := k.subscribe(cust, line(price, "quantity", 2))
				id := s["subscriptionId"].(string)
				end := ts(t, s["currentPeriodEnd"])
				advanceTo(e, start.Add(2*time.Hour))
				got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{
					map[string]any{"priceId": price, "quantity": 7}}, "prorationBehavior": "create_prorations"}).Data()
				pending := got["pendingProrations"].([]any)
				if len(pending) != 1 || num(pending[0].(map[string]any)["amount"]) <= 0 {
					t.Fatalf("pending prorations %v", pending)
				}
				advanceTo(e, end.Add(time.Second))
				next := k.sub(id)
				if !ts(t, next["currentPeriodStart"]).Equal(end) || len(next["pendingProrations"].([]any)) != 0 {
					t.Fatalf("the subscription did not renew: %v", next)
				}
				inv := k.invoice(next["latestInvoiceId"].(string))
				amounts := lineFigures(inv, "amount")
				if len(amounts) != 2 || amounts[1] != num(pending[0].(map[string]any)["amount"]) {
					t.Fatalf("renewal lines %v, pending %v", amounts, pending)
				}
				if failed := e.Do("GET", "/v1/jobs?status=failed", nil); failed.Status == 200 && len(failed.Data()["items"].([]any)) != 0 {
					t.Fatalf("failed jobs: %v", failed.Data())
				}
			}()
		}

		func() { // always_invoice
			k.customer("ai", "pm_card_visa")
			s, start := k.subscribe("ai", line("seats-grad", "quantity", 2))
			advanceTo(e, start.Add(2*time.Hour))
			e.Must(200, "POST", "/v1/subscriptions/"+s["subscriptionId"].(string)+"/change", map[string]any{"items": []any{
				map[string]any{"priceId": "seats-grad", "quantity": 3}}, "prorationBehavior": "always_invoice"})
		}()
		func() { // cancel now, prorated
			k.customer("cn", "pm_card_visa")
			s, start := k.subscribe("cn", line("seats-vol", "quantity", 3))
			advanceTo(e, start.Add(2*time.Hour))
			got := e.Must(200, "POST", "/v1/subscriptions/"+s["subscriptionId"].(string)+"/cancel", map[string]any{"at": "now", "prorate": true}).Data()
			if got["status"] != "canceled" {
				t.Fatalf("cancel: %v", got)
			}
			cn := k.creditNote(t, s["latestInvoiceId"].(string))
			// 3 seats by volume: 3 × 700 + 100 = 2200 for the month; all but two hours come back.
			if c := num(cn["creditAmount"]); c < 2190 || c > 2200 {
				t.Fatalf("credit note %v", cn)
			}
		}()
	})
}
