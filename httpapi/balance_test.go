package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

func (k catalogKit) grant(customerID string, body map[string]any) map[string]any {
	k.t.Helper()
	return k.e.Must(201, "POST", "/v1/customers/"+customerID+"/balance/grant", body).Data()
}

func (k catalogKit) balance(customerID string, opts ...testkit.Opt) (map[string]map[string]int64, []map[string]any) {
	k.t.Helper()
	d := k.e.Must(200, "GET", "/v1/customers/"+customerID+"/balance", nil, opts...).Data()
	if d["object"] != "customer_balance" || d["customerId"] != customerID {
		k.t.Fatalf("balance: %v", d)
	}
	bal := map[string]map[string]int64{}
	for _, b := range d["balances"].([]any) {
		m := b.(map[string]any)
		bal[m["currency"].(string)] = map[string]int64{"available": num(m["available"]), "pending": num(m["pending"])}
	}
	var entries []map[string]any
	for _, x := range d["entries"].([]any) {
		entries = append(entries, x.(map[string]any))
	}
	return bal, entries
}

func (k catalogKit) clockNow() time.Time {
	k.t.Helper()
	d := k.e.Must(200, "GET", "/v1/test-helpers/clock", nil).Data()
	t, err := time.Parse(time.RFC3339Nano, d["now"].(string))
	if err != nil {
		k.t.Fatal(err)
	}
	return t
}

func entryByID(entries []map[string]any, id string) map[string]any {
	for _, e := range entries {
		if e["entryId"] == id {
			return e
		}
	}
	return nil
}

