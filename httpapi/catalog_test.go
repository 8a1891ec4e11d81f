package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// catalogKit holds the helpers of the catalog, customer, balance and portal tests.
type catalogKit struct {
	t *testing.T
	e *testkit.Env
}

func newCatalogKit(t *testing.T, e *testkit.Env) catalogKit { return catalogKit{t: t, e: e} }

func (k catalogKit) customer(id string, opts ...testkit.Opt) map[string]any {
	k.t.Helper()
	return k.e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id}, opts...).Data()
}

func (k catalogKit) billingAccount(id, customerID string, opts ...testkit.Opt) map[string]any {
	k.t.Helper()
	return k.e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": id, "customerId": customerID, "currency": "USD"}, opts...).Data()
}

// eventTypes lists the types of the merchant account's events about objectID, oldest first.
func (k catalogKit) eventTypes(merchantAccountID, objectID string) []string {
	k.t.Helper()
	evs, err := k.e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), merchantAccountID, objectID)
	if err != nil {
		k.t.Fatalf("events: %v", err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// wantFields fails unless the 422 answer lists exactly the given "location:field:reason" problems
// (in any order).
func wantFields(t *testing.T, r *testkit.Response, want ...string) {
	t.Helper()
	if r.Status != 422 || r.ErrorCode() != "validation_failure" {
		t.Fatalf("status %d, want 422 validation_failure\n%s", r.Status, r.Body)
	}
	got := r.FieldErrors()
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("fields %v, want %v\n%s", got, w, r.Body)
	}
}

func num(v any) int64 {
	f, ok := v.(float64)
	if !ok {
		panic(fmt.Sprintf("not a number: %#v", v))
	}
	return int64(f)
}

func TestPriceTypes(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		price := func(id, typ string, extra map[string]any) map[string]any {
			b := map[string]any{"priceId": id, "productId": "prod_" + typ, "name": id, "priceType": typ, "currency": "USD"}
			for key, v := range extra {
				b[key] = v
			}
			return b
		}
		// Valid forms, and the defaults filled in.
		valid := []struct {
			id, typ  string
			extra    map[string]any
			interval any
			count    any
			amount   any
		}{
			{"fr", "fixed_recurring", map[string]any{"billingInterval": "month", "unitAmount": 4900}, "month", 1.0, 4900.0},
			{"fr3", "fixed_recurring", map[string]any{"billingInterval": "week", "billingIntervalCount": 2, "unitAmount": 0}, "week", 2.0, 0.0},
			{"fo", "fixed_one_time", map[string]any{"unitAmount": 1000}, nil, nil, 1000.0},
			{"cg", "credit_grant", map[string]any{"unitAmount": 5000}, nil, nil, 5000.0},
			{"um", "usage_metered", map[string]any{"meterId": "api_calls", "unitAmount": 2, "billingInterval": "month", "billingIntervalCount": 3}, "month", 3.0, 2.0},
			{"free", "free", nil, nil, nil, 0.0},
			{"free0", "free", map[string]any{"unitAmount": 0}, nil, nil, 0.0},
			{"freem", "free", map[string]any{"billingInterval": "year"}, "year", 1.0, 0.0},
			{"pwyw", "pay_what_you_want", nil, nil, nil, nil},
			{"ctu", "credit_top_up", nil, nil, nil, nil},
		}
		for _, v := range valid {
			d := e.Must(200, "POST", "/v1/prices", price(v.id, v.typ, v.extra)).Data()
			if d["object"] != "price" || d["priceId"] != v.id || d["priceType"] != v.typ || d["billingInterval"] != v.interval ||
				d["billingIntervalCount"] != v.count || d["unitAmount"] != v.amount || d["environment"] != "sandbox" ||
				d["merchantAccountId"] != e.Tenant.Sandbox || d["createdAt"] == nil {
				t.Errorf("%s: got %v", v.id, d)
			}
			got := e.Must(200, "GET", "/v1/prices/"+v.id, nil).Data()
			if fmt.Sprint(got) != fmt.Sprint(d) {
				t.Errorf("%s: GET %v differs from create %v", v.id, got, d)
			}
			if ev := k.eventTypes(e.Tenant.Sandbox, v.id); !slices.Equal(ev, []string{"price.created"}) {
				t.Errorf("%s: events %v", v.id, ev)
			}
		}

		// Invalid forms: every broken rule is listed.
		invalid := []struct {
			name  string
			body  map[string]any
			wants []string
		}{
			{"recurring without interval and amount", price("x1", "fixed_recurring", nil),
				[]string{"body:billingInterval:required", "body:unitAmount:required"}},
			{"recurring with meter", price("x2", "fixed_recurring", map[string]any{"billingInterval": "month", "unitAmount": 1, "meterId": "m"}),
				[]string{"body:meterId:not_allowed"}},
			{"one-time with interval and count", price("x3", "fixed_one_time", map[string]any{"unitAmount": 1, "billingInterval": "month", "billingIntervalCount": 2}),
				[]string{"body:billingInterval:not_allowed", "body:billingIntervalCount:not_allowed"}},
			{"one-time without amount", price("x4", "fixed_one_time", nil), []string{"body:unitAmount:required"}},
			{"credit grant without amount, with interval", price("x5", "credit_grant", map[string]any{"billingInterval": "day"}),
				[]string{"body:unitAmount:required", "body:billingInterval:not_allowed"}},
			{"metered without anything", price("x6", "usage_metered", nil),
				[]string{"body:meterId:required", "body:unitAmount:required", "body:billingInterval:required"}},
			{"free with an amount", price("x7", "free", map[string]any{"unitAmount": 5}), []string{"body:unitAmount:not_allowed"}},
			{"free with a count but no interval", price("x8", "free", map[string]any{"billingIntervalCount": 2}), []string{"body:billingIntervalCount:not_allowed"}},
			{"pay what you want with an amount", price("x9", "pay_what_you_want", map[string]any{"unitAmount": 100}), []string{"body:unitAmount:not_allowed"}},
			{"top-up with an interval", price("x10", "credit_top_up", map[string]any{"billingInterval": "month"}), []string{"body:billingInterval:not_allowed"}},
			{"count 0 (seed bound)", price("x11", "fixed_recurring", map[string]any{"billingInterval": "month", "unitAmount": 1, "billingIntervalCount": 0}),
				[]string{"body:billingIntervalCount:out_of_range"}},
			{"negative amount (seed bound)", price("x12", "fixed_one_time", map[string]any{"unitAmount": -1}), []string{"body:unitAmount:out_of_range"}},
			{"count over three years", price("x13", "fixed_recurring", map[string]any{"billingInterval": "month", "unitAmount": 1, "billingIntervalCount": 37}),
				[]string{"body:billingIntervalCount:out_of_range"}},
			{"lower-case currency", func() map[string]any {
				b := price("x14", "fixed_one_time", map[string]any{"unitAmount": 1})
				b["currency"] = "usd"
				return b
			}(), []string{"body:currency:invalid_currency"}},
			{"currency off the rails", func() map[string]any {
				b := price("x15", "fixed_one_time", map[string]any{"unitAmount": 1})
				b["currency"] = "INR"
				return b
			}(), []string{"body:currency:currency_not_supported"}},
			{"unknown type", price("x16", "tiered", map[string]any{"unitAmount": 1}), []string{"body:priceType:invalid_enum"}},
			{"unknown field", price("x17", "fixed_one_time", map[string]any{"unitAmount": 1, "bands": []int{1}}), []string{"body:bands:unknown_field"}},
			{"metadata key too long", price("x18", "fixed_one_time", map[string]any{"unitAmount": 1, "metadata": map[string]string{strings.Repeat("k", 41): "v"}}),
				[]string{"body:metadata:invalid_key"}},
			{"missing required", map[string]any{"priceType": "free"},
				[]string{"body:priceId:required", "body:productId:required", "body:name:required", "body:currency:required"}},
			{"bad caller id", price("has space", "free", nil), []string{"body:priceId:invalid_format"}},
		}
		for _, c := range invalid {
			t.Run(c.name, func(t *testing.T) {
				wantFields(t, e.Do("POST", "/v1/prices", c.body), c.wants...)
			})
		}

		// Duplicate priceId in the merchant account: 409. The same ID in another merchant account is free.
		r := e.Must(409, "POST", "/v1/prices", price("fr", "fixed_one_time", map[string]any{"unitAmount": 1}))
		if r.ErrorCode() != "conflict" || r.ErrorDetails()["field"] != "priceId" {
			t.Fatalf("duplicate: %s", r.Body)
		}
		other := e.NewTenant("Other", false)
		e.Must(200, "POST", "/v1/prices", price("fr", "fixed_one_time", map[string]any{"unitAmount": 1}), testkit.As(other))
		// Cross-merchant lookups are 404 (and so is an unknown ID).
		e.Must(404, "GET", "/v1/prices/fo", nil, testkit.As(other))
		if r := e.Must(404, "GET", "/v1/prices/nope", nil); r.ErrorCode() != "not_found" {
			t.Fatalf("unknown: %s", r.Body)
		}
		// Production has its own catalog.
		e.Must(404, "GET", "/v1/prices/fo", nil, testkit.Production())
	})
}

