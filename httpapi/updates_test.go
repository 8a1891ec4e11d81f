package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// Updates: PATCH with a JSON merge patch (docs/api-conventions.md "Updates").

// mergePatch sends a PATCH as application/merge-patch+json.
func mergePatch(e *testkit.Env, path string, patch map[string]any, opts ...testkit.Opt) *testkit.Response {
	e.T.Helper()
	raw, err := json.Marshal(patch)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Do("PATCH", path, nil, append([]testkit.Opt{testkit.Raw(raw, "application/merge-patch+json")}, opts...)...)
}

// updatedEvents returns the data of the events of type typ about objectID, oldest first.
func updatedEvents(t *testing.T, e *testkit.Env, objectID, typ string) []map[string]any {
	t.Helper()
	evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), e.Tenant.Sandbox, objectID)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// lastPrevious is the previousAttributes of the last event of type typ about objectID, and how
// many such events there are.
func lastPrevious(t *testing.T, e *testkit.Env, objectID, typ string) (map[string]any, int) {
	t.Helper()
	evs := updatedEvents(t, e, objectID, typ)
	if len(evs) == 0 {
		return nil, 0
	}
	prev, _ := evs[len(evs)-1]["previousAttributes"].(map[string]any)
	return prev, len(evs)
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// wantPrevious fails unless the last event of type typ about objectID is the n-th and carries
// exactly previous (as JSON) in data.previousAttributes.
func wantPrevious(t *testing.T, e *testkit.Env, objectID, typ string, n int, previous string) {
	t.Helper()
	prev, got := lastPrevious(t, e, objectID, typ)
	if got != n {
		t.Fatalf("%d %s events about %s, want %d", got, typ, objectID, n)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(previous), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prev, want) {
		t.Fatalf("previousAttributes %s, want %s", jsonOf(prev), previous)
	}
}

func TestUpdateCustomer(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "Acme", "email": "billing@acme.example", "externalId": "crm-1",
			"address":  map[string]any{"line1": "1 Main St", "city": "Austin", "region": "TX", "postalCode": "78701", "country": "US"},
			"metadata": map[string]any{"tier": "gold", "region": "west"}})
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c2", "name": "Other", "externalId": "crm-2"})
		path := "/v1/customers/c1"

		// Every updatable field, in one patch; the answer and a read agree; one event with the old values.
		d := mergePatch(e, path, map[string]any{"name": "Acme Corp", "email": "ap@acme.example", "taxExempt": true, "preferredLocale": "fr",
			"externalId": "crm-9", "address": map[string]any{"line1": "2 Rue", "city": "Paris", "postalCode": "75001", "country": "FR"},
			"metadata": map[string]any{"tier": "platinum", "region": nil, "new": "x"}})
		if d.Status != 200 {
			t.Fatalf("patch: %d %s", d.Status, d.Body)
		}
		got := e.Must(200, "GET", path, nil).Data()
		if jsonOf(got) != jsonOf(d.Data()) {
			t.Fatalf("read %s\nanswer %s", jsonOf(got), jsonOf(d.Data()))
		}
		addr := got["address"].(map[string]any)
		if got["name"] != "Acme Corp" || got["email"] != "ap@acme.example" || got["taxExempt"] != true || got["preferredLocale"] != "fr" ||
			got["externalId"] != "crm-9" || addr["country"] != "FR" || addr["region"] != nil || jsonOf(got["metadata"]) != `{"new":"x","tier":"platinum"}` {
			t.Fatalf("customer %s", jsonOf(got))
		}
		wantPrevious(t, e, "c1", "customer.updated", 1, `{"name":"Acme","email":"billing@acme.example","taxExempt":false,"preferredLocale":"en",
			"externalId":"crm-1","address":{"line1":"1 Main St","line2":null,"city":"Austin","region":"TX","postalCode":"78701","country":"US"},
			"metadata":{"tier":"gold","region":"west","new":null}}`)

		// null clears what is optional; the metadata object null deletes every key.
		d = e.Must(200, "PATCH", path, map[string]any{"email": nil, "address": nil, "externalId": nil, "metadata": nil})
		if c := d.Data(); c["email"] != nil || c["address"] != nil || c["externalId"] != nil || jsonOf(c["metadata"]) != "{}" {
			t.Fatalf("cleared: %s", jsonOf(c))
		}
		wantPrevious(t, e, "c1", "customer.updated", 2, `{"email":"ap@acme.example","externalId":"crm-9",
			"address":{"line1":"2 Rue","line2":null,"city":"Paris","region":null,"postalCode":"75001","country":"FR"},"metadata":{"new":"x","tier":"platinum"}}`)

		// A patch that changes nothing answers the customer and emits nothing.
		same := e.Must(200, "PATCH", path, map[string]any{"name": "Acme Corp", "taxExempt": true, "metadata": map[string]any{"absent": nil}}).Data()
		if same["name"] != "Acme Corp" {
			t.Fatalf("no-op answer %s", jsonOf(same))
		}
		e.Must(200, "PATCH", path, map[string]any{})
		if _, n := lastPrevious(t, e, "c1", "customer.updated"); n != 2 {
			t.Fatalf("%d customer.updated events after patches that change nothing, want 2", n)
		}

		// null on a field that cannot be empty; every immutable field, each named, with the other problems.
		wantFields(t, e.Do("PATCH", path, map[string]any{"name": nil, "taxExempt": nil, "preferredLocale": nil}),
			"body:name:invalid_type", "body:taxExempt:invalid_type", "body:preferredLocale:invalid_type")
		wantFields(t, mergePatch(e, path, map[string]any{"customerId": "c9", "object": "customer", "createdAt": "2025-01-01T00:00:00Z",
			"merchantAccountId": "ma_x", "environment": "production", "email": "not-an-address", "address": map[string]any{"line1": "x", "city": "y", "postalCode": "z", "country": "UK"}}),
			"body:customerId:immutable_field", "body:object:immutable_field", "body:createdAt:immutable_field", "body:merchantAccountId:immutable_field",
			"body:environment:immutable_field", "body:email:invalid_format", "body:address.country:invalid_country")
		wantFields(t, e.Do("PATCH", path, map[string]any{"nmae": "typo"}), "body:nmae:unknown_field")
		wantFields(t, e.Do("PATCH", path, map[string]any{"metadata": map[string]any{strings.Repeat("k", 41): "v"}}), "body:metadata:invalid_key")
		many := map[string]any{}
		for i := range 51 {
			many[fmt.Sprintf("k%d", i)] = "v"
		}
		wantFields(t, e.Do("PATCH", path, map[string]any{"metadata": many}), "body:metadata:too_many_keys")
		if _, n := lastPrevious(t, e, "c1", "customer.updated"); n != 2 {
			t.Fatalf("a refused patch emitted an event (%d)", n)
		}

		// Another customer's externalId is a conflict; an unknown or foreign customer is 404.
		if r := e.Do("PATCH", path, map[string]any{"externalId": "crm-2"}); r.Status != 409 || r.ErrorDetails()["field"] != "externalId" {
			t.Fatalf("taken externalId: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PATCH", "/v1/customers/nope", map[string]any{"name": "x"}); r.Status != 404 {
			t.Fatalf("unknown customer: %d", r.Status)
		}
		other := e.NewTenant("other", false)
		if r := e.Do("PATCH", path, map[string]any{"name": "Stolen"}, testkit.As(other)); r.Status != 404 {
			t.Fatalf("another merchant account's customer: %d %s", r.Status, r.Body)
		}
		if e.Must(200, "GET", path, nil).Data()["name"] != "Acme Corp" {
			t.Fatal("the foreign patch changed the customer")
		}
		// A body that is no JSON object, or of another content type.
		if r := e.Do("PATCH", path, nil, testkit.Raw([]byte(`[{"op":"replace"}]`), "application/json-patch+json")); r.Status != 400 {
			t.Fatalf("a JSON Patch array: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PATCH", path, nil, testkit.Raw([]byte(`name=x`), "application/x-www-form-urlencoded")); r.Status != 400 {
			t.Fatalf("a form: %d %s", r.Status, r.Body)
		}
	})
}