func TestBalanceGrantAndExpireBounds(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.customer("c2")
		grant := "/v1/customers/c1/balance/grant"
		expire := "/v1/customers/c1/balance/expire"
		now := k.clockNow()

		// The seed's section 8 bounds and the contract's shapes.
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 0}), "body:amount:out_of_range")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": -5}), "body:amount:out_of_range")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD"}), "body:amount:required")
		wantFields(t, e.Do("POST", grant, map[string]any{"amount": 5}), "body:currency:required")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"lineTypes": []string{}}}),
			"body:targets.lineTypes:invalid_count")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"priceIds": []string{}, "meterIds": []string{}}}),
			"body:targets.priceIds:invalid_count", "body:targets.meterIds:invalid_count")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"lineTypes": []string{"tax"}}}),
			"body:targets.lineTypes[0]:invalid_enum")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"customers": []string{"x"}}}),
			"body:targets.customers:unknown_field")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "usd", "amount": 5}), "body:currency:invalid_currency")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "effectiveAt": "tomorrow"}), "body:effectiveAt:invalid_format")
		// expiresAt must be later than effectiveAt (and in the future).
		at := now.Add(48 * time.Hour)
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "effectiveAt": at, "expiresAt": at}), "body:expiresAt:not_after_effective_at")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "effectiveAt": at, "expiresAt": at.Add(-time.Hour)}), "body:expiresAt:not_after_effective_at")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "expiresAt": now.Add(-time.Hour)}), "body:expiresAt:not_after_effective_at")
		wantFields(t, e.Do("POST", grant, map[string]any{"currency": "USD", "amount": 5, "effectiveAt": now.Add(-72 * time.Hour), "expiresAt": now.Add(-time.Hour)}), "body:expiresAt:not_in_future")

		// References: unknown customer, another merchant account's customer, unknown target price.
		e.Must(404, "POST", "/v1/customers/nope/balance/grant", map[string]any{"currency": "USD", "amount": 5})
		// Both unknown: the customer is named (the entry's insert checks it before the prices).
		r0 := e.Must(404, "POST", "/v1/customers/nope/balance/grant", map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"priceIds": []string{"price_nope"}}})
		if _, ok := r0.ErrorDetails()["field"]; ok || !strings.Contains(string(r0.Body), "nope") || strings.Contains(string(r0.Body), "price_nope") {
			t.Fatalf("unknown customer and price: %s", r0.Body)
		}
		other := e.NewTenant("Other", false)
		e.Must(404, "POST", grant, map[string]any{"currency": "USD", "amount": 5}, testkit.As(other))
		e.Must(404, "GET", "/v1/customers/c1/balance", nil, testkit.As(other))
		r := e.Must(404, "POST", grant, map[string]any{"currency": "USD", "amount": 5, "targets": map[string]any{"priceIds": []string{"price_nope"}}})
		if r.ErrorDetails()["field"] != "targets.priceIds[0]" {
			t.Fatalf("unknown target price: %s", r.Body)
		}

		// A grant: 201, with remaining and targets.
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "api", "productId": "p", "name": "API", "priceType": "usage_metered",
			"currency": "USD", "meterId": "api_calls", "unitAmount": 1, "billingInterval": "month"})
		g := k.grant("c1", map[string]any{"entryId": "promo-1", "currency": "USD", "amount": 200, "description": "Launch",
			"targets": map[string]any{"lineTypes": []string{"usage"}, "priceIds": []string{"api"}}, "metadata": map[string]string{"campaign": "launch"}})
		if g["object"] != "balance_entry" || g["entryId"] != "promo-1" || g["type"] != "grant" || num(g["amount"]) != 200 ||
			num(g["remaining"]) != 200 || g["expiresAt"] != nil || g["customerId"] != "c1" ||
			fmt.Sprint(g["targets"]) != "map[lineTypes:[usage] priceIds:[api]]" {
			t.Fatalf("grant: %v", g)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, "promo-1"); !slices.Equal(ev, []string{"customer_balance.granted"}) {
			t.Fatalf("events %v", ev)
		}
		gen := k.grant("c1", map[string]any{"currency": "EUR", "amount": 1})
		if id, _ := gen["entryId"].(string); !strings.HasPrefix(id, "ble_") || gen["targets"] != nil {
			t.Fatalf("generated grant: %v", gen)
		}
		// entryId is unique within the customer: 409 for c1, free for c2.
		r = e.Must(409, "POST", grant, map[string]any{"entryId": "promo-1", "currency": "USD", "amount": 5})
		if r.ErrorDetails()["field"] != "entryId" {
			t.Fatalf("duplicate entry: %s", r.Body)
		}
		k.grant("c2", map[string]any{"entryId": "promo-1", "currency": "USD", "amount": 70})

		// Expire bounds.
		wantFields(t, e.Do("POST", expire, map[string]any{"sourceEntryId": "promo-1", "amount": 0}), "body:amount:out_of_range")
		wantFields(t, e.Do("POST", expire, map[string]any{"amount": 5}), "body:sourceEntryId:required")
		wantFields(t, e.Do("POST", expire, map[string]any{"sourceEntryId": "promo-1", "effectiveAt": now.Add(time.Hour)}), "body:effectiveAt:in_future")
		// Unknown source, another customer's, not a grant: 404 on sourceEntryId.
		r = e.Must(404, "POST", expire, map[string]any{"sourceEntryId": "nope"})
		if r.ErrorDetails()["field"] != "sourceEntryId" {
			t.Fatalf("unknown source: %s", r.Body)
		}
		c2Only := k.grant("c2", map[string]any{"currency": "USD", "amount": 5})
		e.Must(404, "POST", expire, map[string]any{"sourceEntryId": c2Only["entryId"]})
		// More than remains: 409 saying what is left.
		r = e.Must(409, "POST", expire, map[string]any{"sourceEntryId": "promo-1", "amount": 201})
		if d := r.ErrorDetails(); d["reason"] != "insufficient_remaining" || d["remaining"] != 200.0 || d["requested"] != 201.0 {
			t.Fatalf("too much: %s", r.Body)
		}
		x := e.Must(201, "POST", expire, map[string]any{"entryId": "claw-1", "sourceEntryId": "promo-1", "amount": 50, "description": "Clawback"}).Data()
		if x["type"] != "expiry" || num(x["amount"]) != -50 || x["sourceEntryId"] != "promo-1" || x["remaining"] != nil || x["currency"] != "USD" {
			t.Fatalf("expiry: %v", x)
		}
		notGrant := e.Must(404, "POST", expire, map[string]any{"sourceEntryId": "claw-1"})
		if notGrant.ErrorDetails()["field"] != "sourceEntryId" {
			t.Fatalf("expiry as source: %s", notGrant.Body)
		}
		// Expire what is left (the default), then again: the second is 409.
		rest := e.Must(201, "POST", expire, map[string]any{"sourceEntryId": "promo-1"}).Data()
		if num(rest["amount"]) != -150 {
			t.Fatalf("rest: %v", rest)
		}
		r = e.Must(409, "POST", expire, map[string]any{"sourceEntryId": "promo-1"})
		if d := r.ErrorDetails(); d["remaining"] != 0.0 || d["reason"] != "insufficient_remaining" {
			t.Fatalf("twice: %s", r.Body)
		}
		e.Must(409, "POST", expire, map[string]any{"sourceEntryId": "promo-1", "amount": 1})

		bal, entries := k.balance("c1")
		if fmt.Sprint(bal) != "map[EUR:map[available:1 pending:0] USD:map[available:0 pending:0]]" {
			t.Fatalf("balances %v", bal)
		}
		var ids []string
		for _, en := range entries {
			ids = append(ids, en["entryId"].(string))
		}
		if want := []string{rest["entryId"].(string), "claw-1", gen["entryId"].(string), "promo-1"}; !slices.Equal(ids, want) {
			t.Fatalf("entries %v, want newest first %v", ids, want)
		}
		if num(entryByID(entries, "promo-1")["remaining"]) != 0 {
			t.Fatalf("grant remaining: %v", entryByID(entries, "promo-1"))
		}
		bal2, _ := k.balance("c2")
		if bal2["USD"]["available"] != 75 {
			t.Fatalf("c2 %v", bal2)
		}
		// A retried grant with its Idempotency-Key grants once.
		body := map[string]any{"currency": "USD", "amount": 25}
		first := e.Must(201, "POST", "/v1/customers/c2/balance/grant", body, testkit.Key("grant-once"))
		again := e.Must(201, "POST", "/v1/customers/c2/balance/grant", body, testkit.Key("grant-once"))
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Fatalf("replay: %s", again.Body)
		}
		if bal2, _ = k.balance("c2"); bal2["USD"]["available"] != 100 {
			t.Fatalf("after a replayed grant: %v", bal2)
		}
	})
}

