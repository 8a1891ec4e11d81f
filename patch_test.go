package remit

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// TestPatchRule applies merge patches to a customer, row by row: what each member does to the
// resource, the problems it records and the previous attributes it yields.
func TestPatchRule(t *testing.T) {
	stored := func() Customer {
		return Customer{Object: "customer", CustomerID: "cus_1", Name: "Acme", Email: ptr("billing@acme.example"),
			Address: &Address{Line1: "1 Main St", City: "Austin", PostalCode: "78701", Country: "US"}, PreferredLocale: "en",
			ExternalID: ptr("crm-1"), Metadata: map[string]string{"tier": "gold", "region": "west"}}
	}
	for _, c := range []struct {
		name     string
		patch    string
		problems []string // field:reason
		previous string   // previousAttributes as JSON
		check    func(t *testing.T, c Customer)
	}{
		{name: "the empty patch changes nothing", patch: `{}`, previous: `{}`},
		{name: "a member replaces its field", patch: `{"name": "Acme Corp"}`, previous: `{"name":"Acme"}`,
			check: func(t *testing.T, c Customer) { eq(t, c.Name, "Acme Corp") }},
		{name: "the same value is no change", patch: `{"name": "Acme", "taxExempt": false}`, previous: `{}`},
		{name: "null clears a nullable field", patch: `{"email": null, "externalId": null}`,
			previous: `{"email":"billing@acme.example","externalId":"crm-1"}`,
			check: func(t *testing.T, c Customer) {
				if c.Email != nil || c.ExternalID != nil {
					t.Errorf("email %v, externalId %v: want both cleared", c.Email, c.ExternalID)
				}
			}},
		{name: "an empty e-mail is no e-mail", patch: `{"email": ""}`, previous: `{"email":"billing@acme.example"}`,
			check: func(t *testing.T, c Customer) {
				if c.Email != nil {
					t.Errorf("email %q, want none", *c.Email)
				}
			}},
		{name: "an object member replaces the whole object", patch: `{"address": {"line1": "2 Side St", "city": "Paris", "postalCode": "75001", "country": "FR"}}`,
			previous: `{"address":{"line1":"1 Main St","line2":null,"city":"Austin","region":null,"postalCode":"78701","country":"US"}}`,
			check: func(t *testing.T, c Customer) {
				eq(t, c.Address.Country, "FR")
				eq(t, c.Address.Region, (*string)(nil))
			}},
		{name: "metadata merges key by key, null deletes a key", patch: `{"metadata": {"tier": "platinum", "region": null, "new": "x"}}`,
			previous: `{"metadata":{"new":null,"region":"west","tier":"gold"}}`,
			check:    func(t *testing.T, c Customer) { eq(t, c.Metadata, map[string]string{"tier": "platinum", "new": "x"}) }},
		{name: "a key set to its value is no change", patch: `{"metadata": {"tier": "gold", "absent": null}}`, previous: `{}`},
		{name: "null metadata deletes every key", patch: `{"metadata": null}`, previous: `{"metadata":{"region":"west","tier":"gold"}}`,
			check: func(t *testing.T, c Customer) { eq(t, c.Metadata, map[string]string{}) }},
		{name: "null on a field that cannot be cleared", patch: `{"name": null, "taxExempt": null}`,
			problems: []string{"name:invalid_type", "taxExempt:invalid_type"}},
		{name: "every immutable field, with the other problems", patch: `{"customerId": "cus_2", "createdAt": "2025-01-01T00:00:00Z", "email": "not-an-address", "preferredLocale": "xx"}`,
			problems: []string{"createdAt:immutable_field", "customerId:immutable_field", "email:invalid_format", "preferredLocale:invalid_value"}},
		{name: "a member that is no field", patch: `{"nmae": "typo"}`, problems: []string{"nmae:unknown_field"}},
		{name: "a value of the wrong type", patch: `{"taxExempt": "yes"}`, problems: []string{"taxExempt:invalid_type"}},
		{name: "a field's own rule on its new value", patch: `{"address": {"line1": "x", "city": "y", "postalCode": "z", "country": "UK"}}`,
			problems: []string{"address.country:invalid_country"}},
		{name: "the metadata rule on the merged result", patch: `{"metadata": {"` + strings.Repeat("k", 41) + `": "v"}}`,
			problems: []string{"metadata:invalid_key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			patch, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			before, after := stored(), stored()
			var p Problems
			CustomerPatch.Apply(&after, patch, &p)
			var got []string
			for _, f := range p.Fields() {
				got = append(got, f.Field+":"+f.Reason)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.problems) {
				t.Fatalf("problems %v, want %v", got, c.problems)
			}
			if len(c.problems) > 0 {
				return
			}
			prev, _ := json.Marshal(CustomerPatch.Previous(&before, &after, patch))
			if string(prev) != c.previous {
				t.Errorf("previous attributes %s, want %s", prev, c.previous)
			}
			if c.check != nil {
				c.check(t, after)
			}
			if !reflect.DeepEqual(before, stored()) {
				t.Errorf("the patch changed the resource it was applied beside: %+v", before)
			}
		})
	}
}

