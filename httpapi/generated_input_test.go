package httpapi_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
	"github.com/remit-billing/remit/internal/testkit"
)

// TestGeneratedInput holds the server to its contract with requests drawn from the contract
// itself, for every operation (docs/api-conventions.md, "What the schema says"):
//
//   - a request the schemas accept (combinators and value tables included, with the rules the
//     schema cannot say applied: see proseRules) answers 2xx, or a state or reference error (404,
//     409), never 422 and never 5xx;
//   - the same request with one schema rule broken (a required field left out, a wrong type, a bound,
//     a pattern, an enum, an unknown field, a metadata key, a combinator, a parameter) answers 422
//     naming the field;
//   - every answer matches its documented schema (testkit checks each one).
//
// The budget is REMIT_GENERATED_CHECKS checks per operation (default 25; two requests each), from the
// seed REMIT_GENERATED_SEED (default: drawn and logged). To replay a failure, run the test with the
// seed it logged.
func TestGeneratedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("generated input: not in -short")
	}
	checks, seed := generatedBudget(t)
	spec, err := api.Spec()
	if err != nil {
		t.Fatal(err)
	}
	// Serial: rapid reads its seed and budget from process-wide flags (setRapid).
	testkit.RunWith(t, testkit.Options{Serial: true}, func(t *testing.T, e *testkit.Env) {
		pool := generatedFixtures(t, e)
		t.Logf("generated input: seed %d, %d checks per operation (REMIT_GENERATED_SEED=%d REMIT_GENERATED_CHECKS=%d to replay)", seed, checks, seed, checks)
		tally := map[string]map[int]int{}
		for i, op := range contractOperations(spec) {
			tally[op.op.OperationID] = map[int]int{}
			t.Run(op.op.OperationID, func(t *testing.T) {
				setRapid(t, seed+uint64(i), checks)
				rapid.Check(t, func(rt *rapid.T) { checkOperation(rt, e, op, pool, tally[op.op.OperationID]) })
			})
		}
		logTally(t, tally)
	})
}

// generatedBudget reads the budget and the seed.
func generatedBudget(t *testing.T) (checks int, seed uint64) {
	checks = 25 // keeps .ci/run (both stores, race detector) within its time; longer runs: set the variable
	if v := os.Getenv("REMIT_GENERATED_CHECKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("REMIT_GENERATED_CHECKS=%q: want a positive integer", v)
		}
		checks = n
	}
	seed = uint64(time.Now().UnixNano())
	if v := os.Getenv("REMIT_GENERATED_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("REMIT_GENERATED_SEED=%q: want an unsigned integer", v)
		}
		seed = n
	}
	return checks, seed
}

// setRapid points rapid's flags at this operation's seed and budget, and keeps its fail files out
// of the repository.
func setRapid(t *testing.T, seed uint64, checks int) {
	for name, v := range map[string]string{"rapid.seed": strconv.FormatUint(seed, 10), "rapid.checks": strconv.Itoa(checks), "rapid.nofailfile": "true"} {
		if err := flag.Set(name, v); err != nil {
			t.Fatalf("flag %s: %v", name, err)
		}
	}
}

type contractOp struct {
	method, path string
	op           *openapi3.Operation
	params       []*openapi3.Parameter
	body         *openapi3.Schema
	hosted       bool // authorized by a hosted token, not by the API key
}

// contractOperations lists the contract's operations in a stable order.
func contractOperations(spec *openapi3.T) []contractOp {
	var out []contractOp
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			c := contractOp{method: method, path: path, op: op, hosted: hostedOp(spec, op)}
			for _, ps := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range ps {
					c.params = append(c.params, p.Value)
				}
			}
			if op.RequestBody != nil {
				c.body = op.RequestBody.Value.Content.Get("application/json").Schema.Value
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].op.OperationID < out[j].op.OperationID })
	return out
}

// hostedOp reports whether an operation is authorized otherwise than by the API key (a hosted
// token, or its path's token).
func hostedOp(spec *openapi3.T, op *openapi3.Operation) bool {
	sec := spec.Security
	if op.Security != nil {
		sec = *op.Security
	}
	for _, req := range sec {
		if _, ok := req["bearerAuth"]; ok {
			return false
		}
	}
	return true
}

// drawn is one request: its path and query parameters, headers and body.
type drawn struct {
	path   map[string]string
	query  map[string]string
	header map[string]string
	body   map[string]any
}

