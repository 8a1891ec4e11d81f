package httpapi_test

import (
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestChangeAtNextRenewal: a change effective next_renewal keeps the items and this period's
// invoice, shows pendingChange, and the renewal bills the new price; DELETE pending-change drops
// one; an immediate change replaces one waiting; entitlements move at the renewal.
func TestChangeAtNextRenewal(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newEntitlementKit(t, e)
		k.customer("c", "")
		s, _ := k.subscribe("c", line("plan"))
		id, first := s["subscriptionId"].(string), s["latestInvoiceId"].(string)
		if s["pendingChange"] != nil {
			t.Fatalf("pendingChange at start %v", s["pendingChange"])
		}
		firstTotal := num(k.invoice(first)["total"])
		r := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}, "effective": "next_renewal"}).Data()
		pc, _ := r["pendingChange"].(map[string]any)
		if pc == nil || pc["effectiveAt"] != s["currentPeriodEnd"] || r["items"].([]any)[0].(map[string]any)["priceId"] != "plan" ||
			pc["items"].([]any)[0].(map[string]any)["priceId"] != "team" || len(r["pendingProrations"].([]any)) != 0 {
			t.Fatalf("after a next_renewal change: %v", r)
		}
		if got := k.ent("c", "tier"); got["value"] != "gold" {
			t.Fatalf("entitlements moved before the renewal: %v", got)
		}
		if inv := k.invoice(first); num(inv["total"]) != firstTotal || r["latestInvoiceId"] != first {
			t.Fatalf("this period's invoice changed: %v", inv["total"])
		}
		// Dropped, then set again; an invalid effective is 422.
		if d := e.Must(200, "DELETE", "/v1/subscriptions/"+id+"/pending-change", nil).Data(); d["pendingChange"] != nil || d["pendingItems"] != nil {
			t.Fatalf("after DELETE %v", d)
		}
		e.Must(404, "DELETE", "/v1/subscriptions/"+id+"/pending-change", nil)
		if r := e.Do("POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}, "effective": "later"}); r.Status != 422 {
			t.Fatalf("effective later: %d", r.Status)
		}
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team"}}, "effective": "next_renewal"})
		// The renewal bills the new price and puts it in force.
		advanceTo(e, ts(t, s["currentPeriodEnd"]).Add(time.Second))
		after := k.sub(id)
		if after["pendingChange"] != nil || after["items"].([]any)[0].(map[string]any)["priceId"] != "team" || after["latestInvoiceId"] == first {
			t.Fatalf("after the renewal %v", after)
		}
		if inv := k.invoice(after["latestInvoiceId"].(string)); num(inv["subtotal"]) != 9000 {
			t.Fatalf("renewal invoice %v", inv["subtotal"])
		}
		if got := k.ent("c", "tier"); got["value"] != "silver" {
			t.Fatalf("entitlements after the renewal: %v", got)
		}
		// A change now replaces one waiting.
		e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "plan"}}, "effective": "next_renewal"})
		now := e.Must(200, "POST", "/v1/subscriptions/"+id+"/change", map[string]any{"items": []any{map[string]any{"priceId": "plan"}}, "prorationBehavior": "none"}).Data()
		if now["pendingChange"] != nil {
			t.Fatalf("pending change after a change now %v", now["pendingChange"])
		}
	})
}