// TestUpdateIsIdempotent: a PATCH under an Idempotency-Key runs once; its replay answers the same
// and emits nothing more; the key with another body is 409.
func TestUpdateIsIdempotent(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "c10", "name": "Ten", "percentOff": 10})
		first := mergePatch(e, "/v1/coupons/c10", map[string]any{"metadata": map[string]any{"n": "1"}}, testkit.Key("patch-1"))
		if first.Status != 200 || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		// The same patch again (key order and white space aside) while the coupon changed in between.
		e.Must(200, "PATCH", "/v1/coupons/c10", map[string]any{"metadata": map[string]any{"n": "2"}})
		replay := e.Do("PATCH", "/v1/coupons/c10", nil, testkit.Raw([]byte(` { "metadata" : { "n" : "1" } } `), "application/json"), testkit.Key("patch-1"))
		if replay.Status != 200 || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(first.Body) {
			t.Fatalf("replay: %d %s\nfirst: %s", replay.Status, replay.Body, first.Body)
		}
		if md := e.Must(200, "GET", "/v1/coupons/c10", nil).Data()["metadata"]; jsonOf(md) != `{"n":"2"}` {
			t.Fatalf("the replay ran again: metadata %v", md)
		}
		if _, n := lastPrevious(t, e, "c10", "coupon.updated"); n != 2 {
			t.Fatalf("%d coupon.updated events, want 2", n)
		}
		if r := e.Do("PATCH", "/v1/coupons/c10", map[string]any{"active": false}, testkit.Key("patch-1")); r.Status != 409 || r.ErrorDetails()["reason"] != "idempotency_key_reused" {
			t.Fatalf("the key with another patch: %d %s", r.Status, r.Body)
		}
		// The same key on another resource's PATCH is another route.
		e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "c20", "name": "Twenty", "percentOff": 20})
		if r := e.Do("PATCH", "/v1/coupons/c20", map[string]any{"metadata": map[string]any{"n": "1"}}, testkit.Key("patch-1")); r.Status != 409 {
			t.Fatalf("the key on another route: %d %s", r.Status, r.Body)
		}
		// A refused patch (422) leaves the key free.
		wantFields(t, e.Do("PATCH", "/v1/coupons/c20", map[string]any{"percentOff": 30}, testkit.Key("patch-2")), "body:percentOff:immutable_field")
		if r := e.Do("PATCH", "/v1/coupons/c20", map[string]any{"active": false}, testkit.Key("patch-2")); r.Status != 200 || r.Data()["active"] != false {
			t.Fatalf("the corrected retry: %d %s", r.Status, r.Body)
		}
	})
}