// logTally logs how many requests each operation was sent and how it answered them.
func logTally(t *testing.T, tally map[string]map[int]int) {
	total := 0
	var lines []string
	for _, id := range sortedKeys(tally) {
		var parts []string
		for _, status := range sortedKeys(statusKeys(tally[id])) {
			n := tally[id][atoi(status)]
			total += n
			parts = append(parts, fmt.Sprintf("%s×%d", status, n))
		}
		lines = append(lines, id+" "+strings.Join(parts, " "))
	}
	t.Logf("generated input: %d requests\n%s", total, strings.Join(lines, "\n"))
}

func statusKeys(m map[int]int) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[strconv.Itoa(k)] = true
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func checkOperation(rt *rapid.T, e *testkit.Env, op contractOp, pool map[string][]string, tally map[int]int) {
	g := &gen{t: rt, pool: pool, own: createdID[op.op.OperationID], now: e.Clock.Now().Add(time.Hour).UTC(), foreign: strings.HasPrefix(op.path, "/processor-webhooks/"), merchantNow: func() time.Time {
		now, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e.Must(200, "GET", "/v1/test-helpers/clock", nil).Data()["now"]))
		if err != nil {
			rt.Fatalf("clock: %v", err)
		}
		return now
	}}
	req := drawRequest(g, op)
	createdRange(req)
	if fix := proseRules[op.op.OperationID]; fix != nil {
		fix(g, req)
	}
	res := send(e, op, req)
	tally[res.Status]++
	allowed := []int{404, 409}
	if op.hosted {
		allowed = append(allowed, 401) // a drawn token is no token
	}
	if op.op.OperationID == "receiveStripeWebhook" {
		allowed = append(allowed, 400) // a drawn signature is none (and the test's server has no secret to check one)
	}
	if (res.Status < 200 || res.Status > 299) && !slices.Contains(allowed, res.Status) {
		rt.Fatalf("%s with a valid request: %d, want 2xx or one of %v\nrequest: %s\nanswer: %s", op.op.OperationID, res.Status, allowed, show(req), res.Body)
	}
	if res.Status == 200 && judgedEachArray(op) != "" {
		validItems(rt, op, req, res)
	}
	if op.hosted {
		return // the token is checked before the request's content: no 422 to reach
	}
	if _, ok := req.header["Idempotency-Key"]; ok { // a new key: the first one is spent on the first body
		req.header["Idempotency-Key"] = g.key(idempotencyKeySchema(op))
	}
	b, ok := breakRequest(g, op, req)
	if !ok {
		return
	}
	res = send(e, op, req)
	tally[res.Status]++
	if item, inner, ok := judgedItem(op, b); ok {
		// A field of an item judged alone (a batch's event): the batch answers 200, the item is
		// rejected with the 422 its own operation gives, naming the field as that operation does.
		res = itemAnswer(rt, op, req, res, b, item)
		b.fields = inner
	}
	if res.Status != 422 {
		rt.Fatalf("%s with %s broken (%s): %d, want 422\nrequest: %s\nanswer: %s", op.op.OperationID, b.fields, b.rule, res.Status, show(req), res.Body)
	}
	named := false
	for _, f := range res.FieldErrors() {
		parts := strings.SplitN(f, ":", 3) // location:field:reason
		if len(parts) == 3 && slices.Contains(b.fields, parts[1]) {
			named = true
		}
	}
	if !named {
		rt.Fatalf("%s with %s broken (%s): the 422 names %v, none of %v\nrequest: %s\nanswer: %s", op.op.OperationID, b.fields, b.rule, res.FieldErrors(), b.fields, show(req), res.Body)
	}
}

// drawRequest draws a request the operation's schemas accept.
func drawRequest(g *gen, op contractOp) *drawn {
	req := &drawn{path: map[string]string{}, query: map[string]string{}, header: map[string]string{}}
	for _, p := range op.params {
		switch {
		case p.In == "query" && (p.Name == "environment" || p.Name == "merchantAccountId"):
			continue // the scope: testkit sends the tenant's sandbox account
		case p.In == "path":
			req.path[p.Name] = fmt.Sprint(g.value(p.Schema, p.Name, "path."+p.Name))
		case p.In == "header" && p.Name == "Idempotency-Key":
			req.header[p.Name] = g.key(p.Schema.Value)
		case p.In == "query" && p.Name != "cursor" && rapid.Bool().Draw(g.t, "query."+p.Name+"?"):
			req.query[p.Name] = fmt.Sprint(g.value(p.Schema, p.Name, "query."+p.Name))
		}
	}
	if op.body != nil {
		req.body = g.object(op.body, "body")
	}
	return req
}

