package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
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
			"address": map[string]any{"line1": "1 Main St", "city": "Austin", "region": "TX", "postalCode": "78701", "country": "US"},
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
			"body:name:invalid_type", "body:taxExempt:invalid_type", "body:preferredLocale:invalid_enum")
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

var _ = slices.Contains[[]string]
var _ = time.Second