func eq[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestPatchRulesOfEveryResource: each resource's rule takes its updatable fields and refuses
// every other field of the resource as immutable; what null does on each.
func TestPatchRulesOfEveryResource(t *testing.T) {
	type rule interface {
		Updatable() []string
		IsImmutable(string) bool
	}
	for _, c := range []struct {
		name      string
		rule      rule
		answer    any
		updatable []string
		immutable []string // a few of them, by name
	}{
		{"customer", CustomerPatch, Customer{}, []string{"name", "email", "address", "taxExempt", "preferredLocale", "externalId", "metadata"},
			[]string{"customerId", "object", "createdAt", "merchantAccountId", "environment"}},
		{"billing account", BillingAccountPatch, BillingAccount{}, []string{"collectionMethod", "defaultPaymentMethodId", "dunning", "metadata"},
			[]string{"billingAccountId", "customerId", "currency", "taxAddress", "defaultPaymentMethod"}},
		{"price", PricePatch, Price{}, []string{"active", "nickname", "metadata"},
			[]string{"unitAmount", "currency", "priceType", "tiers", "tiersMode", "meterId", "billingInterval", "billingIntervalCount", "transformQuantity", "productId", "name"}},
		{"coupon", CouponPatch, Coupon{}, []string{"active", "metadata"}, []string{"percentOff", "amountOff", "currency", "name"}},
		{"webhook endpoint", WebhookEndpointPatch, WebhookEndpoint{}, []string{"url", "enabledEvents", "description", "metadata"},
			[]string{"endpointId", "status", "secret", "disabledReason"}},
		{"merchant account", MerchantAccountPatch, MerchantAccountObject{}, []string{"displayName", "supportEmail", "metadata"},
			[]string{"merchantAccountId", "status", "legalEntityType", "country", "email", "businessAddress", "onboarding"}},
		{"invoice", InvoicePatch, Invoice{}, []string{"lines", "daysUntilDue", "memo", "metadata"},
			[]string{"invoiceId", "status", "customerId", "currency", "couponIds", "total", "dueDate", "number"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.rule.Updatable(); !slices.Equal(got, c.updatable) {
				t.Errorf("updatable %v, want %v", got, c.updatable)
			}
			for _, f := range c.immutable {
				if !c.rule.IsImmutable(f) {
					t.Errorf("%s is not immutable", f)
				}
			}
			for _, f := range JSONFields(reflect.TypeOf(c.answer)) {
				if c.rule.IsImmutable(f) == slices.Contains(c.updatable, f) {
					t.Errorf("%s: immutable %v, updatable %v: every field is one or the other", f, c.rule.IsImmutable(f), slices.Contains(c.updatable, f))
				}
			}
		})
	}
}

// TestPatchRuleFieldChecks: the rules' own checks on what they update.
func TestPatchRuleFieldChecks(t *testing.T) {
	apply := func(t *testing.T, patch string, v any) []string {
		t.Helper()
		pt, err := ParsePatch([]byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		var p Problems
		switch x := v.(type) {
		case *BillingAccount:
			BillingAccountPatch.Apply(x, pt, &p)
		case *WebhookEndpoint:
			WebhookEndpointPatch.Apply(x, pt, &p)
		case *MerchantAccountObject:
			MerchantAccountPatch.Apply(x, pt, &p)
		case *InvoiceEdit:
			InvoicePatch.Apply(x, pt, &p)
		case *Price:
			PricePatch.Apply(x, pt, &p)
		}
		var out []string
		for _, f := range p.Fields() {
			out = append(out, f.Field+":"+f.Reason)
		}
		return out
	}
	t.Run("a billing account's default payment method, by ID", func(t *testing.T) {
		ba := BillingAccount{DefaultPaymentMethod: &PaymentMethodSummary{PaymentMethodID: "pm_old", Brand: "visa", Last4: "4242"}}
		before := ba
		eq(t, apply(t, `{"defaultPaymentMethodId": "pm_new"}`, &ba), []string(nil))
		eq(t, ba.DefaultPaymentMethod.PaymentMethodID, "pm_new")
		prev := BillingAccountPatch.Previous(&before, &ba, Patch{"defaultPaymentMethodId": nil})
		eq(t, prev["defaultPaymentMethod"], any(before.DefaultPaymentMethod))
		eq(t, apply(t, `{"defaultPaymentMethodId": null}`, &ba), []string(nil))
		eq(t, ba.DefaultPaymentMethod, (*PaymentMethodSummary)(nil))
		eq(t, apply(t, `{"defaultPaymentMethod": {"paymentMethodId": "pm_x"}}`, &ba), []string{"defaultPaymentMethod:immutable_field"})
	})
	t.Run("a billing account's dunning, checked and completed", func(t *testing.T) {
		ba := BillingAccount{}
		eq(t, apply(t, `{"dunning": {"schedule": ["5d", "3d"]}}`, &ba), []string{"dunning.schedule[1]:not_increasing"})
		ba = BillingAccount{}
		eq(t, apply(t, `{"dunning": {"schedule": ["3d"]}}`, &ba), []string(nil))
		eq(t, ba.Dunning.FinalAction, FinalMarkUncollectible)
		eq(t, apply(t, `{"dunning": null}`, &ba), []string(nil))
		eq(t, ba.Dunning, (*Dunning)(nil))
	})
	t.Run("a webhook endpoint's url and events, as at creation", func(t *testing.T) {
		ep := WebhookEndpoint{Environment: Production, URL: "https://a.example.com/", EnabledEvents: []string{"*"}}
		eq(t, apply(t, `{"url": "http://b.example.com/", "enabledEvents": ["invoice.paid", "invoice.payed", "invoice.paid"]}`, &ep),
			[]string{"enabledEvents[1]:unknown_event_type", "url:https_required"})
		ep = WebhookEndpoint{Environment: Sandbox}
		eq(t, apply(t, `{"url": "HTTP://0x7f000001/hook", "enabledEvents": ["invoice.paid", "invoice.paid"]}`, &ep), []string(nil))
		eq(t, ep.URL, "http://127.0.0.1/hook")
		eq(t, ep.EnabledEvents, []string{"invoice.paid"})
	})
	t.Run("a merchant account's support e-mail", func(t *testing.T) {
		m := MerchantAccountObject{}
		eq(t, apply(t, `{"supportEmail": "nope", "displayName": null}`, &m), []string{"displayName:invalid_type", "supportEmail:invalid_format"})
		eq(t, apply(t, `{"supportEmail": "help@acme.example"}`, &m), []string(nil))
		eq(t, *m.SupportEmail, "help@acme.example")
	})
	t.Run("a price: active and nickname; what it bills is immutable", func(t *testing.T) {
		pr := Price{Active: true}
		eq(t, apply(t, `{"active": false, "nickname": "legacy", "unitAmount": 5, "currency": "EUR"}`, &pr),
			[]string{"currency:immutable_field", "unitAmount:immutable_field"})
		pr = Price{Active: true}
		eq(t, apply(t, `{"active": false, "nickname": "legacy"}`, &pr), []string(nil))
		eq(t, pr.Status(), CatalogArchived)
	})
	t.Run("an invoice's lines, terms and state", func(t *testing.T) {
		e := InvoiceEdit{Invoice: Invoice{InvoiceID: "inv_1", Status: InvoiceDraft}}
		eq(t, apply(t, `{"lines": []}`, &e), []string{"lines:required"})
		eq(t, apply(t, `{"lines": [{"priceId": "p", "quantity": 2}], "daysUntilDue": 30, "memo": "Thanks"}`, &e), []string(nil))
		eq(t, e.NewLines, []InvoiceLineInput{{PriceID: "p", Quantity: ptr(int64(2))}})
		eq(t, *e.DaysUntilDue, int64(30))
		if err := InvoicePatch.Conflict(&e, Patch{"memo": nil}); err != nil {
			t.Errorf("a draft's memo: %v", err)
		}
		open := InvoiceEdit{Invoice: Invoice{InvoiceID: "inv_1", Status: InvoiceOpen}}
		if err := InvoicePatch.Conflict(&open, Patch{"metadata": nil}); err != nil {
			t.Errorf("an open invoice's metadata: %v", err)
		}
		err := InvoicePatch.Conflict(&open, Patch{"metadata": nil, "memo": nil})
		if e, ok := err.(*Error); !ok || e.Code != EConflict || e.Details["currentState"] != "open" {
			t.Errorf("an open invoice's memo: %v, want 409 with currentState open", err)
		}
	})
}

// TestPatchProblemsOnTheirOwn: the edge's one-pass check applies the rule to a seed without stored
// values and reports what the patch alone shows.
func TestPatchProblemsOnTheirOwn(t *testing.T) {
	patch, _ := ParsePatch([]byte(`{"url": "ftp://x", "secret": "s", "metadata": {"a": null}}`))
	var got []string
	for _, f := range WebhookEndpointPatch.Problems(patch, WebhookEndpoint{Environment: Sandbox}) {
		got = append(got, f.Field+":"+f.Reason)
	}
	eq(t, got, []string{"secret:immutable_field", "url:invalid_scheme"})
	if _, err := ParsePatch([]byte(`[1]`)); ErrorCode(err) != EBadRequest {
		t.Errorf("a patch that is no object: %v", err)
	}
}

// TestCheckPricesNamed: an archived price is refused where a new document names it, except where
// it already was; an archived coupon is refused on a new document.
func TestCheckPricesNamed(t *testing.T) {
	prices := map[string]Price{"on": {PriceID: "on", Active: true}, "off": {PriceID: "off"}}
	if err := CheckPricesNamed(prices, []PriceRef{{"on", "lines[0].priceId"}, {"gone", "lines[1].priceId"}}, nil); err != nil {
		t.Errorf("active and missing prices: %v", err)
	}
	err := CheckPricesNamed(prices, []PriceRef{{"on", "lines[0].priceId"}, {"off", "lines[1].priceId"}}, nil)
	e, ok := err.(*Error)
	if !ok || e.Code != EConflict || e.Details["currentState"] != "archived" || e.Details["field"] != "lines[1].priceId" {
		t.Errorf("an archived price: %v %+v", err, e)
	}
	if err := CheckPricesNamed(prices, []PriceRef{{"off", "items[0].priceId"}}, []string{"off"}); err != nil {
		t.Errorf("an archived price already billed: %v", err)
	}
	coupons := map[string]Coupon{"c1": {CouponID: "c1", Active: true}, "c2": {CouponID: "c2"}}
	err = CheckCouponsListed(coupons, []string{"c1", "c2"})
	if e, ok := err.(*Error); !ok || e.Details["currentState"] != "archived" || e.Details["field"] != "couponIds[1]" {
		t.Errorf("an archived coupon: %v", err)
	}
}

// TestDueDate: payment terms from finalization.
func TestDueDate(t *testing.T) {
	at := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	if DueDate(at, nil) != nil {
		t.Error("no terms, a due date")
	}
	eq(t, *DueDate(at, ptr(int64(0))), at)
	eq(t, *DueDate(at, ptr(int64(30))), time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC))
}