// hostedPage fetches an open invoice's hosted page (its paymentUrl without /pay).
func hostedPage(t *testing.T, e *testkit.Env, inv map[string]any) string {
	t.Helper()
	u, err := url.Parse(inv["paymentUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	r := e.Do("GET", strings.TrimSuffix(u.Path, "/pay")+"?"+u.RawQuery, nil, testkit.APIKey(""))
	if r.Status != 200 {
		t.Fatalf("hosted page: %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

// TestCustomerUpdateAndInvoices: a draft takes a customer's new address (its tax) at its next
// refresh; a finalized invoice keeps the customer it was issued to, figures and document.
func TestCustomerUpdateAndInvoices(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "Old Name",
			"address": map[string]any{"line1": "500 5th Ave", "city": "New York", "region": "NY", "postalCode": "10110", "country": "US"}})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1", "customerId": "c1", "currency": "USD", "collectionMethod": "send_invoice"})
		body := map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD", "lines": []any{map[string]any{"priceId": "setup"}}}
		final := e.Must(201, "POST", "/v1/invoices", body).Data()["invoiceId"].(string)
		finalized := e.Must(200, "POST", "/v1/invoices/"+final+"/finalize", map[string]any{}).Data()
		draft := e.Must(201, "POST", "/v1/invoices", body).Data()
		if num(draft["taxTotal"]) != 100 || num(finalized["taxTotal"]) != 100 { // New York: 4% of 2500
			t.Fatalf("tax before: draft %v, finalized %v", draft["taxTotal"], finalized["taxTotal"])
		}
		before := hostedPage(t, e, finalized)
		if !strings.Contains(before, "500 5th Ave") || !strings.Contains(before, "Old Name") {
			t.Fatalf("the hosted page before the update does not show the customer")
		}

		e.Must(200, "PATCH", "/v1/customers/c1", map[string]any{"name": "New Name",
			"address": map[string]any{"line1": "1 Market St", "city": "San Francisco", "region": "CA", "postalCode": "94105", "country": "US"}})

		// The draft keeps its figures until it is refreshed, then is taxed at the new address.
		draftID := draft["invoiceId"].(string)
		if got := e.Must(200, "GET", "/v1/invoices/"+draftID, nil).Data(); num(got["taxTotal"]) != 100 {
			t.Fatalf("the draft changed before its refresh: tax %v", got["taxTotal"])
		}
		if got := e.Must(200, "POST", "/v1/invoices/"+draftID+"/refresh", nil).Data(); num(got["taxTotal"]) != 181 { // California: 7.25%
			t.Fatalf("the refreshed draft: tax %v, want 181", got["taxTotal"])
		}
		// The finalized invoice: the same figures, the same document.
		if got := e.Must(200, "GET", "/v1/invoices/"+final, nil).Data(); jsonOf(got) != jsonOf(finalized) {
			t.Fatalf("the finalized invoice changed:\n%s\n%s", jsonOf(got), jsonOf(finalized))
		}
		after := hostedPage(t, e, finalized)
		if after != before {
			t.Fatalf("the finalized invoice's page changed with the customer")
		}
		// A draft finalized now is issued to the customer as it is.
		done := e.Must(200, "POST", "/v1/invoices/"+draftID+"/finalize", map[string]any{}).Data()
		if page := hostedPage(t, e, done); !strings.Contains(page, "1 Market St") || !strings.Contains(page, "New Name") {
			t.Fatal("the invoice finalized after the update does not show the customer as it is")
		}
		e.Must(200, "PATCH", "/v1/customers/c1", map[string]any{"name": "Newer Name"})
		if page := hostedPage(t, e, done); !strings.Contains(page, "New Name") || strings.Contains(page, "Newer Name") {
			t.Fatal("the invoice finalized before the second update shows it")
		}
	})
}

func TestUpdateBillingAccount(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := payKit{catalogKit: newCatalogKit(t, e)}
		k.customer("c1")
		k.billingAccount("ba-c1", "c1")
		k.customer("c2")
		k.billingAccount("ba-c2", "c2")
		k.attach("c1", "pm_card_visa")
		k.attach("c2", "pm_card_visa")
		k.attachTo("c1", "ba-c1", "pm_card_mastercard") // c1's second card, now the default
		ba := e.Must(200, "GET", "/v1/billing-accounts/ba-c1", nil).Data()
		second := ba["defaultPaymentMethod"].(map[string]any)
		methods := e.Must(200, "GET", "/v1/billing-accounts/ba-c2", nil).Data()["defaultPaymentMethod"].(map[string]any)
		var first string
		for _, ev := range updatedEvents(t, e, "ba-c1", "billing_account.updated") {
			if pm := ev["object"].(map[string]any)["defaultPaymentMethod"].(map[string]any); pm["last4"] == "4242" {
				first = pm["paymentMethodId"].(string)
			}
		}
		n := len(updatedEvents(t, e, "ba-c1", "billing_account.updated"))

		// Every updatable field.
		d := e.Must(200, "PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"collectionMethod": "send_invoice", "defaultPaymentMethodId": first,
			"dunning": map[string]any{"schedule": []string{"2d", "4d"}}, "metadata": map[string]any{"erp": "A-1"}}).Data()
		if d["collectionMethod"] != "send_invoice" || d["defaultPaymentMethod"].(map[string]any)["last4"] != "4242" ||
			jsonOf(d["dunning"]) != `{"finalAction":"mark_uncollectible","schedule":["2d","4d"]}` || jsonOf(d["metadata"]) != `{"erp":"A-1"}` {
			t.Fatalf("billing account %s", jsonOf(d))
		}
		if got := e.Must(200, "GET", "/v1/billing-accounts/ba-c1", nil).Data(); jsonOf(got) != jsonOf(d) {
			t.Fatalf("read %s, answer %s", jsonOf(got), jsonOf(d))
		}
		wantPrevious(t, e, "ba-c1", "billing_account.updated", n+1, `{"collectionMethod":"charge_automatically","defaultPaymentMethod":`+jsonOf(second)+
			`,"dunning":null,"metadata":{"erp":null}}`)
		// New invoices are collected as the account now says.
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 100})
		if inv := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "item"}}}).Data(); inv["collectionMethod"] != "send_invoice" {
			t.Fatalf("a new invoice: %v", inv["collectionMethod"])
		}

		// null: no default method, the deployment's dunning.
		d = e.Must(200, "PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"defaultPaymentMethodId": nil, "dunning": nil}).Data()
		if d["defaultPaymentMethod"] != nil || d["dunning"] != nil {
			t.Fatalf("cleared: %s", jsonOf(d))
		}
		// A method of another customer, or none at all: 422.
		wantFields(t, e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"defaultPaymentMethodId": methods["paymentMethodId"]}),
			"body:defaultPaymentMethodId:invalid_payment_method")
		wantFields(t, e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"defaultPaymentMethodId": "pm_nope"}),
			"body:defaultPaymentMethodId:invalid_payment_method")
		// The contract's rules and the dunning rule, with every immutable field.
		wantFields(t, e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"collectionMethod": "cash", "dunning": map[string]any{"schedule": []string{"5d", "3d"}},
			"currency": "EUR", "customerId": "c2", "taxAddress": nil, "billingAccountId": "x", "defaultPaymentMethod": nil, "collectionMethod2": 1}),
			"body:collectionMethod:invalid_enum", "body:dunning.schedule[1]:not_increasing", "body:currency:immutable_field", "body:customerId:immutable_field",
			"body:taxAddress:immutable_field", "body:billingAccountId:immutable_field", "body:defaultPaymentMethod:immutable_field", "body:collectionMethod2:unknown_field")
		wantFields(t, e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"collectionMethod": nil}), "body:collectionMethod:invalid_type")
		// A detached method is no default: 409 with its state.
		e.Must(200, "POST", "/v1/payment-methods/"+first+"/detach", nil)
		if r := e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"defaultPaymentMethodId": first}); r.Status != 409 || r.ErrorDetails()["currentState"] != "detached" {
			t.Fatalf("a detached method as the default: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"collectionMethod": "send_invoice"}, testkit.As(e.NewTenant("other", false))); r.Status != 404 {
			t.Fatalf("another merchant account's billing account: %d", r.Status)
		}
	})
}

