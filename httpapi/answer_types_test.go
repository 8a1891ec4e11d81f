package httpapi_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// Every answer's Go type (package remit's domain types, encoded as they are) and its schema in
// api/openapi.yaml name the same fields, with the same kinds: a field the code can send is
// declared even when no test makes it appear (an omitempty field, a pointer left nil), a nil
// pointer is declared nullable and a plain value is not, and a declared field is one the code
// sends. The answers the tests see are checked the same way, field by field, by the testkit
// (api.Strict).
func TestAnswerTypesMatchTheirSchemas(t *testing.T) {
	doc, err := api.Strict()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range answerTypes {
		s := doc.Components.Schemas[name]
		if s == nil {
			t.Errorf("api/openapi.yaml has no schema %s", name)
			continue
		}
		compareType(t, name, reflect.TypeOf(v), s.Value)
	}
}

// answerTypes pairs each schema of an answer with the Go type the server encodes for it.
var answerTypes = map[string]any{
	"Price": remit.Price{}, "Coupon": remit.Coupon{}, "TestClock": remit.TestClock{},
	"CreditNote": remit.CreditNote{}, "Customer": remit.Customer{}, "BillingAccount": remit.BillingAccount{},
	"PaymentMethodSetupSession": remit.SetupSession{}, "PaymentMethod": remit.PaymentMethod{}, "SavedPaymentMethod": remit.SavedPaymentMethod{},
	"Email": remit.Email{}, "Event": remit.Event{}, "Invoice": remit.Invoice{}, "TaxTransaction": remit.TaxTransaction{},
	"BalanceEntry": remit.BalanceEntry{}, "CustomerBalance": remit.CustomerBalance{},
	"MerchantAccount": remit.MerchantAccountObject{}, "PayoutProfile": remit.PayoutProfile{}, "Claim": remit.OrganizationClaim{},
	"Meter": remit.Meter{}, "Payment": remit.Payment{}, "PaymentReceipt": remit.PaymentReceipt{},
	"Settlement": remit.Settlement{}, "Payout": remit.Payout{}, "Refund": remit.Refund{},
	"Quote": remit.Quote{}, "Subscription": remit.SubscriptionWire{}, "PriceMigration": remit.PriceMigration{}, "UsageEvent": remit.UsageEvent{},
	"UsageThreshold": remit.UsageThreshold{}, "Verification": remit.Verification{},
	"WebhookEndpoint": remit.WebhookEndpoint{}, "WebhookDelivery": remit.WebhookDelivery{},
	"ProcessorWebhookAck": remit.ProcessorWebhookAck{}, "FieldProblem": remit.FieldError{},
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// compareType checks that schema s describes what encoding/json writes for typ, at path.
func compareType(t *testing.T, path string, typ reflect.Type, s *openapi3.Schema) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	want := ""
	switch {
	case typ == timeType:
		want = openapi3.TypeString
		if s.Format != "date-time" {
			t.Errorf("%s: a time, declared with format %q, not date-time", path, s.Format)
		}
	case typ == rawType || typ.Kind() == reflect.Interface:
		return // any JSON: what the schema says is checked on the answers themselves
	case typ.Kind() == reflect.Struct:
		want = openapi3.TypeObject
		compareStruct(t, path, typ, s)
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array:
		want = openapi3.TypeArray
		if s.Items != nil {
			compareType(t, path+"[]", typ.Elem(), s.Items.Value)
		}
	case typ.Kind() == reflect.Map:
		want = openapi3.TypeObject
		if ap := s.AdditionalProperties.Schema; ap != nil {
			compareType(t, path+"{}", typ.Elem(), ap.Value)
		} else if has := s.AdditionalProperties.Has; has == nil || !*has {
			t.Errorf("%s: a map, declared without additionalProperties", path)
		}
	case typ.Kind() == reflect.String:
		want = openapi3.TypeString
	case typ.Kind() == reflect.Bool:
		want = openapi3.TypeBoolean
	case typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64:
		want = openapi3.TypeNumber
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64:
		want = openapi3.TypeInteger
	}
	if want != "" && !s.Type.Is(want) {
		t.Errorf("%s: the code sends %s (%s), declared %v", path, want, typ, s.Type.Slice())
	}
}

// compareStruct checks the fields of a struct type against the properties of s, both ways.
func compareStruct(t *testing.T, path string, typ reflect.Type, s *openapi3.Schema) {
	t.Helper()
	sent := map[string]bool{}
	for _, f := range jsonFields(typ) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		sent[name] = true
		p := s.Properties[name]
		if p == nil {
			t.Errorf("%s.%s (%s): the code sends it, the schema does not declare it", path, name, f.Type)
			continue
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		switch {
		case f.Type.Kind() == reflect.Pointer && !omit && !p.Value.Nullable:
			t.Errorf("%s.%s: a pointer, sent as null when unset, declared without nullable", path, name)
		case isScalar(f.Type) && p.Value.Nullable:
			t.Errorf("%s.%s: a plain %s, never null, declared nullable", path, name, f.Type)
		}
		compareType(t, path+"."+name, f.Type, p.Value)
	}
	for name := range s.Properties {
		if !sent[name] {
			t.Errorf("%s.%s: declared, but the code never sends it", path, name)
		}
	}
}

// jsonFields lists the fields encoding/json writes for a struct type, embedded structs' included.
func jsonFields(typ reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" || tag == "" {
			continue
		}
		out = append(out, f)
	}
	return out
}

func isScalar(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return typ == timeType
}