// breakRequest breaks one rule of the request: of its body, or of a parameter.
func breakRequest(g *gen, op contractOp, req *drawn) (breach, bool) {
	var options []func() breach
	if req.body != nil {
		g.objectBreaches(op.body, req.body, nil, &options)
	}
	for _, p := range op.params {
		s := p.Schema.Value
		name := p.Name
		set := func(loc map[string]string, rule, bad string) {
			options = append(options, func() breach { loc[name] = bad; return breach{fields: []string{name}, rule: rule} })
		}
		switch {
		case p.In == "header" && name == "Idempotency-Key":
			set(req.header, "pattern", patternBreach(s.Pattern))
			set(req.header, "maxLength", strings.Repeat("k", int(*s.MaxLength)+1))
		case p.In != "query" || name == "environment" || name == "merchantAccountId":
		case s.Type.Is("integer"):
			set(req.query, "type", "x")
			if s.Min != nil {
				set(req.query, "minimum", strconv.FormatInt(int64(*s.Min)-1, 10))
			}
			if s.Max != nil {
				set(req.query, "maximum", strconv.FormatInt(int64(*s.Max)+1, 10))
			}
		case len(s.Enum) > 0:
			set(req.query, "enum", "not_a_value")
		case s.Format == "date-time":
			set(req.query, "format", "yesterday")
		}
	}
	// A query parameter the operation does not declare.
	options = append(options, func() breach {
		req.query["notAParameter"] = "1"
		return breach{fields: []string{"notAParameter"}, rule: "unknown parameter"}
	})
	if len(options) == 0 {
		return breach{}, false
	}
	return options[rapid.IntRange(0, len(options)-1).Draw(g.t, "breach")](), true
}

func idempotencyKeySchema(op contractOp) *openapi3.Schema {
	for _, p := range op.params {
		if p.In == "header" && p.Name == "Idempotency-Key" {
			return p.Schema.Value
		}
	}
	return nil
}

func send(e *testkit.Env, op contractOp, req *drawn) *testkit.Response {
	path := op.path
	for name, v := range req.path {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if len(req.query) > 0 {
		q := url.Values{}
		for k, v := range req.query {
			q.Set(k, v)
		}
		path += "?" + q.Encode()
	}
	var opts []testkit.Opt
	for k, v := range req.header {
		opts = append(opts, testkit.Header(k, v))
	}
	var body any
	if req.body != nil {
		raw, _ := json.Marshal(req.body)
		opts = append(opts, testkit.Raw(raw, "application/json"))
	}
	return e.Do(strings.ToUpper(op.method), path, body, opts...)
}

func show(req *drawn) string {
	b, _ := json.Marshal(req)
	return string(b)
}

func (d *drawn) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"path": d.path, "query": d.query, "header": d.header, "body": d.body})
}

// createdID names the ID field of what each create operation creates.
var createdID = map[string]string{
	"createPrice": "priceId", "createCoupon": "couponId", "createCustomer": "customerId", "createBillingAccount": "billingAccountId",
	"createQuote": "quoteId", "createInvoice": "invoiceId", "createCreditNote": "creditNoteId", "createUsageThreshold": "thresholdId",
	"createWebhookEndpoint": "endpointId", "createUsageEvent": "eventId", "createMeter": "meterId", "grantCustomerBalance": "entryId", "expireCustomerBalance": "entryId",
}