// TestArchivedPrice: a price archived by PATCH is refused by new quotes, invoices, subscription
// changes and quote acceptances (409, details.currentState archived) while an existing
// subscription keeps renewing on it; active true makes it usable again.
func TestArchivedPrice(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newLifecycleKit(t, e)
		k.customer("c1", "pm_card_visa")
		sub, start := k.subscribe("c1", line("team"))
		subID := sub["subscriptionId"].(string)
		pending := e.Must(201, "POST", "/v1/quotes", quoteBody("subscription_creation", "c1", line("team"))).Data()["quoteId"].(string)

		// Every updatable field of a price, and what archiving looks like.
		d := e.Must(200, "PATCH", "/v1/prices/team", map[string]any{"active": false, "nickname": "Team (2025)", "metadata": map[string]any{"list": "2025"}}).Data()
		if d["active"] != false || d["nickname"] != "Team (2025)" || jsonOf(d["metadata"]) != `{"list":"2025"}` {
			t.Fatalf("price %s", jsonOf(d))
		}
		wantPrevious(t, e, "team", "price.updated", 1, `{"active":true,"nickname":null,"metadata":{"list":null}}`)
		if got := e.Must(200, "GET", "/v1/prices/team", nil).Data(); got["active"] != false {
			t.Fatalf("read: %s", jsonOf(got))
		}
		archived := func(what string, r *testkit.Response, field string) {
			t.Helper()
			if r.Status != 409 || r.ErrorDetails()["currentState"] != "archived" || r.ErrorDetails()["field"] != field {
				t.Fatalf("%s naming the archived price: %d %s", what, r.Status, r.Body)
			}
		}
		archived("a new quote", e.Do("POST", "/v1/quotes", quoteBody("one_off", "c1", line("plan"), line("team"))), "lines[1].priceId")
		archived("a new invoice", e.Do("POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "team"}}}), "lines[0].priceId")
		archived("a quote made before, accepted now", e.Do("POST", "/v1/quotes/"+pending+"/accept", map[string]any{}), "lines[0].priceId")
		other, _ := k.subscribe("c1", line("plan"))
		archived("a subscription change", e.Do("POST", "/v1/subscriptions/"+other["subscriptionId"].(string)+"/change",
			map[string]any{"items": []any{map[string]any{"priceId": "team"}}}), "items[0].priceId")
		// The subscription that bills it keeps it through a change that keeps it, and renews on it.
		e.Must(200, "POST", "/v1/subscriptions/"+subID+"/change", map[string]any{"items": []any{map[string]any{"priceId": "team", "quantity": 2}}, "prorationBehavior": "none"})
		end := ts(t, k.sub(subID)["currentPeriodEnd"])
		advanceTo(e, end.Add(2*time.Hour))
		renewed := renewedInvoices(t, e, subID)
		if len(renewed) != 1 {
			t.Fatalf("renewals after %v (started %v): %v", end, start, renewed)
		}
		inv := k.invoice(renewed[0])
		lines := inv["lines"].([]any)
		if len(lines) == 0 || lines[0].(map[string]any)["priceId"] != "team" || num(lines[0].(map[string]any)["quantity"]) != 2 || inv["status"] == "draft" {
			t.Fatalf("the renewal's invoice: %s", jsonOf(inv))
		}
		// A draft keeps a line of the archived price through a patch of its lines, but takes no new one.
		draft := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "plan"}}}).Data()["invoiceId"].(string)
		archived("a draft's new line", e.Do("PATCH", "/v1/invoices/"+draft, map[string]any{"lines": []any{map[string]any{"priceId": "team"}}}), "lines[0].priceId")
		// Active again: usable again.
		e.Must(200, "PATCH", "/v1/prices/team", map[string]any{"active": true})
		e.Must(200, "POST", "/v1/quotes/"+pending+"/accept", map[string]any{})
		e.Must(200, "PATCH", "/v1/invoices/"+draft, map[string]any{"lines": []any{map[string]any{"priceId": "team"}}})
		e.Must(200, "PATCH", "/v1/prices/team", map[string]any{"active": false})
		e.Must(200, "PATCH", "/v1/invoices/"+draft, map[string]any{"lines": []any{map[string]any{"priceId": "team"}, map[string]any{"priceId": "plan"}}})

		// What a price bills never changes: every such field is named in one 422, with the patch's other problems.
		wantFields(t, e.Do("PATCH", "/v1/prices/team", map[string]any{"unitAmount": 1, "currency": "EUR", "priceType": "free", "tiers": nil, "tiersMode": "volume",
			"meterId": "m", "billingInterval": "year", "billingIntervalCount": 2, "transformQuantity": nil, "productId": "p", "name": "n", "priceId": "x",
			"active": "no", "nickname": ""}),
			"body:unitAmount:immutable_field", "body:currency:immutable_field", "body:priceType:immutable_field", "body:tiers:immutable_field",
			"body:tiersMode:immutable_field", "body:meterId:immutable_field", "body:billingInterval:immutable_field", "body:billingIntervalCount:immutable_field",
			"body:transformQuantity:immutable_field", "body:productId:immutable_field", "body:name:immutable_field", "body:priceId:immutable_field",
			"body:active:invalid_type", "body:nickname:invalid_length")
		wantFields(t, e.Do("PATCH", "/v1/prices/team", map[string]any{"active": nil}), "body:active:invalid_type")
		d = e.Must(200, "PATCH", "/v1/prices/team", map[string]any{"nickname": nil}).Data()
		if d["nickname"] != nil {
			t.Fatalf("nickname not cleared: %v", d["nickname"])
		}
		if r := e.Do("PATCH", "/v1/prices/team", map[string]any{"active": true}, testkit.As(e.NewTenant("other", false))); r.Status != 404 {
			t.Fatalf("another merchant account's price: %d", r.Status)
		}
	})
}

