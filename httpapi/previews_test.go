package httpapi_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// runFrozen runs fn on each store with the clock standing still but for the sandbox clock's
// advances, so that an action and its preview happen at the same moment.
func runFrozen(t *testing.T, fn func(t *testing.T, e *testkit.Env)) {
	t.Helper()
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			fn(t, testkit.Start(t, s, testkit.Options{Clock: remit.NewFixedClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))}))
		})
	}
}

// storeDigest hashes every row of every table (testkit.StoreDigest).
func storeDigest(t *testing.T, e *testkit.Env) map[string]string {
	t.Helper()
	return testkit.StoreDigest(t, e)
}

// unchanged fails when the store changed since before.
func unchanged(t *testing.T, e *testkit.Env, before map[string]string, what string) {
	t.Helper()
	after := storeDigest(t, e)
	for tb, d := range before {
		if after[tb] != d {
			t.Errorf("%s changed table %s: %s → %s", what, tb, d, after[tb])
		}
	}
}

// billed is what an invoice bills: its totals and each line's description, quantity and amount.
func billed(inv map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s subtotal=%d discount=%d tax=%d total=%d;", inv["currency"], num(inv["subtotal"]), num(inv["discountTotal"]),
		num(inv["taxTotal"]), num(inv["total"]))
	for _, l := range inv["lines"].([]any) {
		l := l.(map[string]any)
		fmt.Fprintf(&b, " [%s q=%d a=%d]", l["description"], num(l["quantity"]), num(l["amount"]))
	}
	return b.String()
}

// cnFigures are what a credit note credits.
func cnFigures(cn map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s total=%d credit=%d offset=%d;", cn["reason"], num(cn["total"]), num(cn["creditAmount"]), num(cn["offsetAmount"]))
	for _, l := range cn["lines"].([]any) {
		l := l.(map[string]any)
		fmt.Fprintf(&b, " [%s %d]", l["description"], num(l["amount"]))
	}
	return b.String()
}

// The upcoming invoice is the renewal's invoice, to the cent (fixed items in advance, usage so far
// in arrears, tax), and asking for it writes nothing.
func TestUpcomingInvoicePreview(t *testing.T) {
	runFrozen(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		customerAt(t, e, "c", "US", "TX", false) // taxed
		k.attach("c", "pm_card_visa")
		k.customer("d", "")
		s, start := k.subscribe("c", line("plan"), line("api-calls"))
		id, end := s["subscriptionId"].(string), ts(t, s["currentPeriodEnd"])
		advanceTo(e, start.Add(3*24*time.Hour))
		e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": "u1", "customerId": "c", "meterId": "api", "quantity": 1234,
			"timestamp": start.Add(2 * 24 * time.Hour).Format(time.RFC3339)})

		before := storeDigest(t, e)
		up := e.Must(200, "GET", "/v1/customers/c/upcoming-invoice?subscriptionId="+id, nil).Data()
		same := e.Must(200, "GET", "/v1/customers/c/upcoming-invoice", nil).Data() // the one subscription that renews
		unchanged(t, e, before, "the upcoming invoice")
		if billed(up) != billed(same) || up["status"] != "draft" || num(up["taxTotal"]) == 0 || len(up["lines"].([]any)) != 2 {
			t.Fatalf("upcoming %s / %s", billed(up), billed(same))
		}
		if _, err := e.App.DB.Read(context.Background()).GetInvoice(context.Background(), e.Tenant.Sandbox, up["invoiceId"].(string), store.Unlocked); err == nil {
			t.Fatalf("the preview's invoice %s is stored", up["invoiceId"])
		}

		e.Must(404, "GET", "/v1/customers/d/upcoming-invoice?subscriptionId="+id, nil) // another customer's
		e.Must(404, "GET", "/v1/customers/d/upcoming-invoice", nil)                    // none that renews
		e.Must(404, "GET", "/v1/customers/nobody/upcoming-invoice", nil)

		advanceTo(e, end.Add(time.Second))
		renewed := k.invoice(k.sub(id)["latestInvoiceId"].(string))
		if billed(renewed) != billed(up) {
			t.Fatalf("renewal billed %s, the preview said %s", billed(renewed), billed(up))
		}

		e.Must(200, "POST", "/v1/subscriptions/"+id+"/pause", map[string]any{})
		r := e.Must(409, "GET", "/v1/customers/c/upcoming-invoice?subscriptionId="+id, nil)
		if r.ErrorDetails()["currentState"] != "paused" {
			t.Fatalf("paused: %s", r.Body)
		}
	})
}