// proseRules apply to a drawn request the rules each operation's description states and a schema
// cannot (cross-field, time and state rules), so that a request called valid is valid.
var proseRules = map[string]func(g *gen, req *drawn){
	// tenantId, when given, is the caller's organization (403 otherwise); the card volume
	// distribution sums to 100.
	// environment equals the query's; platformMerchantAccountId names an account the platform
	// was granted (the test's organization is no platform: 403).
	"createMerchantAccount": func(g *gen, req *drawn) {
		delete(req.body, "tenantId")
		delete(req.body, "platformMerchantAccountId")
		req.body["environment"] = "sandbox"
		calendarDates(req.body)
		secretValues(req.body)
		if ids, ok := req.body["associatedIdentities"].([]any); ok { // together they own at most 100%
			for _, id := range ids {
				if m := id.(map[string]any); m["principalPercentageOwnership"] != nil {
					m["principalPercentageOwnership"] = 100 / len(ids)
				}
			}
		}
		if u, ok := req.body["underwriting"].(map[string]any); ok {
			sumTo100(g, u, "cardVolumeDistribution", "cardPresentPercentage", "ecommercePercentage", "mailOrderTelephoneOrderPercentage")
			sumTo100(g, u, "volumeDistributionByBusinessType", "businessToConsumerVolumePercentage", "consumerToConsumerVolumePercentage", "otherVolumePercentage")
		}
	},
	// toPriceId is not fromPriceId (a migration moves subscriptions to another price).
	"createPriceMigration": func(g *gen, req *drawn) {
		if from, ok := req.body["fromPriceId"].(string); ok && req.body["toPriceId"] == from {
			last := byte('a')
			if from[len(from)-1] == last {
				last = 'b'
			}
			req.body["toPriceId"] = from[:len(from)-1] + string(last) // another ID of the same length
		}
	},
	// The clock only moves forward (to after its current time); the test keeps each step within
	// 30 days so that thousands of checks stay within the calendar.
	"advanceTestClock": func(g *gen, req *drawn) {
		if _, ok := req.body["to"]; ok {
			req.body["to"] = g.merchantNow().Add(time.Duration(rapid.IntRange(1, 30*24).Draw(g.t, "to.hours")) * time.Hour).Format(time.RFC3339)
		}
		if _, ok := req.body["seconds"]; ok {
			req.body["seconds"] = rapid.IntRange(1, 30*86400).Draw(g.t, "seconds.small")
		}
	},
	// The body's idempotencyKey and the header, when both are given, are equal; environment
	// equals the query's.
	"submitMerchantOnboarding": func(g *gen, req *drawn) {
		if _, ok := req.body["environment"]; ok {
			req.body["environment"] = "sandbox"
		}
		if k, ok := req.body["idempotencyKey"].(string); ok && req.header["Idempotency-Key"] != "" {
			req.header["Idempotency-Key"] = k
		}
	},
	// A usage event happened at most 5 minutes after the merchant clock.
	"createUsageEvent": usageEventRule,
	// Each event of a batch is a usage event, with its rule.
	"createUsageEventBatch": func(g *gen, req *drawn) {
		events, _ := req.body["events"].([]any)
		for i, ev := range events {
			if b, ok := ev.(map[string]any); ok {
				usageEventRule(g, &drawn{body: b})
				events[i] = b
			}
		}
	},
	// An expiry takes effect when it is recorded: effectiveAt is not after the merchant clock.
	"expireCustomerBalance": func(g *gen, req *drawn) {
		if _, ok := req.body["effectiveAt"]; ok {
			req.body["effectiveAt"] = g.past("body.effectiveAt")
		}
	},
	// Tiers ascend by upTo and only the last is open-ended; every tier but the last has a
	// unitAmount.
	"createPrice": func(g *gen, req *drawn) {
		if n, ok := req.body["billingIntervalCount"].(int64); ok {
			if iv, ok := req.body["billingInterval"].(string); ok {
				req.body["billingIntervalCount"] = 1 + n%int64(maxIntervalCount[iv])
			}
		}
		if tiers, ok := req.body["tiers"].([]any); ok {
			for i, t := range tiers {
				tier := t.(map[string]any)
				tier["upTo"] = int64(10 * (i + 1))
				if i == len(tiers)-1 {
					tier["upTo"] = nil
				} else if _, ok := tier["unitAmount"]; !ok {
					tier["unitAmount"] = int64(1)
				}
			}
		}
	},
	// A grant's expiresAt is after its effectiveAt (or after now, without one).
	"grantCustomerBalance": func(g *gen, req *drawn) {
		if _, ok := req.body["expiresAt"]; ok {
			from := g.merchantNow()
			if at, ok := req.body["effectiveAt"].(string); ok {
				if t, _ := time.Parse(time.RFC3339, at); t.After(from) {
					from = t
				}
			}
			req.body["expiresAt"] = from.Add(time.Duration(rapid.IntRange(1, 1000).Draw(g.t, "expiresAt.after")) * time.Hour).Format(time.RFC3339)
		}
	},
	// The billing account bills in the document's currency (the test's is USD, as its prices).
	// A period ends after it starts.
	"createInvoice": func(g *gen, req *drawn) {
		sameCurrency(g, req)
		smallLines(req)
		if start, ok := req.body["periodStart"].(string); ok {
			t, _ := time.Parse(time.RFC3339, start)
			req.body["periodEnd"] = t.Add(time.Duration(rapid.IntRange(1, 24*90).Draw(g.t, "period.hours")) * time.Hour).Format(time.RFC3339)
		}
	},
	// An amendment bills recurring prices only (the test's is price_month); a subscription quote
	// has a recurring line.
	"createQuote": func(g *gen, req *drawn) {
		sameCurrency(g, req)
		smallLines(req)
		if req.body["orderType"] == "subscription_creation" {
			req.body["lines"].([]any)[0].(map[string]any)["priceId"] = "price_month"
		}
		if req.body["orderType"] == "subscription_amendment" {
			for _, l := range req.body["lines"].([]any) {
				if line := l.(map[string]any); line["priceId"] == "price_once" {
					line["priceId"] = "price_month"
				}
			}
		}
		// trialDays: on a subscription_creation quote's recurring lines only.
		for _, l := range req.body["lines"].([]any) {
			if line := l.(map[string]any); req.body["orderType"] != "subscription_creation" || line["priceId"] != "price_month" {
				delete(line, "trialDays")
			}
		}
	},
	// A change's items are recurring prices in the subscription's currency and interval (the
	// test's is price_month), each once.
	"changeSubscription": func(g *gen, req *drawn) {
		items := req.body["items"].([]any)
		first := items[0].(map[string]any)
		first["priceId"] = "price_month"
		req.body["items"] = []any{first}
	},
	// A portal session's returnUrl is a web URL; its flow names what its type needs (left out).
	"createCustomerPortalSession": func(g *gen, req *drawn) {
		if _, ok := req.body["returnUrl"]; ok {
			req.body["returnUrl"] = "https://shop.example/account"
		}
		delete(req.body, "flow")
	},
	// A portal configuration's URLs are web URLs (the logo https); its prices exist (none here).
	"putCustomerPortalConfiguration": func(g *gen, req *drawn) {
		for _, group := range []string{"branding", "links"} {
			if m, ok := req.body[group].(map[string]any); ok {
				for k, v := range m {
					if v != nil && k != "displayName" && k != "primaryColor" {
						m[k] = "https://shop.example/" + k
					}
				}
			}
		}
		if _, ok := req.body["defaultReturnUrl"].(string); ok {
			req.body["defaultReturnUrl"] = "https://shop.example/account"
		}
		if u, ok := req.body["subscriptionUpdate"].(map[string]any); ok {
			u["prices"] = []any{}
		}
	},
	"previewSubscriptionChange": func(g *gen, req *drawn) {
		items := req.body["items"].([]any)
		first := items[0].(map[string]any)
		first["priceId"] = "price_month"
		req.body["items"] = []any{first}
	},
	// A dunning schedule is strictly increasing.
	"createBillingAccount": func(g *gen, req *drawn) {
		if d, ok := req.body["dunning"].(map[string]any); ok {
			steps := d["schedule"].([]any)
			for i := range steps {
				steps[i] = fmt.Sprintf("%dd", (i+1)*6)
			}
		}
	},
	// A credit note's bucket totals, when given, are the sums of its lines' amounts per bucket.
	"createCreditNote": func(g *gen, req *drawn) {
		for _, total := range []string{"creditAmount", "refundAmount", "offsetAmount"} {
			delete(req.body, total)
		}
	},
	// A billing account's default payment method is one of its customer's (the test's customer has
	// none: set it to none); a dunning schedule is strictly increasing.
	"updateBillingAccount": func(g *gen, req *drawn) {
		if _, ok := req.body["defaultPaymentMethodId"]; ok {
			req.body["defaultPaymentMethodId"] = nil
		}
		if d, ok := req.body["dunning"].(map[string]any); ok {
			steps := d["schedule"].([]any)
			for i := range steps {
				steps[i] = fmt.Sprintf("%dd", (i+1)*6)
			}
		}
	},
	// A draft's new lines: prices in its currency (the test's are USD), amounts within the largest.
	"updateInvoice": func(g *gen, req *drawn) {
		if _, ok := req.body["lines"]; ok {
			smallLines(req)
		}
	},
	// An export takes its dataset's filters only, a status its records have, and a creation range
	// [from, to); usage-daily's bounds are UTC midnights.
	"exportDataset": func(g *gen, req *drawn) {
		dataset := req.path["dataset"]
		for name := range req.query {
			if name != "createdFrom" && name != "createdTo" && !slices.Contains(remit.ExportFilterNames(dataset), name) {
				delete(req.query, name)
			}
		}
		if _, ok := req.query["status"]; ok {
			statuses := map[string][]string{"payments": {"processing", "succeeded", "failed", "requires_action", "canceled"},
				"refunds": {"pending", "succeeded", "failed"}}[dataset]
			if statuses == nil {
				statuses = []string{"draft", "open", "paid", "void", "uncollectible"}
			}
			req.query["status"] = rapid.SampledFrom(statuses).Draw(g.t, "status.ofDataset")
		}
		from, hasFrom := req.query["createdFrom"]
		if to, ok := req.query["createdTo"]; ok && hasFrom && to <= from {
			req.query["createdFrom"], req.query["createdTo"] = g.past("createdFrom.before"), to
		}
		if dataset == "usage-daily" {
			for _, name := range []string{"createdFrom", "createdTo"} {
				if v, ok := req.query[name]; ok {
					at, _ := time.Parse(time.RFC3339, v)
					req.query[name] = remit.UTCDay(at).Format(time.RFC3339)
				}
			}
			if to, ok := req.query["createdTo"]; ok && hasFrom && to <= req.query["createdFrom"] {
				at, _ := time.Parse(time.RFC3339, to)
				req.query["createdFrom"] = at.AddDate(0, 0, -1).Format(time.RFC3339)
			}
		}
	},
	// customer and customerId (invoice and invoiceId) name one filter: both given are equal.
	"listPaymentReceipts": func(g *gen, req *drawn) {
		for alias, name := range map[string]string{"customer": "customerId", "invoice": "invoiceId"} {
			if v, ok := req.query[alias]; ok {
				if _, both := req.query[name]; both {
					req.query[name] = v
				}
			}
		}
	},
}

