package api_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/remit-billing/remit/api"
)

// The API reference (GET /docs) shows an example for every request body and every response. The
// document's examples are validated against their schemas when it loads (api.Spec fails on a
// wrong one); this test checks that none is missing.
func TestEveryRequestAndResponseHasAnExample(t *testing.T) {
	doc, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	ops := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops++
			name := op.OperationID + " (" + method + " " + path + ")"
			if op.RequestBody != nil {
				mt := op.RequestBody.Value.Content.Get("application/json")
				if mt == nil || !mediaHasExample(mt) {
					missing = append(missing, name+": request body")
				}
			}
			for code, res := range op.Responses.Map() {
				if res.Value == nil {
					continue
				}
				for ct, mt := range res.Value.Content {
					// Documents (application/pdf, text/html) are binary or pages: no JSON example.
					if ct != "application/json" {
						continue
					}
					if !mediaHasExample(mt) {
						missing = append(missing, name+": response "+code+" "+ct)
					}
				}
			}
		}
	}
	if ops < 49 {
		t.Errorf("only %d operations in the document", ops)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d requests or responses without an example:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// mediaHasExample: the media type has example(s), or its schema yields a complete example: the
// schema has one, or it is an object whose every property (after $ref) has one, recursively.
func mediaHasExample(mt *openapi3.MediaType) bool {
	if mt.Example != nil || len(mt.Examples) > 0 {
		return true
	}
	return schemaHasExample(mt.Schema, 0)
}

func schemaHasExample(s *openapi3.SchemaRef, depth int) bool {
	if s == nil || s.Value == nil || depth > 8 {
		return false
	}
	v := s.Value
	if v.Example != nil {
		return true
	}
	if len(v.Properties) == 0 {
		return false
	}
	for _, p := range v.Properties {
		if !schemaHasExample(p, depth+1) {
			return false
		}
	}
	return true
}

// A stateful client (or tester) chains create → read → act through the contract's links: every
// operation that creates a resource links to every operation that takes the resource's ID in the
// path.
func TestCreateOperationsLinkToTheirResource(t *testing.T) {
	doc, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	creates := map[string]string{ // operation -> the ID of what it creates
		"createPrice": "priceId", "createCoupon": "couponId", "createCustomer": "customerId",
		"createBillingAccount": "billingAccountId", "createQuote": "quoteId", "acceptQuote": "subscriptionId",
		"createInvoice": "invoiceId", "createCreditNote": "creditNoteId", "createUsageThreshold": "thresholdId",
		"createWebhookEndpoint": "endpointId", "createMerchantAccount": "merchantAccountId",
	}
	byParam := map[string][]string{} // path parameter -> operations taking it
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			ops[o.OperationID] = o
			for _, part := range strings.Split(path, "/") {
				if strings.HasPrefix(part, "{") {
					byParam[strings.Trim(part, "{}")] = append(byParam[strings.Trim(part, "{}")], o.OperationID)
				}
			}
		}
	}
	for id, field := range creates {
		var links openapi3.Links
		for code, res := range ops[id].Responses.Map() {
			if strings.HasPrefix(code, "2") {
				links = res.Value.Links
			}
		}
		if len(byParam[field]) == 0 {
			t.Errorf("%s: no operation takes %s", id, field)
		}
		for _, target := range byParam[field] {
			l, ok := links[strings.ToUpper(target[:1])+target[1:]]
			if !ok || l.Value.OperationID != target || l.Value.Parameters[field] != "$response.body#/data/"+field {
				t.Errorf("%s has no link to %s passing data.%s", id, target, field)
			}
		}
	}
}