func TestBalanceGrantBecomesEffectiveAndExpiresByItself(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		now := k.clockNow()
		effective := now.Add(2 * time.Hour)
		expires := now.Add(5 * time.Hour)
		k.grant("c1", map[string]any{"entryId": "future", "currency": "USD", "amount": 300, "effectiveAt": effective, "expiresAt": expires})
		k.grant("c1", map[string]any{"entryId": "soon", "currency": "USD", "amount": 500, "expiresAt": now.Add(time.Hour)})
		e.Must(201, "POST", "/v1/customers/c1/balance/expire", map[string]any{"sourceEntryId": "soon", "amount": 100})

		check := func(step string, available, pending int64) []map[string]any {
			t.Helper()
			bal, entries := k.balance("c1")
			if got := bal["USD"]; got["available"] != available || got["pending"] != pending {
				t.Fatalf("%s: balance %v, want available %d pending %d", step, got, available, pending)
			}
			return entries
		}
		check("start", 400, 300)
		e.AdvanceClock(30 * 60)
		check("+30m", 400, 300)
		// +1h01m: "soon" expired by itself, leaving an expiry entry for what remained (400).
		e.AdvanceClock(31 * 60)
		entries := check("+61m", 0, 300)
		if entries[0]["type"] != "expiry" || entries[0]["sourceEntryId"] != "soon" || num(entries[0]["amount"]) != -400 {
			t.Fatalf("expiry entry: %v", entries[0])
		}
		if at, _ := time.Parse(time.RFC3339Nano, entries[0]["effectiveAt"].(string)); !at.Equal(now.Add(time.Hour).Truncate(time.Microsecond)) {
			t.Fatalf("expiry effectiveAt %v, want the grant's expiresAt %v", at, now.Add(time.Hour))
		}
		if num(entryByID(entries, "soon")["remaining"]) != 0 {
			t.Fatalf("soon: %v", entryByID(entries, "soon"))
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, entries[0]["entryId"].(string)); !slices.Equal(ev, []string{"customer_balance.expired"}) {
			t.Fatalf("events %v", ev)
		}
		// "future" is pending until the clock passes its effectiveAt, then available.
		e.AdvanceClock(58 * 60)
		check("+1h59m", 0, 300)
		e.AdvanceClock(2 * 60)
		check("+2h01m", 300, 0)
		if ev := k.eventTypes(e.Tenant.Sandbox, "future"); !slices.Equal(ev, []string{"customer_balance.granted", "customer_balance.grant_effective"}) {
			t.Fatalf("events %v", ev)
		}
		// ... and expires by itself at its expiresAt.
		e.AdvanceClock(3 * 3600)
		entries = check("+5h01m", 0, 0)
		if entries[0]["type"] != "expiry" || entries[0]["sourceEntryId"] != "future" || num(entries[0]["amount"]) != -300 {
			t.Fatalf("expiry entry: %v", entries[0])
		}
		// A grant already expired to the end by hand leaves nothing for its job to do.
		k.grant("c1", map[string]any{"entryId": "manual", "currency": "USD", "amount": 10, "expiresAt": k.clockNow().Add(time.Hour)})
		e.Must(201, "POST", "/v1/customers/c1/balance/expire", map[string]any{"sourceEntryId": "manual"})
		before := len(check("manual", 0, 0))
		e.AdvanceClock(2 * 3600)
		if after := len(check("manual+2h", 0, 0)); after != before {
			t.Fatalf("the expiry job wrote an entry for an empty grant: %d -> %d entries", before, after)
		}
	})
}