// createdRange keeps a list's creation range in order, as every list's description says: createdTo
// later than createdFrom.
func createdRange(req *drawn) {
	from, okFrom := req.query["createdFrom"]
	to, okTo := req.query["createdTo"]
	if !okFrom || !okTo {
		return
	}
	f, err1 := time.Parse(time.RFC3339Nano, from)
	t, err2 := time.Parse(time.RFC3339Nano, to)
	if err1 == nil && err2 == nil && !t.After(f) {
		req.query["createdFrom"], req.query["createdTo"] = to, from
		if t.Equal(f) {
			req.query["createdTo"] = f.Add(time.Second).Format(time.RFC3339Nano)
		}
	}
}

// smallLines keeps each line's amount, and the document's subtotal, within the largest amount
// (999999999999): quantities of at most 1000.
func smallLines(req *drawn) {
	for _, l := range req.body["lines"].([]any) {
		if line := l.(map[string]any); line["quantity"] != nil {
			line["quantity"] = 1 + line["quantity"].(int64)%1000
		}
	}
}

// sameCurrency draws a document in the currency of the test's billing account and prices.
func sameCurrency(g *gen, req *drawn) { req.body["currency"] = "USD" }

// One bill covers at most three years: billingIntervalCount is at most 1095 days, 156 weeks, 36
// months or 3 years.
var maxIntervalCount = map[string]int{"day": 1095, "week": 156, "month": 36, "year": 3}

