package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// runMigration creates a price migration (202) and runs its batches (the sandbox clock advanced a
// second: the batch jobs are due), then answers it as GET shows it.
func runMigration(t *testing.T, e *testkit.Env, body map[string]any) map[string]any {
	t.Helper()
	pm := e.Must(202, "POST", "/v1/price-migrations", body).Data()
	id, _ := pm["migrationId"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := e.Must(200, "GET", "/v1/price-migrations/"+id, nil).Data()
		if got["status"] != "running" {
			if num(got["migrated"])+num(got["skipped"])+num(got["failed"]) != num(got["total"]) {
				t.Fatalf("counts do not add up: %v", got)
			}
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("migration %s still running: %v", id, got)
		}
		e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"seconds": 1})
	}
}

// TestPriceMigration: a migration next_renewal moves every live subscription on the price (a
// paused one at once, its items replaced), leaves this period's invoice and the items in force
// until the renewal, which bills the new price; a subscription on another price is not selected;
// a migration now changes the items at once and fails a subscription already on the new price;
// run again, the migration finds nothing left to move. The list pages and filters like the others.
func TestPriceMigration(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan-2027", "productId": "pro", "name": "Pro plan 2027",
			"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 6500})
		for _, c := range []string{"c1", "c2", "c3"} {
			k.customer(c, "")
		}
		s1, _ := k.subscribe("c1", line("plan"))
		s2, _ := k.subscribe("c2", line("plan"))
		s3, _ := k.subscribe("c3", line("team"))
		id1, id2, id3 := s1["subscriptionId"].(string), s2["subscriptionId"].(string), s3["subscriptionId"].(string)
		e.Must(200, "POST", "/v1/subscriptions/"+id2+"/pause", nil)
		first := s1["latestInvoiceId"].(string)
		firstTotal := num(k.invoice(first)["total"])

		pm := runMigration(t, e, map[string]any{"fromPriceId": "plan", "toPriceId": "plan-2027", "effective": "next_renewal"})
		if pm["status"] != "completed" || num(pm["total"]) != 2 || num(pm["migrated"]) != 2 || pm["completedAt"] == nil ||
			pm["effective"] != "next_renewal" || pm["prorationBehavior"] != "create_prorations" || len(pm["errors"].([]any)) != 0 {
			t.Fatalf("migration %v", pm)
		}
		a := k.sub(id1)
		pc, _ := a["pendingChange"].(map[string]any)
		if item(a["items"], 0)["priceId"] != "plan" || pc == nil || item(pc["items"], 0)["priceId"] != "plan-2027" ||
			num(item(pc["items"], 0)["unitAmount"]) != 6500 || a["latestInvoiceId"] != first {
			t.Fatalf("after the migration %v", a)
		}
		if got := num(k.invoice(first)["total"]); got != firstTotal {
			t.Fatalf("this period's invoice changed: %d, was %d", got, firstTotal)
		}
		if p := k.sub(id2); item(p["items"], 0)["priceId"] != "plan-2027" || p["status"] != "paused" {
			t.Fatalf("paused subscription %v", p)
		}
		if c := k.sub(id3); item(c["items"], 0)["priceId"] != "team" {
			t.Fatalf("a subscription on another price moved %v", c)
		}
		// The renewal bills the new price.
		advanceTo(e, ts(t, a["currentPeriodEnd"]).Add(time.Second))
		r := k.sub(id1)
		if item(r["items"], 0)["priceId"] != "plan-2027" || r["pendingChange"] != nil || r["latestInvoiceId"] == first {
			t.Fatalf("after the renewal %v", r)
		}
		if inv := k.invoice(r["latestInvoiceId"].(string)); num(inv["subtotal"]) != 6500 {
			t.Fatalf("renewal invoice subtotal %v, want 6500", inv["subtotal"])
		}
		// Effective now: the items change at once (prorationBehavior none: nothing billed); a
		// subscription already on the new price fails, with its error listed.
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team-2027", "productId": "team", "name": "Team plan 2027",
			"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 9500})
		k.customer("c5", "")
		s5, _ := k.subscribe("c5", line("team"), line("team-2027"))
		now := runMigration(t, e, map[string]any{"fromPriceId": "team", "toPriceId": "team-2027", "effective": "now", "prorationBehavior": "none"})
		errs, _ := now["errors"].([]any)
		if num(now["migrated"]) != 1 || num(now["failed"]) != 1 || len(errs) != 1 || errs[0].(map[string]any)["subscriptionId"] != s5["subscriptionId"] ||
			errs[0].(map[string]any)["code"] != "duplicate_item" {
			t.Fatalf("migration now %v", now)
		}
		if c := k.sub(id3); item(c["items"], 0)["priceId"] != "team-2027" || c["pendingChange"] != nil || len(c["pendingProrations"].([]any)) != 0 {
			t.Fatalf("after a migration now %v", c)
		}
		// Nothing is left on the price: the next migration selects none and completes at once.
		again := e.Must(202, "POST", "/v1/price-migrations", map[string]any{"fromPriceId": "plan", "toPriceId": "plan-2027", "effective": "now"}).Data()
		if again["status"] != "completed" || num(again["total"]) != 0 {
			t.Fatalf("second migration %v", again)
		}
		list := e.Must(200, "GET", "/v1/price-migrations?limit=1", nil).Data()
		if items := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["migrationId"] != again["migrationId"] || list["hasMore"] != true {
			t.Fatalf("list %v", list)
		}
		e.Must(200, "GET", "/v1/price-migrations?status=completed&cursor="+list["nextCursor"].(string), nil)
		e.Must(422, "GET", "/v1/price-migrations?status=paused", nil)
		e.Must(404, "GET", "/v1/price-migrations/pmig_missing", nil)
		evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), e.Tenant.Sandbox, pm["migrationId"].(string))
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		if len(types) != 2 || types[0] != "price_migration.created" || types[1] != "price_migration.completed" {
			t.Fatalf("events %v", types)
		}
	})
}