// TestArchivedCoupon: an archived coupon is refused by new quotes and invoices (409).
func TestArchivedCoupon(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		pending := e.Must(201, "POST", "/v1/quotes", with(quoteBody("one_off", "c1", line("setup")), "couponIds", []string{"ten"})).Data()["quoteId"].(string)
		d := e.Must(200, "PATCH", "/v1/coupons/ten", map[string]any{"active": false, "metadata": map[string]any{"why": "ended"}}).Data()
		if d["active"] != false || jsonOf(d["metadata"]) != `{"why":"ended"}` {
			t.Fatalf("coupon %s", jsonOf(d))
		}
		wantPrevious(t, e, "ten", "coupon.updated", 1, `{"active":true,"metadata":{"why":null}}`)
		for what, r := range map[string]*testkit.Response{
			"a new invoice":                 e.Do("POST", "/v1/invoices", with(draftBody("c1"), "couponIds", []string{"five", "ten"})),
			"a new quote":                   e.Do("POST", "/v1/quotes", with(quoteBody("one_off", "c1", line("setup")), "couponIds", []string{"five", "ten"})),
			"an earlier quote's acceptance": e.Do("POST", "/v1/quotes/"+pending+"/accept", map[string]any{}),
		} {
			field := "couponIds[1]"
			if strings.Contains(what, "earlier") {
				field = "couponIds[0]"
			}
			if r.Status != 409 || r.ErrorDetails()["currentState"] != "archived" || r.ErrorDetails()["field"] != field {
				t.Fatalf("%s listing the archived coupon: %d %s", what, r.Status, r.Body)
			}
		}
		wantFields(t, e.Do("PATCH", "/v1/coupons/ten", map[string]any{"percentOff": 20, "amountOff": 1, "currency": "USD", "name": "x", "couponId": "y"}),
			"body:percentOff:immutable_field", "body:amountOff:immutable_field", "body:currency:immutable_field", "body:name:immutable_field", "body:couponId:immutable_field")
		e.Must(200, "PATCH", "/v1/coupons/ten", map[string]any{"active": true})
		e.Must(201, "POST", "/v1/invoices", with(draftBody("c1"), "couponIds", []string{"ten"}))
	})
}