// secretValues gives the fields Remit never shows (tax IDs, bank account numbers) values no other
// drawn field can take, so that testkit's watch for a secret in an answer does not mistake a
// drawn name that happens to equal one for a leak.
func secretValues(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			switch k {
			case "businessTaxId", "taxId":
				secretCount++
				t[k] = "tax-secret-" + strconv.Itoa(secretCount)
			case "accountNumber":
				secretCount++
				t[k] = "SECRETACCT" + strconv.Itoa(100000+secretCount)
			default:
				secretValues(e)
			}
		}
	case []any:
		for _, e := range t {
			secretValues(e)
		}
	}
}

var secretCount int

// calendarDates keeps the drawn dates (day, month, year objects) in the calendar and the past.
func calendarDates(v any) {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["day"]; ok {
			if _, ok := t["month"]; ok {
				t["day"] = 1 + t["day"].(int64)%28
				t["year"] = 1900 + t["year"].(int64)%120
				return
			}
		}
		for _, e := range t {
			calendarDates(e)
		}
	case []any:
		for _, e := range t {
			calendarDates(e)
		}
	}
}

// sumTo100 makes the percentages of a distribution, when it is given, sum to 100.
func sumTo100(g *gen, parent map[string]any, name string, fields ...string) {
	if _, ok := parent[name].(map[string]any); !ok {
		return
	}
	a := rapid.IntRange(0, 100).Draw(g.t, name+".a")
	b := rapid.IntRange(0, 100-a).Draw(g.t, name+".b")
	parent[name] = map[string]any{fields[0]: a, fields[1]: b, fields[2]: 100 - a - b}
}