func item(items any, i int) map[string]any {
	l, _ := items.([]any)
	if i >= len(l) {
		return map[string]any{}
	}
	m, _ := l[i].(map[string]any)
	return m
}

// TestPriceMigrationChecks: the two prices one currency and one interval, else 422 naming both
// fields for every mismatch; an unknown price 404 with its field; the same price twice, a bad
// effective, 422; an archived new price 409.
func TestPriceMigrationChecks(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		newLifecycleKit(t, e)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team-eur-year", "productId": "team", "name": "Team EUR yearly",
			"priceType": "fixed_recurring", "currency": "EUR", "billingInterval": "year", "unitAmount": 90000})
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "old-team", "productId": "team", "name": "Old team",
			"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 100})
		e.Must(200, "PATCH", "/v1/prices/old-team", map[string]any{"active": false})
		for _, c := range []struct {
			name   string
			body   map[string]any
			status int
			fields []string
		}{
			{"currency", map[string]any{"fromPriceId": "plan", "toPriceId": "team-eur", "effective": "now"}, 422,
				[]string{"fromPriceId:currency_mismatch", "toPriceId:currency_mismatch"}},
			{"interval", map[string]any{"fromPriceId": "plan", "toPriceId": "plan-annual", "effective": "next_renewal"}, 422,
				[]string{"fromPriceId:interval_mismatch", "toPriceId:interval_mismatch"}},
			{"both", map[string]any{"fromPriceId": "plan", "toPriceId": "team-eur-year", "effective": "now"}, 422,
				[]string{"fromPriceId:currency_mismatch", "toPriceId:currency_mismatch", "fromPriceId:interval_mismatch", "toPriceId:interval_mismatch"}},
			{"same price", map[string]any{"fromPriceId": "plan", "toPriceId": "plan", "effective": "now"}, 422, []string{"toPriceId:same_price"}},
			{"effective", map[string]any{"fromPriceId": "plan", "toPriceId": "team", "effective": "later"}, 422, []string{"effective"}},
			{"unknown", map[string]any{"fromPriceId": "plan", "toPriceId": "nope", "effective": "now"}, 404, nil},
			{"archived", map[string]any{"fromPriceId": "plan", "toPriceId": "old-team", "effective": "now"}, 409, nil},
		} {
			r := e.Do("POST", "/v1/price-migrations", c.body)
			if r.Status != c.status {
				t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
			}
			errBody, _ := r.JSON()["error"].(map[string]any)
			details, _ := errBody["details"].(map[string]any)
			if c.status == 404 && details["field"] != "toPriceId" {
				t.Fatalf("%s: %s", c.name, r.Body)
			}
			got := map[string]bool{}
			for _, f := range asList(details["fields"]) {
				fm := f.(map[string]any)
				got[fm["field"].(string)+":"+str(fm["reason"])] = true
				got[fm["field"].(string)] = true
			}
			for _, want := range c.fields {
				if !got[want] {
					t.Fatalf("%s: %s does not list %s", c.name, r.Body, want)
				}
			}
		}
	})
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