func TestCoupons(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		d := e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "LAUNCH20", "name": "Launch", "percentOff": 20}).Data()
		if d["object"] != "coupon" || d["percentOff"] != 20.0 || d["amountOff"] != nil || d["currency"] != nil {
			t.Fatalf("percent coupon: %v", d)
		}
		d = e.Must(201, "POST", "/v1/coupons", map[string]any{"name": "Five off", "amountOff": 500, "currency": "EUR", "metadata": map[string]string{"a": "b"}}).Data()
		id, _ := d["couponId"].(string)
		if !strings.HasPrefix(id, "cpn_") || d["amountOff"] != 500.0 || d["currency"] != "EUR" || d["percentOff"] != nil {
			t.Fatalf("amount coupon: %v", d)
		}
		if got := e.Must(200, "GET", "/v1/coupons/"+id, nil).Data(); fmt.Sprint(got) != fmt.Sprint(d) {
			t.Fatalf("GET %v, create %v", got, d)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, id); !slices.Equal(ev, []string{"coupon.created"}) {
			t.Fatalf("events %v", ev)
		}
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "both", "percentOff": 10, "amountOff": 5, "currency": "USD"}),
			"body:percentOff:mutually_exclusive", "body:amountOff:mutually_exclusive")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "neither"}), "body:percentOff:required")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "no currency", "amountOff": 5}), "body:currency:required")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "stray currency", "percentOff": 5, "currency": "USD"}), "body:currency:not_allowed")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "bad currency", "amountOff": 5, "currency": "ZZZ"}), "body:currency:invalid_currency")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "101", "percentOff": 101}), "body:percentOff:out_of_range")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "0", "percentOff": 0}), "body:percentOff:out_of_range")
		e.Must(409, "POST", "/v1/coupons", map[string]any{"couponId": "LAUNCH20", "name": "again", "percentOff": 5})
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/coupons/LAUNCH20", nil, testkit.As(other))
		e.Must(404, "GET", "/v1/coupons/nope", nil)
	})
}