// generatedFixtures creates what drawn references point at, coherent with each other (one
// customer, its USD billing account, USD prices), and returns their IDs by the field and
// parameter names that reference them.
func generatedFixtures(t *testing.T, e *testkit.Env) map[string][]string {
	must := func(path string, body map[string]any) map[string]any {
		r := e.Do("POST", path, body)
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("fixture %s: %d %s", path, r.Status, r.Body)
		}
		return r.Data()
	}
	id := func(d map[string]any, field string) string { return d[field].(string) }
	pool := map[string][]string{"merchantAccountId": {e.Tenant.Sandbox}, "meterId": {"meter_gen"}}
	add := func(name, v string) { pool[name] = append(pool[name], v) }

	cus := must("/v1/customers", map[string]any{"customerId": "cus_gen", "name": "Generated", "email": "gen@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "region": "TX", "postalCode": "78701", "country": "US"}})
	add("customerId", id(cus, "customerId"))
	add("billingAccountId", id(must("/v1/billing-accounts", map[string]any{"billingAccountId": "ba_gen", "customerId": "cus_gen", "currency": "USD"}), "billingAccountId"))
	add("priceId", id(must("/v1/prices", map[string]any{"priceId": "price_once", "productId": "prod_gen", "name": "Once",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1000}), "priceId"))
	add("priceId", id(must("/v1/prices", map[string]any{"priceId": "price_month", "productId": "prod_gen", "name": "Monthly",
		"priceType": "fixed_recurring", "currency": "USD", "unitAmount": 2000, "billingInterval": "month"}), "priceId"))
	add("couponId", id(must("/v1/coupons", map[string]any{"couponId": "cpn_gen", "name": "Ten", "percentOff": 10}), "couponId"))
	invoice := func() string {
		return id(must("/v1/invoices", map[string]any{"customerId": "cus_gen", "billingAccountId": "ba_gen", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "price_once", "quantity": 1}}}), "invoiceId")
	}
	add("invoiceId", invoice())
	paid := invoice()
	add("invoiceId", paid)
	e.Must(200, "POST", "/v1/invoices/"+paid+"/finalize", map[string]any{})
	e.Must(200, "POST", "/v1/invoices/"+paid+"/pay", map[string]any{"outOfBand": true})
	quote := func(orderType string) string {
		return id(must("/v1/quotes", map[string]any{"orderType": orderType, "customerId": "cus_gen", "billingAccountId": "ba_gen",
			"currency": "USD", "lines": []any{map[string]any{"priceId": "price_month", "quantity": 1}}}), "quoteId")
	}
	add("quoteId", quote("one_off"))
	sub := quote("subscription_creation")
	add("quoteId", sub)
	accepted := e.Must(200, "POST", "/v1/quotes/"+sub+"/accept", map[string]any{}).Data()
	if s, ok := accepted["subscriptionId"].(string); ok {
		add("subscriptionId", s)
	}
	grant := must("/v1/customers/cus_gen/balance/grant", map[string]any{"entryId": "grant_gen", "currency": "USD", "amount": 100000})
	add("sourceEntryId", id(grant, "entryId"))
	lines, _ := e.Must(200, "GET", "/v1/invoices/"+paid, nil).Data()["lines"].([]any)
	if len(lines) > 0 {
		line := lines[0].(map[string]any)["invoiceLineId"].(string)
		add("invoiceLineId", line)
		add("creditNoteId", id(must("/v1/credit-notes", map[string]any{"invoiceId": paid, "reason": "order_change",
			"lines": []any{map[string]any{"invoiceLineId": line, "bucket": "credit", "amount": 100, "description": "Goodwill"}}}), "creditNoteId"))
	}
	add("endpointId", id(must("/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/gen"}), "endpointId"))
	// A saved payment method of no billing account (so no default changes for the other routes).
	setup, err := url.Parse(id(must("/v1/customers/cus_gen/payment-method-setup", map[string]any{}), "url"))
	if err != nil {
		t.Fatal(err)
	}
	add("paymentMethodId", id(e.Must(200, "PUT", setup.RequestURI()+"&paymentMethod=pm_card_visa", nil, testkit.APIKey("")).Data(), "paymentMethodId"))
	add("thresholdId", id(must("/v1/usage-thresholds", map[string]any{"customerId": "cus_gen", "meterId": "meter_gen", "threshold": 100}), "thresholdId"))
	for list, name := range map[string]string{"/v1/events": "eventId", "/v1/payment-receipts": "receiptId", "/v1/tax-transactions": "taxTransactionId"} {
		items, _ := e.Must(200, "GET", list, nil).Data()["items"].([]any)
		for _, it := range items[:min(len(items), 3)] {
			add(name, it.(map[string]any)[name].(string))
		}
	}
	return pool
}

