package httpapi_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// The contract's value tables are the code's own: the currencies the rails take, the assigned
// countries, the event catalog. A table added to one and not the other fails here.
func TestContractTablesAreTheCodes(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	enum := func(name string) []string {
		var out []string
		for _, v := range spec.Components.Schemas[name].Value.Enum {
			out = append(out, fmt.Sprint(v))
		}
		slices.Sort(out)
		return out
	}
	currencies := slices.Sorted(maps.Keys(remit.SupportedCurrencies))
	events := []string{"*"}
	for _, e := range remit.EventTypes {
		events = append(events, string(e))
	}
	slices.Sort(events)
	var emails []string
	for _, e := range remit.EmailTypes {
		emails = append(emails, string(e))
	}
	slices.Sort(emails)
	locales := slices.Sorted(slices.Values(remit.Locales))
	for name, want := range map[string][]string{"CurrencyCode": currencies, "CountryCode": remit.Countries, "EventTypeFilter": events,
		"EmailType": emails, "Locale": locales} {
		if got := enum(name); !slices.Equal(got, want) {
			t.Errorf("%s enum %v\ndiffers from the code's table %v", name, got, want)
		}
	}
	// The export datasets, in the same order (docs/exports.md lists them so).
	var datasets []string
	for _, v := range spec.Paths.Value("/v1/exports/{dataset}.csv").Parameters.GetByInAndName("path", "dataset").Schema.Value.Enum {
		datasets = append(datasets, fmt.Sprint(v))
	}
	if !slices.Equal(datasets, remit.ExportDatasets) {
		t.Errorf("the export datasets %v differ from remit.ExportDatasets %v", datasets, remit.ExportDatasets)
	}
	// Every rule a schema names is one the edge can word.
	var walk func(string, *openapi3.SchemaRef)
	seen := map[*openapi3.Schema]bool{}
	walk = func(at string, r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		seen[r.Value] = true
		if name, ok := r.Value.Extensions["x-remit-rule"]; ok {
			if _, known := remit.ValueRules[fmt.Sprint(name)]; !known {
				t.Errorf("%s names x-remit-rule %v, which remit.ValueRules does not have", at, name)
			}
		}
		for k, p := range r.Value.Properties {
			walk(at+"."+k, p)
		}
		walk(at+"[]", r.Value.Items)
	}
	for name, s := range spec.Components.Schemas {
		walk(name, s)
	}
}

// The findings of a property-based tester, each held here by name: values the contract's tables
// and patterns now refuse answer 422 naming the field, with the rule's own reason.
func TestContractRefusesWhatTheServerRefuses(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		customer := func(country string) map[string]any {
			return map[string]any{"name": "C", "address": map[string]any{"line1": "1 St", "city": "X", "postalCode": "1", "country": country}}
		}
		for _, c := range []struct{ country, want string }{
			{"XB", "body:address.country:invalid_country"}, {"QK", "body:address.country:invalid_country"},
			{"UK", "body:address.country:invalid_country"}, {"usa", "body:address.country:invalid_format"},
		} {
			wantFields(t, e.Do("POST", "/v1/customers", customer(c.country)), c.want)
		}
		e.Must(201, "POST", "/v1/customers", customer("GB"))
		// Currencies: the rule's reasons, whichever layer refuses.
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "C", "amountOff": 5, "currency": "MXN"}), "body:currency:currency_not_supported")
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "C", "amountOff": 5, "currency": "usd"}), "body:currency:invalid_currency")
		// Event types, from the catalog.
		wantFields(t, e.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": "https://h.example.com", "enabledEvents": []string{"invoice.finalised"}}),
			"body:enabledEvents[0]:unknown_event_type")
		// The Idempotency-Key is visible ASCII: a space or a non-ASCII letter is a 422 on the header.
		for _, key := range []string{"has space", "clé"} {
			wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "C", "percentOff": 5}, testkit.Key(key)), "header:Idempotency-Key:invalid_format")
		}
		// Integer and enum query parameters of the receipts and tax lists.
		wantFields(t, e.Do("GET", "/v1/payment-receipts?limit=x&status=void", nil), "query:limit:invalid_type", "query:status:invalid_enum")
		wantFields(t, e.Do("GET", "/v1/tax-transactions?limit=0&status=open", nil), "query:limit:out_of_range", "query:status:invalid_enum")
		// An empty metadata key.
		wantFields(t, e.Do("POST", "/v1/coupons", map[string]any{"name": "C", "percentOff": 5, "metadata": map[string]any{"": "v"}}), "body:metadata:invalid_key")
		// Either-or bodies: the rule names the fields (the contract's oneOf says it to clients).
		wantFields(t, e.Do("POST", "/v1/test-helpers/clock/advance", map[string]any{"to": "2099-01-01T00:00:00Z", "seconds": 5}),
			"body:to:mutually_exclusive", "body:seconds:mutually_exclusive")
		wantFields(t, e.Do("POST", "/v1/prices", map[string]any{"priceId": "p", "productId": "p", "name": "P", "priceType": "free",
			"currency": "USD", "meterId": "m"}), "body:meterId:not_allowed")
	})
}

// TestPatchSchemasAreTheRules: every update (PATCH) of the contract names its rule (x-remit-patch);
// its schema's properties are the rule's updatable members, nullable exactly where null clears one,
// and every field of the resource it answers is one the rule updates or refuses as immutable.
func TestPatchSchemasAreTheRules(t *testing.T) {
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, item := range spec.Paths.Map() {
		op := item.Patch
		if op == nil {
			continue
		}
		for _, ct := range []string{"application/merge-patch+json", "application/json"} {
			if op.RequestBody.Value.Content.Get(ct) == nil {
				t.Errorf("PATCH %s does not take %s", path, ct)
			}
		}
		body := op.RequestBody.Value.Content.Get("application/json").Schema.Value
		name, _ := body.Extensions["x-remit-patch"].(string)
		rule, ok := remit.PatchRules[name]
		if !ok {
			t.Errorf("PATCH %s: x-remit-patch %q names no rule of remit.PatchRules", path, name)
			continue
		}
		seen[name] = true
		props := slices.Sorted(maps.Keys(body.Properties))
		if want := slices.Sorted(slices.Values(rule.Updatable())); !slices.Equal(props, want) {
			t.Errorf("PATCH %s: the schema takes %v, the rule %v", path, props, want)
		}
		var nullable []string
		for _, p := range props {
			if body.Properties[p].Value.Nullable {
				nullable = append(nullable, p)
			}
		}
		if want := slices.Sorted(slices.Values(rule.Clearable())); !slices.Equal(nullable, want) {
			t.Errorf("PATCH %s: nullable %v, the rule clears %v", path, nullable, want)
		}
		answer := op.Responses.Value("200").Value.Content.Get("application/json").Schema.Value.Properties["data"].Value
		for field := range answer.Properties {
			if !rule.IsImmutable(field) && !slices.Contains(rule.Updatable(), field) {
				t.Errorf("PATCH %s: the resource's field %s is neither updatable nor immutable", path, field)
			}
			if rule.IsImmutable(field) && slices.Contains(rule.Updatable(), field) {
				t.Errorf("PATCH %s: %s is updatable and immutable", path, field)
			}
		}
		if len(op.Parameters) == 0 || !slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool { return p.Value.Name == "Idempotency-Key" }) {
			t.Errorf("PATCH %s takes no Idempotency-Key", path)
		}
	}
	for name := range remit.PatchRules {
		if !seen[name] {
			t.Errorf("the rule %s has no PATCH in the contract", name)
		}
	}
}