func TestBalanceConcurrentExpires(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		k.customer("c1")
		k.grant("c1", map[string]any{"entryId": "g", "currency": "USD", "amount": 200})
		// Two servers on one store stand for two serve processes: the rule must not rely on memory
		// shared inside one process.
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{})
		servers := []*testkit.Env{e, e2}
		var wg sync.WaitGroup
		statuses := make([]int, 50)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = servers[i%2].Do("POST", "/v1/customers/c1/balance/expire", map[string]any{"sourceEntryId": "g", "amount": 10}, testkit.As(e.Tenant)).Status
			}()
		}
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[201] != 20 || count[409] != 30 {
			t.Fatalf("statuses %v, want 20 x 201 and 30 x 409", count)
		}
		bal, entries := k.balance("c1")
		if num(entryByID(entries, "g")["remaining"]) != 0 || bal["USD"]["available"] != 0 || len(entries) != 21 {
			t.Fatalf("after: %v, %d entries, grant %v", bal, len(entries), entryByID(entries, "g"))
		}
	})
}

// TestLedgerForInvoices exercises the functions the invoices area calls inside its transaction.
func TestLedgerForInvoices(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		ctx := context.Background()
		k.customer("c1")
		now := k.clockNow()
		k.grant("c1", map[string]any{"entryId": "late", "currency": "USD", "amount": 100, "expiresAt": now.Add(48 * time.Hour)})
		k.grant("c1", map[string]any{"entryId": "early", "currency": "USD", "amount": 50, "expiresAt": now.Add(24 * time.Hour), "targets": map[string]any{"lineTypes": []string{"usage"}}})
		k.grant("c1", map[string]any{"entryId": "pending", "currency": "USD", "amount": 70, "effectiveAt": now.Add(time.Hour)})
		k.grant("c1", map[string]any{"entryId": "eur", "currency": "EUR", "amount": 70})
		m, err := e.App.DB.Read(ctx).GetMerchantAccount(ctx, e.Tenant.Sandbox, store.Unlocked)
		if err != nil {
			t.Fatal(err)
		}
		scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
		at := e.App.Now(m)

		err = e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			top, err := e.App.Ledger.CreditBalance(ctx, tx, scope, "c1", remit.BalanceCredit{Kind: remit.EntryTopUp, Currency: "USD", Amount: 30, InvoiceID: "inv_1"}, at)
			if err != nil {
				return err
			}
			lots, err := e.App.Ledger.AvailableGrants(ctx, tx, scope, "c1", "USD", at)
			if err != nil {
				return err
			}
			var order []string
			for _, l := range lots {
				order = append(order, l.EntryID)
			}
			if want := []string{"early", "late", top.EntryID}; !slices.Equal(order, want) {
				return fmt.Errorf("spending order %v, want %v", order, want)
			}
			if !lots[0].Targets.Matches(remit.LineUsage, "p", "m") || lots[0].Targets.Matches(remit.LineRecurring, "p", "") || !lots[1].Targets.Matches(remit.LineOneTime, "", "") {
				return fmt.Errorf("targets %+v", lots[0].Targets)
			}
			if _, err := e.App.Ledger.ApplyBalance(ctx, tx, scope, "c1", "inv_2", "early", 50, at); err != nil {
				return err
			}
			if _, err := e.App.Ledger.ApplyBalance(ctx, tx, scope, "c1", "inv_2", "late", 101, at); remit.ErrorCode(err) != remit.EConflict {
				return fmt.Errorf("too much: %v", err)
			}
			if _, err := e.App.Ledger.ApplyBalance(ctx, tx, scope, "c1", "inv_2", "pending", 1, at); remit.ErrorCode(err) != remit.EConflict {
				return fmt.Errorf("pending: %v", err)
			}
			if _, err := e.App.Ledger.ApplyBalance(ctx, tx, scope, "c1", "inv_2", "late", 40, at); err != nil {
				return err
			}
			_, err = e.App.Ledger.CreditBalance(ctx, tx, scope, "c1", remit.BalanceCredit{Kind: remit.EntryCreditNote, Currency: "USD", Amount: 5, CreditNoteID: "cn_1"}, at)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		bal, entries := k.balance("c1")
		// early 0 + late 60 + top-up 30 + credit note 5 = 95 available; 70 pending.
		if bal["USD"]["available"] != 95 || bal["USD"]["pending"] != 70 || bal["EUR"]["available"] != 70 {
			t.Fatalf("balances %v", bal)
		}
		apps := 0
		for _, en := range entries {
			if en["type"] == "application" {
				apps++
				if en["invoiceId"] != "inv_2" || en["sourceEntryId"] == nil || num(en["amount"]) >= 0 {
					t.Fatalf("application %v", en)
				}
			}
			if en["type"] == "credit_note" && (en["creditNoteId"] != "cn_1" || num(en["remaining"]) != 5) {
				t.Fatalf("credit note %v", en)
			}
		}
		if apps != 2 || entries[0]["type"] != "credit_note" {
			t.Fatalf("entries %v", entries)
		}

		// Concurrent applications against one lot, each in its own transaction: never more than it holds.
		k.grant("c1", map[string]any{"entryId": "shared", "currency": "GBP", "amount": 100})
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, conflicts := 0, 0
		for i := 0; i < 25; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := e.App.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
					lots, err := e.App.Ledger.AvailableGrants(ctx, tx, scope, "c1", "GBP", e.App.Now(m))
					if err != nil || len(lots) == 0 {
						return remit.Errorf(remit.EConflict, "nothing left")
					}
					_, err = e.App.Ledger.ApplyBalance(ctx, tx, scope, "c1", fmt.Sprintf("inv_c%d", i), "shared", 10, e.App.Now(m))
					return err
				})
				mu.Lock()
				defer mu.Unlock()
				switch remit.ErrorCode(err) {
				case remit.EConflict:
					conflicts++
				default:
					if err == nil {
						ok++
					} else {
						t.Errorf("apply: %v", err)
					}
				}
			}()
		}
		wg.Wait()
		bal, _ = k.balance("c1")
		if ok != 10 || conflicts != 15 || bal["GBP"]["available"] != 0 {
			t.Fatalf("concurrent applications: %d ok, %d conflicts, balance %v", ok, conflicts, bal["GBP"])
		}
	})
}