func TestCustomersAndBillingAccounts(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		k := newCatalogKit(t, e)
		addr := map[string]any{"line1": "500 5th Ave", "city": "New York", "region": "NY", "postalCode": "10110", "country": "US"}
		d := e.Must(201, "POST", "/v1/customers", map[string]any{"externalId": "crm-1", "name": "Acme", "email": "billing@acme.example",
			"address": addr, "taxExempt": true}).Data()
		cus, _ := d["customerId"].(string)
		if !strings.HasPrefix(cus, "cus_") || d["object"] != "customer" || d["externalId"] != "crm-1" || d["taxExempt"] != true ||
			fmt.Sprint(d["address"]) != fmt.Sprint(map[string]any{"line1": "500 5th Ave", "line2": nil, "city": "New York", "region": "NY", "postalCode": "10110", "country": "US"}) {
			t.Fatalf("customer: %v", d)
		}
		if got := e.Must(200, "GET", "/v1/customers/"+cus, nil).Data(); fmt.Sprint(got) != fmt.Sprint(d) {
			t.Fatalf("GET %v, create %v", got, d)
		}
		plain := k.customer("cus_plain")
		if plain["address"] != nil || plain["email"] != nil || plain["externalId"] != nil || plain["taxExempt"] != false {
			t.Fatalf("plain customer: %v", plain)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, cus); !slices.Equal(ev, []string{"customer.created"}) {
			t.Fatalf("events %v", ev)
		}
		// Duplicates: customerId and externalId, each naming its field.
		r := e.Must(409, "POST", "/v1/customers", map[string]any{"customerId": "cus_plain", "name": "again"})
		if r.ErrorDetails()["field"] != "customerId" {
			t.Fatalf("dup id: %s", r.Body)
		}
		r = e.Must(409, "POST", "/v1/customers", map[string]any{"externalId": "crm-1", "name": "again"})
		if r.ErrorDetails()["field"] != "externalId" {
			t.Fatalf("dup externalId: %s", r.Body)
		}
		// Validation.
		bad := map[string]any{"line1": "x", "city": "y", "postalCode": "z", "country": "XX"}
		wantFields(t, e.Do("POST", "/v1/customers", map[string]any{"name": "n", "address": bad, "email": "not-an-email"}),
			"body:address.country:invalid_country", "body:email:invalid_format")
		bad["country"] = "us"
		wantFields(t, e.Do("POST", "/v1/customers", map[string]any{"name": "n", "address": bad}), "body:address.country:invalid_format")
		wantFields(t, e.Do("POST", "/v1/customers", map[string]any{}), "body:name:required")

		// Billing accounts.
		ba := e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"customerId": cus, "currency": "USD", "taxAddress": addr}).Data()
		baID, _ := ba["billingAccountId"].(string)
		if !strings.HasPrefix(baID, "ba_") || ba["object"] != "billing_account" || ba["collectionMethod"] != "charge_automatically" ||
			ba["defaultPaymentMethod"] != nil || ba["customerId"] != cus || ba["currency"] != "USD" {
			t.Fatalf("billing account: %v", ba)
		}
		if got := e.Must(200, "GET", "/v1/billing-accounts/"+baID, nil).Data(); fmt.Sprint(got) != fmt.Sprint(ba) {
			t.Fatalf("GET %v, create %v", got, ba)
		}
		if ev := k.eventTypes(e.Tenant.Sandbox, baID); !slices.Equal(ev, []string{"billing_account.created"}) {
			t.Fatalf("events %v", ev)
		}
		si := e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_si", "customerId": cus, "currency": "JPY", "collectionMethod": "send_invoice"}).Data()
		if si["collectionMethod"] != "send_invoice" || si["taxAddress"] != nil {
			t.Fatalf("send_invoice: %v", si)
		}
		e.Must(409, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_si", "customerId": cus, "currency": "USD"})
		r = e.Must(404, "POST", "/v1/billing-accounts", map[string]any{"customerId": "cus_nope", "currency": "USD"})
		if r.ErrorDetails()["field"] != "customerId" {
			t.Fatalf("unknown customer: %s", r.Body)
		}
		wantFields(t, e.Do("POST", "/v1/billing-accounts", map[string]any{"customerId": cus, "currency": "INR"}), "body:currency:currency_not_supported")
		wantFields(t, e.Do("POST", "/v1/billing-accounts", map[string]any{"customerId": cus, "currency": "USD", "collectionMethod": "cash"}), "body:collectionMethod:invalid_enum")

		// Another merchant account sees none of it, and may reuse the IDs.
		other := e.NewTenant("Other", false)
		e.Must(404, "GET", "/v1/customers/"+cus, nil, testkit.As(other))
		e.Must(404, "GET", "/v1/billing-accounts/"+baID, nil, testkit.As(other))
		r = e.Must(404, "POST", "/v1/billing-accounts", map[string]any{"customerId": cus, "currency": "USD"}, testkit.As(other))
		if r.ErrorDetails()["field"] != "customerId" {
			t.Fatalf("foreign customer: %s", r.Body)
		}
		k.customer("cus_plain", testkit.As(other))
		e.Must(201, "POST", "/v1/customers", map[string]any{"externalId": "crm-1", "name": "Other's"}, testkit.As(other))
	})
}