func TestUpdateWebhookEndpoint(t *testing.T) {
	testkit.RunWith(t, testkit.Options{Config: fastConfig("10ms")}, func(t *testing.T, e *testkit.Env) {
		oldRc, newRc := newReceiver(t, nil), newReceiver(t, nil)
		ep := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": oldRc.URL + "/hook", "description": "Receiver",
			"enabledEvents": []string{"customer.created"}}).Data()
		id := ep["endpointId"].(string)
		path := "/v1/webhook-endpoints/" + id

		// Every updatable field; the answer never carries the secret.
		d := e.Must(200, "PATCH", path, map[string]any{"url": newRc.URL + "/v2", "enabledEvents": []string{"customer.created", "customer.updated", "customer.created"},
			"description": nil, "metadata": map[string]any{"team": "billing"}}).Data()
		if d["url"] != newRc.URL+"/v2" || jsonOf(d["enabledEvents"]) != `["customer.created","customer.updated"]` || d["description"] != nil ||
			jsonOf(d["metadata"]) != `{"team":"billing"}` || d["secret"] != nil {
			t.Fatalf("endpoint %s", jsonOf(d))
		}
		wantPrevious(t, e, id, "webhook_endpoint.updated", 1, `{"url":"`+oldRc.URL+`/hook","enabledEvents":["customer.created"],"description":"Receiver","metadata":{"team":null}}`)
		// The next deliveries go to the new URL, for the new events.
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "C"})
		e.Must(200, "PATCH", "/v1/customers/c1", map[string]any{"name": "C2"})
		deliverUntil(t, e, "two deliveries to the new URL", func() bool { return len(newRc.Hits()) == 2 })
		if len(oldRc.Hits()) != 0 {
			t.Fatalf("the old URL got %d deliveries", len(oldRc.Hits()))
		}

		// The create's URL rules; null where a value is needed; every immutable field.
		prod := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://93.184.216.34/hook"}, testkit.Production()).Data()
		prodPath := "/v1/webhook-endpoints/" + prod["endpointId"].(string)
		wantFields(t, e.Do("PATCH", prodPath, map[string]any{"url": "http://93.184.216.34/hook"}, testkit.Production()), "body:url:https_required")
		wantFields(t, e.Do("PATCH", prodPath, map[string]any{"url": "https://10.0.0.7/hook"}, testkit.Production()), "body:url:private_address")
		wantFields(t, e.Do("PATCH", prodPath, map[string]any{"url": "ftp://93.184.216.34/"}, testkit.Production()), "body:url:invalid_scheme")
		wantFields(t, e.Do("PATCH", path, map[string]any{"url": nil, "enabledEvents": nil}), "body:url:invalid_type", "body:enabledEvents:invalid_type")
		wantFields(t, e.Do("PATCH", path, map[string]any{"enabledEvents": []string{"invoice.payed"}, "status": "enabled", "secret": "whsec_x",
			"endpointId": "we_x", "disabledReason": nil, "disabledAt": nil, "createdAt": "2025-01-01T00:00:00Z"}),
			"body:enabledEvents[0]:unknown_event_type", "body:status:immutable_field", "body:secret:immutable_field", "body:endpointId:immutable_field",
			"body:disabledReason:immutable_field", "body:disabledAt:immutable_field", "body:createdAt:immutable_field")
		if r := e.Do("PATCH", path, map[string]any{"description": "x"}, testkit.As(e.NewTenant("other", false))); r.Status != 404 {
			t.Fatalf("another merchant account's endpoint: %d", r.Status)
		}
		// A disabled endpoint is still updated (and stays disabled).
		e.Must(200, "POST", path+"/disable", nil)
		if d := e.Must(200, "PATCH", path, map[string]any{"description": "Retired"}).Data(); d["status"] != "disabled" || d["description"] != "Retired" {
			t.Fatalf("disabled endpoint: %s", jsonOf(d))
		}
	})
}