// usageEventRule: a usage event happened at most 5 minutes after the merchant clock.
func usageEventRule(g *gen, req *drawn) {
	if _, ok := req.body["timestamp"]; ok {
		req.body["timestamp"] = g.past("body.timestamp")
	}
}

// judgedEachArray is the body's array whose items are each judged alone (api.JudgedEach: a batch's
// events), "" when it has none.
func judgedEachArray(op contractOp) string {
	if op.body == nil {
		return ""
	}
	for name, ps := range op.body.Properties {
		if ps.Value != nil && api.JudgedEach(ps.Value) {
			return name
		}
	}
	return ""
}

var itemField = regexp.MustCompile(`^([A-Za-z]+)\[(\d+)\]\.?(.*)$`)

// judgedItem reports whether the breach is inside one item of a judged-each array: the item's
// index and the fields as the item's own operation names them.
func judgedItem(op contractOp, b breach) (item int, inner []string, ok bool) {
	array := judgedEachArray(op)
	if array == "" || len(b.fields) == 0 {
		return 0, nil, false
	}
	for _, f := range b.fields {
		m := itemField.FindStringSubmatch(f)
		if m == nil || m[1] != array || (ok && atoi(m[2]) != item) {
			return 0, nil, false
		}
		item, ok = atoi(m[2]), true
		inner = append(inner, m[3])
	}
	return item, inner, ok
}

// itemAnswer is the answer a batch gave its item: 200 with the item rejected, its error body as a
// response of its own.
func itemAnswer(rt *rapid.T, op contractOp, req *drawn, res *testkit.Response, b breach, item int) *testkit.Response {
	if res.Status != 200 {
		rt.Fatalf("%s with %s broken (%s): %d, want 200 with the item rejected\nrequest: %s\nanswer: %s", op.op.OperationID, b.fields, b.rule, res.Status, show(req), res.Body)
	}
	items := batchItems(rt, res)
	if item >= len(items) || items[item].Status != "rejected" {
		rt.Fatalf("%s with %s broken (%s): item %d not rejected\nrequest: %s\nanswer: %s", op.op.OperationID, b.fields, b.rule, item, show(req), res.Body)
	}
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(items[item].Error, &env)
	status := 0
	if env.Error.Code == "validation_failure" {
		status = 422
	}
	return &testkit.Response{Status: status, Body: items[item].Error}
}

type generatedItem struct {
	Status string          `json:"status"`
	Error  json.RawMessage `json:"error"`
}

func batchItems(rt *rapid.T, res *testkit.Response) []generatedItem {
	var env struct {
		Data struct {
			Items []generatedItem `json:"items"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &env); err != nil {
		rt.Fatalf("batch answer: %v\n%s", err, res.Body)
	}
	return env.Data.Items
}

// validItems checks a valid batch's items: none rejected but for a reference or state (404, 409),
// as the item's own operation may answer a valid request.
func validItems(rt *rapid.T, op contractOp, req *drawn, res *testkit.Response) {
	for i, it := range batchItems(rt, res) {
		if it.Status != "rejected" {
			continue
		}
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(it.Error, &env)
		if env.Error.Code != "not_found" && env.Error.Code != "conflict" {
			rt.Fatalf("%s with a valid request: item %d rejected with %s\nrequest: %s\nanswer: %s", op.op.OperationID, i, it.Error, show(req), res.Body)
		}
	}
}