// A change's preview is what the change then makes, to the cent, for each place a proration lands
// (a credit note and pending charges; an invoice of the charges at once; the period's draft
// revised), and the preview writes nothing.
func TestSubscriptionChangePreview(t *testing.T) {
	runFrozen(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		for _, c := range []struct {
			name, behavior string
			after          time.Duration
		}{
			{"create_prorations", "create_prorations", 5 * 24 * time.Hour},
			{"always_invoice", "always_invoice", 5 * 24 * time.Hour},
			{"draft", "", 30 * time.Minute},
		} {
			t.Run(c.name, func(t *testing.T) {
				cust := "c-" + c.name
				customerAt(t, e, cust, "US", "TX", false)
				k.attach(cust, "pm_card_visa")
				s, start := k.subscribe(cust, line("plan"), line("api-calls"))
				id := s["subscriptionId"].(string)
				advanceTo(e, start.Add(c.after))
				body := map[string]any{"items": []any{map[string]any{"priceId": "team"}, map[string]any{"priceId": "api-calls"}}}
				if c.behavior != "" {
					body["prorationBehavior"] = c.behavior
				}
				before := storeDigest(t, e)
				pv := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change/preview", body).Data()
				unchanged(t, e, before, "the change's preview")
				if len(pv["prorations"].([]any)) != 2 {
					t.Fatalf("prorations %v", pv["prorations"])
				}

				invoicesBefore := customerInvoices(t, e, cust)
				got := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", body).Data()
				if maps.Equal(storeDigest(t, e), before) {
					t.Fatal("the digest does not see the change itself")
				}
				if fmt.Sprint(got["items"], got["pendingProrations"]) != fmt.Sprint(pv["subscription"].(map[string]any)["items"], pv["subscription"].(map[string]any)["pendingProrations"]) {
					t.Fatalf("subscription %v, preview %v", got, pv["subscription"])
				}
				var made []string
				for _, inv := range customerInvoices(t, e, cust) {
					if old, ok := invoicesBefore[inv["invoiceId"].(string)]; !ok || billed(old) != billed(inv) {
						made = append(made, billed(inv))
					}
				}
				var previewed []string
				for _, inv := range pv["invoices"].([]any) {
					previewed = append(previewed, billed(inv.(map[string]any)))
				}
				slices.Sort(made)
				slices.Sort(previewed)
				if !slices.Equal(made, previewed) {
					t.Fatalf("the change made or revised %v, the preview said %v", made, previewed)
				}
				var credited, previewedCN []string
				for _, cn := range customerCreditNotes(t, e, cust) {
					credited = append(credited, cnFigures(cn))
				}
				for _, cn := range pv["creditNotes"].([]any) {
					previewedCN = append(previewedCN, cnFigures(cn.(map[string]any)))
				}
				if !slices.Equal(credited, previewedCN) {
					t.Fatalf("the change credited %v, the preview said %v", credited, previewedCN)
				}
				if c.name == "create_prorations" && (len(credited) != 1 || len(got["pendingProrations"].([]any)) != 1) {
					t.Fatalf("create_prorations: credit notes %v, pending %v", credited, got["pendingProrations"])
				}
				if c.name != "create_prorations" && len(made) != 1 {
					t.Fatalf("%s: invoices %v", c.name, made)
				}
				end := ts(t, got["currentPeriodEnd"])
				advanceTo(e, end.Add(time.Second))
				renewed := k.invoice(k.sub(id)["latestInvoiceId"].(string))
				if billed(renewed) != billed(pv["upcomingInvoice"].(map[string]any)) {
					t.Fatalf("the renewal after the change billed %s, the preview said %s", billed(renewed), billed(pv["upcomingInvoice"].(map[string]any)))
				}
			})
		}
		// Errors are the change's own; a preview takes no Idempotency-Key's memory.
		e.Must(404, "POST", "/v1/subscriptions/sub_nothing/change/preview", map[string]any{"items": []any{map[string]any{"priceId": "team"}}})
		r := e.Must(422, "POST", "/v1/subscriptions/sub_nothing/change/preview", map[string]any{"items": []any{}})
		if len(r.FieldErrors()) == 0 {
			t.Fatalf("422 without fields: %s", r.Body)
		}
	})
}

func customerInvoices(t *testing.T, e *testkit.Env, cust string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, it := range e.Must(200, "GET", "/v1/invoices?limit=100&customerId="+cust, nil).Data()["items"].([]any) {
		inv := it.(map[string]any)
		out[inv["invoiceId"].(string)] = inv
	}
	return out
}

func customerCreditNotes(t *testing.T, e *testkit.Env, cust string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range e.Must(200, "GET", "/v1/credit-notes?limit=100&customerId="+cust, nil).Data()["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}