// TestUpdateWebhookEndpointLooksUpBeforeTheTransaction: a new url's host is looked up once, before
// the update's transaction, and the check inside uses that answer.
func TestUpdateWebhookEndpointLooksUpBeforeTheTransaction(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	answers := map[string][]netip.Addr{"hooks.public.test": {netip.MustParseAddr("93.184.216.34")}, "hooks.internal.test": {netip.MustParseAddr("10.0.0.7")}}
	opts := testkit.Options{Engine: func(a *app.App) {
		a.Config.LookupHost = func(ctx context.Context, host string) ([]netip.Addr, error) {
			if store.InTx(ctx) {
				t.Errorf("%s was looked up inside a store transaction", host)
			}
			mu.Lock()
			calls[host]++
			mu.Unlock()
			if addrs, ok := answers[host]; ok {
				return addrs, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	}}
	testkit.RunWith(t, opts, func(t *testing.T, e *testkit.Env) {
		prod := testkit.Production()
		ep := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.public.test/a"}, prod).Data()
		mu.Lock()
		clear(calls) // the create's lookup, and the other store's run
		mu.Unlock()
		path := "/v1/webhook-endpoints/" + ep["endpointId"].(string)
		wantFields(t, e.Do("PATCH", path, map[string]any{"url": "https://hooks.internal.test/b"}, prod), "body:url:private_address")
		e.Must(200, "PATCH", path, map[string]any{"url": "https://hooks.public.test/c"}, prod)
		e.Must(200, "PATCH", path, map[string]any{"description": "no lookup"}, prod)
		mu.Lock()
		defer mu.Unlock()
		if calls["hooks.internal.test"] != 1 || calls["hooks.public.test"] != 1 || len(calls) != 2 {
			t.Errorf("lookups %v, want one per request with a new url", calls)
		}
	})
}

func TestUpdateMerchantAccount(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		path := "/v1/merchant-accounts/" + e.Tenant.Sandbox
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "TX", false)
		issued := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "setup"}}}).Data()["invoiceId"].(string)
		e.Must(200, "PATCH", "/v1/billing-accounts/ba-c1", map[string]any{"collectionMethod": "send_invoice"})
		issued2 := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "setup"}}}).Data()["invoiceId"].(string)
		finalized := e.Must(200, "POST", "/v1/invoices/"+issued2+"/finalize", map[string]any{}).Data()
		_ = issued
		before := hostedPage(t, e, finalized)

		d := mergePatch(e, path, map[string]any{"displayName": "Acme Roasters", "supportEmail": "help@acme.example", "metadata": map[string]any{"region": "eu"}})
		if d.Status != 200 {
			t.Fatalf("patch: %d %s", d.Status, d.Body)
		}
		m := d.Data()
		if m["displayName"] != "Acme Roasters" || m["supportEmail"] != "help@acme.example" || jsonOf(m["metadata"]) != `{"region":"eu"}` || m["object"] != "merchant_account" {
			t.Fatalf("merchant account %s", jsonOf(m))
		}
		prev, n := lastPrevious(t, e, e.Tenant.Sandbox, "merchant_account.updated")
		if n != 1 || prev["supportEmail"] != nil || jsonOf(prev["metadata"]) != `{"region":null}` || prev["displayName"] == nil || prev["displayName"] == "Acme Roasters" {
			t.Fatalf("%d events, previousAttributes %s", n, jsonOf(prev))
		}
		// The finalized invoice keeps the merchant it was issued by; a new one shows the new name.
		if after := hostedPage(t, e, finalized); after != before {
			t.Fatal("the finalized invoice's page changed with the merchant account")
		}
		next := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "setup"}}}).Data()["invoiceId"].(string)
		page := hostedPage(t, e, e.Must(200, "POST", "/v1/invoices/"+next+"/finalize", map[string]any{}).Data())
		if !strings.Contains(page, "Acme Roasters") || !strings.Contains(page, "help@acme.example") {
			t.Fatal("an invoice finalized after the update does not show the new name and support address")
		}
		// The acting account reads its new name (the authentication cache saw the change).
		if again := e.Must(200, "PATCH", path, map[string]any{"supportEmail": nil}).Data(); again["displayName"] != "Acme Roasters" || again["supportEmail"] != nil {
			t.Fatalf("second patch: %s", jsonOf(again))
		}

		wantFields(t, e.Do("PATCH", path, map[string]any{"displayName": nil, "supportEmail": "nope", "country": "FR", "status": "approved",
			"legalEntityType": "corporation", "businessAddress": nil, "email": "x@y.example", "onboarding": nil}),
			"body:displayName:invalid_type", "body:supportEmail:invalid_format", "body:country:immutable_field", "body:status:immutable_field",
			"body:legalEntityType:immutable_field", "body:businessAddress:immutable_field", "body:email:immutable_field", "body:onboarding:immutable_field")
		// Another organization's account, or an unknown one: 404 (the target rule of every merchant-account route).
		other := e.NewTenant("other", false)
		if r := e.Do("PATCH", "/v1/merchant-accounts/"+other.Sandbox, map[string]any{"displayName": "Mine"}); r.Status != 404 {
			t.Fatalf("another organization's account: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PATCH", "/v1/merchant-accounts/"+e.Tenant.Production, map[string]any{"displayName": "Mine"}); r.Status != 404 {
			t.Fatalf("the production account from the sandbox: %d %s", r.Status, r.Body)
		}
		// Another account of the same organization and environment is a target.
		sibling := e.Must(200, "POST", "/v1/merchant-accounts", validMerchant("sibling-1")).Data()["merchantAccountId"].(string)
		if r := e.Must(200, "PATCH", "/v1/merchant-accounts/"+sibling, map[string]any{"displayName": "Sibling"}).Data(); r["displayName"] != "Sibling" || r["merchantAccountId"] != sibling {
			t.Fatalf("sibling: %s", jsonOf(r))
		}
	})
}

func TestUpdateInvoice(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		billingFixture(t, e)
		customerAt(t, e, "c1", "US", "NY", false)
		draft := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "setup"}}, "couponIds": []string{"ten"}, "memo": "First"}).Data()
		id := draft["invoiceId"].(string)
		path := "/v1/invoices/" + id
		if draft["memo"] != "First" || draft["daysUntilDue"] != nil || draft["dueDate"] != nil {
			t.Fatalf("draft %s", jsonOf(draft))
		}

		// A draft: lines replaced and priced again (coupon, tax), payment terms, memo, metadata.
		d := mergePatch(e, path, map[string]any{"lines": []any{map[string]any{"priceId": "seats", "quantity": 10}, map[string]any{"priceId": "setup", "unitAmount": 1000, "description": "Setup (discounted)"}},
			"daysUntilDue": 30, "memo": "Thank you\nfor your business.", "metadata": map[string]any{"po": "PO-7"}})
		if d.Status != 200 {
			t.Fatalf("patch: %d %s", d.Status, d.Body)
		}
		inv := d.Data()
		lines := inv["lines"].([]any)
		// 12340 + 1000 = 13340; 10% off: 12006; New York 4%: 480 (rounded per line).
		if len(lines) != 2 || num(inv["subtotal"]) != 13340 || num(inv["discountTotal"]) != 1334 || num(inv["taxTotal"]) != 480 ||
			lines[1].(map[string]any)["description"] != "Setup (discounted)" || num(inv["daysUntilDue"]) != 30 || inv["memo"] != "Thank you\nfor your business." {
			t.Fatalf("patched draft %s", jsonOf(inv))
		}
		if got := e.Must(200, "GET", path, nil).Data(); jsonOf(got) != jsonOf(inv) {
			t.Fatalf("read %s\nanswer %s", jsonOf(got), jsonOf(inv))
		}
		prev, n := lastPrevious(t, e, id, "invoice.updated")
		oldLines, _ := prev["lines"].([]any)
		if n != 1 || len(oldLines) != 1 || oldLines[0].(map[string]any)["priceId"] != "setup" || prev["daysUntilDue"] != nil || prev["memo"] != "First" ||
			jsonOf(prev["metadata"]) != `{"po":null}` || len(prev) != 4 {
			t.Fatalf("%d events, previousAttributes %s", n, jsonOf(prev))
		}
		// The tax quote follows the lines.
		txn := e.Must(200, "GET", "/v1/tax-transactions/"+inv["taxTransactionId"].(string), nil).Data()
		if num(txn["totalTax"]) != 480 {
			t.Fatalf("tax transaction %s", jsonOf(txn))
		}
		// The same lines again: nothing changes, no event, the lines keep their IDs.
		same := e.Must(200, "PATCH", path, map[string]any{"lines": []any{map[string]any{"priceId": "seats", "quantity": 10}, map[string]any{"priceId": "setup", "unitAmount": 1000, "description": "Setup (discounted)"}}}).Data()
		if jsonOf(same["lines"]) != jsonOf(inv["lines"]) {
			t.Fatalf("the same lines changed:\n%s\n%s", jsonOf(same["lines"]), jsonOf(inv["lines"]))
		}
		if _, n := lastPrevious(t, e, id, "invoice.updated"); n != 1 {
			t.Fatalf("%d invoice.updated events after a patch that changes nothing", n)
		}
		// null clears the terms and the memo; lines cannot be cleared.
		cleared := e.Must(200, "PATCH", path, map[string]any{"daysUntilDue": nil, "memo": nil}).Data()
		if cleared["daysUntilDue"] != nil || cleared["memo"] != nil {
			t.Fatalf("cleared %s", jsonOf(cleared))
		}
		wantFields(t, e.Do("PATCH", path, map[string]any{"lines": nil}), "body:lines:invalid_type")
		wantFields(t, e.Do("PATCH", path, map[string]any{"lines": []any{}}), "body:lines:invalid_count")
		wantFields(t, e.Do("PATCH", path, map[string]any{"lines": []any{map[string]any{"priceId": "eur-plan"}, map[string]any{"priceId": "setup", "quantity": 1_000_000_000}}}),
			"body:lines[0].priceId:currency_mismatch", "body:lines[1].quantity:amount_too_large")
		wantFields(t, e.Do("PATCH", path, map[string]any{"daysUntilDue": 400, "memo": strings.Repeat("m", 5001)}), "body:daysUntilDue:out_of_range", "body:memo:invalid_length")
		if r := e.Do("PATCH", path, map[string]any{"lines": []any{map[string]any{"priceId": "nope"}}}); r.Status != 404 || r.ErrorDetails()["field"] != "lines[0].priceId" {
			t.Fatalf("an unknown price: %d %s", r.Status, r.Body)
		}
		wantFields(t, e.Do("PATCH", path, map[string]any{"status": "paid", "total": 0, "couponIds": []string{}, "currency": "EUR", "customerId": "c2", "number": "INV-9", "dueDate": nil}),
			"body:status:immutable_field", "body:total:immutable_field", "body:couponIds:immutable_field", "body:currency:immutable_field",
			"body:customerId:immutable_field", "body:number:immutable_field", "body:dueDate:immutable_field")

		// Finalized: payment terms give the due date; only metadata changes now.
		e.Must(200, "PATCH", path, map[string]any{"daysUntilDue": 14})
		fin := e.Must(200, "POST", path+"/finalize", map[string]any{}).Data()
		if due, at := ts(t, fin["dueDate"]), ts(t, fin["finalizedAt"]); !due.Equal(at.AddDate(0, 0, 14)) {
			t.Fatalf("dueDate %v, finalizedAt %v", due, at)
		}
		for _, patch := range []map[string]any{{"memo": "late"}, {"daysUntilDue": 1}, {"lines": []any{map[string]any{"priceId": "setup"}}}, {"metadata": map[string]any{"a": "b"}, "memo": nil}} {
			if r := e.Do("PATCH", path, patch); r.Status != 409 || r.ErrorDetails()["currentState"] != fin["status"] {
				t.Fatalf("%v on a finalized invoice: %d %s", patch, r.Status, r.Body)
			}
		}
		tagged := e.Must(200, "PATCH", path, map[string]any{"metadata": map[string]any{"erp": "AR-1", "po": nil}}).Data()
		if jsonOf(tagged["metadata"]) != `{"erp":"AR-1"}` || jsonOf(tagged["lines"]) != jsonOf(fin["lines"]) || tagged["status"] != fin["status"] {
			t.Fatalf("metadata of a finalized invoice: %s", jsonOf(tagged))
		}
		wantPrevious(t, e, id, "invoice.updated", 4, `{"metadata":{"erp":null,"po":"PO-7"}}`)
		if r := e.Do("PATCH", path, map[string]any{"memo": "x"}, testkit.As(e.NewTenant("other", false))); r.Status != 404 {
			t.Fatalf("another merchant account's invoice: %d", r.Status)
		}
	})
}
