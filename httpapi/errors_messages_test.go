package httpapi_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// genericMessages are messages that tell the caller nothing it can act on.
var genericMessages = []string{"invalid request", "bad request", "error", "invalid input", "validation failed",
	"the request is invalid", "invalid", "not found", "conflict", "forbidden", "unauthorized", "internal error",
	"invalid value", "invalid body", "invalid parameter", "request failed", "something went wrong"}

// vagueField matches a message that names a field but not what is wrong with it or what to send
// instead ("customerId is invalid.", "The query parameter 'limit' is invalid.").
var vagueField = regexp.MustCompile(`(?i)^(the (body|query|path|header) (field|parameter) )?'?[\w.\[\]-]+'? (is|has an) invalid( value)?\.?$`)

// messageProblem says what is wrong with an error message, or "" when it is specific.
func messageProblem(msg string) string {
	norm := strings.ToLower(strings.TrimRight(strings.TrimSpace(msg), ".!"))
	switch {
	case norm == "":
		return "empty"
	case len(msg) < 20:
		return "shorter than 20 characters"
	case vagueField.MatchString(strings.TrimSpace(msg)):
		return "names a field but not what is wrong"
	}
	for _, g := range genericMessages {
		if norm == g {
			return "generic"
		}
	}
	return ""
}

func TestMessageProblem(t *testing.T) {
	for msg, bad := range map[string]bool{
		"": true, "Invalid request.": true, "The request is invalid.": true, "bad request": true, "Error": true,
		"validation failed": true, "customerId is invalid.": true, "The query parameter 'limit' is invalid.": true,
		"unitAmount is required for priceType fixed_recurring.":       false,
		"The request has 2 invalid fields; see error.details.fields.": false,
		"No such invoice: 'inv_1'.":                                   false,
	} {
		if got := messageProblem(msg) != ""; got != bad {
			t.Errorf("messageProblem(%q) = %q, want bad=%v", msg, messageProblem(msg), bad)
		}
	}
}

// Every 4xx answer tells the caller what to do next: a broad set of bad requests over the routes,
// each expected status checked, and every message (the envelope's and each field's) must be
// specific. A single-field 422 carries that field's message.
func TestErrorMessagesAreActionable(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		var failures []string
		check := func(name string, want int, r *testkit.Response) {
			t.Helper()
			if r.Status != want {
				failures = append(failures, fmt.Sprintf("%s: status %d, want %d: %s", name, r.Status, want, r.Body))
				return
			}
			env, _ := r.JSON()["error"].(map[string]any)
			msg, _ := env["message"].(string)
			if testing.Verbose() {
				t.Logf("%-50s %d %s %s", name, r.Status, msg, r.ErrorDetails()["fields"])
			}
			if p := messageProblem(msg); p != "" {
				failures = append(failures, fmt.Sprintf("%s (%d %s): message %q is %s", name, r.Status, r.ErrorCode(), msg, p))
			}
			fields, _ := r.ErrorDetails()["fields"].([]any)
			for _, f := range fields {
				fm, _ := f.(map[string]any)
				m, _ := fm["message"].(string)
				if p := messageProblem(m); p != "" {
					failures = append(failures, fmt.Sprintf("%s (%d): field %v message %q is %s", name, r.Status, fm["field"], m, p))
				}
			}
			if len(fields) == 1 {
				fm, _ := fields[0].(map[string]any)
				if fm["message"] != msg {
					failures = append(failures, fmt.Sprintf("%s: single-field 422 message %q differs from the field's %q", name, msg, fm["message"]))
				}
			}
		}
		do := func(name string, want int, method, path string, body any, opts ...testkit.Opt) *testkit.Response {
			t.Helper()
			r := e.Do(method, path, body, opts...)
			check(name, want, r)
			return r
		}
		obj := func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		with := func(base map[string]any, kv ...any) map[string]any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(m, kv[i].(string))
				} else {
					m[kv[i].(string)] = kv[i+1]
				}
			}
			return m
		}

		// Fixtures.
		e.Must(200, "POST", "/v1/prices", obj("priceId", "price_setup", "productId", "prod_setup", "name", "Setup", "priceType", "fixed_one_time", "currency", "USD", "unitAmount", 25000))
		e.Must(200, "POST", "/v1/prices", obj("priceId", "price_eur", "productId", "prod_eur", "name", "EUR", "priceType", "fixed_one_time", "currency", "EUR", "unitAmount", 1000))
		e.Must(200, "POST", "/v1/prices", obj("priceId", "price_month", "productId", "prod_pro", "name", "Pro", "priceType", "fixed_recurring", "currency", "USD", "unitAmount", 4900, "billingInterval", "month"))
		e.Must(201, "POST", "/v1/customers", obj("customerId", "cus_1", "name", "Acme", "address", obj("line1", "1 Main St", "city", "Austin", "region", "TX", "postalCode", "73301", "country", "US")))
		e.Must(201, "POST", "/v1/customers", obj("customerId", "cus_2", "name", "Other"))
		e.Must(201, "POST", "/v1/billing-accounts", obj("billingAccountId", "ba_1", "customerId", "cus_1", "currency", "USD", "collectionMethod", "send_invoice"))
		e.Must(201, "POST", "/v1/billing-accounts", obj("billingAccountId", "ba_2", "customerId", "cus_2", "currency", "USD"))
		e.Must(201, "POST", "/v1/customers/cus_1/balance/grant", obj("entryId", "g1", "currency", "USD", "amount", 500))
		invBody := obj("customerId", "cus_1", "billingAccountId", "ba_1", "currency", "USD", "lines", []any{obj("priceId", "price_setup")})
		draft := e.Must(201, "POST", "/v1/invoices", invBody).Data()["invoiceId"].(string)
		open := e.Must(201, "POST", "/v1/invoices", invBody).Data()
		openID := open["invoiceId"].(string)
		openInv := e.Must(200, "POST", "/v1/invoices/"+openID+"/finalize", obj()).Data()
		openLine := openInv["lines"].([]any)[0].(map[string]any)["invoiceLineId"].(string)
		committedTx, _ := openInv["taxTransactionId"].(string)
		e.Must(201, "POST", "/v1/quotes", obj("quoteId", "q1", "orderType", "one_off", "customerId", "cus_1", "billingAccountId", "ba_1", "currency", "USD", "lines", []any{obj("priceId", "price_setup")}))
		e.Must(200, "POST", "/v1/quotes/q1/accept", obj())
		setup := e.Must(201, "POST", "/v1/customers/cus_1/payment-method-setup", obj("billingAccountId", "ba_1", "setAsDefault", true)).Data()
		su, _ := url.Parse(setup["url"].(string))
		we := e.Must(201, "POST", "/v1/webhook-endpoints", obj("url", "https://hooks.example.com/remit")).Data()["endpointId"].(string)
		e.Must(200, "POST", "/v1/webhook-endpoints/"+we+"/disable", obj())
		e.Must(201, "POST", "/v1/coupons", obj("couponId", "TEN", "name", "Ten", "percentOff", 10))

		// The pipeline: reading the request.
		do("malformed JSON", 400, "POST", "/v1/customers", nil, testkit.Raw([]byte(`{"name": `), "application/json"))
		do("body not an object", 400, "POST", "/v1/customers", nil, testkit.Raw([]byte(`[1,2]`), "application/json"))
		do("wrong content type", 400, "POST", "/v1/customers", nil, testkit.Raw([]byte(`name=x`), "application/x-www-form-urlencoded"))
		do("wrong method", 405, "DELETE", "/v1/customers/cus_1", nil)
		do("unknown route", 404, "GET", "/v1/nothing-here", nil)
		do("body over 1 MiB", 413, "POST", "/v1/customers", nil, testkit.Raw([]byte(`{"name":"`+strings.Repeat("x", 1<<20)+`"}`), "application/json"))
		do("no API key", 401, "GET", "/v1/customers/cus_1", nil, testkit.APIKey(""))
		do("malformed API key", 401, "GET", "/v1/customers/cus_1", nil, testkit.APIKey("hello"))
		do("unknown API key", 401, "GET", "/v1/customers/cus_1", nil, testkit.APIKey("rk_01jy0000000000000000000000.0000000000000000000000000000000000000000000000000000000000000000"))
		other := e.NewTenant("Other Org", false)
		do("merchant account of another organization", 403, "GET", "/v1/customers/cus_1", nil, testkit.Scope("sandbox", other.Sandbox))
		do("merchant account in the other environment", 403, "GET", "/v1/customers/cus_1", nil, testkit.Scope("sandbox", e.Tenant.Production))
		do("missing scope", 422, "GET", "/v1/customers/cus_1", nil, testkit.NoScope())
		do("unknown environment", 422, "GET", "/v1/customers/cus_1", nil, testkit.Scope("staging", e.Tenant.Sandbox))
		do("Idempotency-Key too long", 422, "POST", "/v1/customers", obj("name", "A"), testkit.Key(strings.Repeat("k", 256)))
		e.Must(201, "POST", "/v1/customers", obj("name", "Idem"), testkit.Key("idem-1"))
		do("Idempotency-Key reused with another body", 409, "POST", "/v1/customers", obj("name", "Other"), testkit.Key("idem-1"))

		// Contract validation of bodies and parameters.
		do("unknown field", 422, "POST", "/v1/customers", obj("name", "A", "nickname", "B"))
		do("wrong type", 422, "POST", "/v1/customers", obj("name", 42))
		do("missing required field", 422, "POST", "/v1/customers", obj("email", "a@example.com"))
		do("bad caller ID", 422, "POST", "/v1/customers", obj("customerId", "has spaces", "name", "A"))
		do("bad email", 422, "POST", "/v1/customers", obj("name", "A", "email", "not-an-email"))
		do("lower-case country", 422, "POST", "/v1/customers", obj("name", "A", "address", obj("line1", "1", "city", "X", "postalCode", "1", "country", "us")))
		do("metadata key too long", 422, "POST", "/v1/customers", obj("name", "A", "metadata", obj(strings.Repeat("k", 41), "v")))
		do("metadata value not a string", 422, "POST", "/v1/customers", obj("name", "A", "metadata", obj("k", 1)))
		do("enum", 422, "POST", "/v1/billing-accounts", obj("customerId", "cus_1", "currency", "USD", "collectionMethod", "by_carrier_pigeon"))
		do("limit out of range", 422, "GET", "/v1/tax-transactions?limit=0", nil)
		do("limit not a number", 422, "GET", "/v1/tax-transactions?limit=ten", nil)
		do("limit over 100", 422, "GET", "/v1/events?limit=101", nil)
		do("garbage cursor", 422, "GET", "/v1/events?cursor=garbage", nil)
		do("tax status filter", 422, "GET", "/v1/tax-transactions?status=pending", nil)
		do("settlement scope", 422, "GET", "/v1/merchant-accounts/"+e.Tenant.Sandbox+"/settlements?scope=someday", nil)
		do("credit note without lines", 422, "POST", "/v1/credit-notes", obj("invoiceId", openID, "reason", "other", "lines", []any{}))
		do("credit note line amount 0", 422, "POST", "/v1/credit-notes", obj("invoiceId", openID, "reason", "other", "lines", []any{obj("description", "x", "amount", 0)}))

		// Catalog rules.
		price := obj("priceId", "p_new", "productId", "prod", "name", "P", "currency", "USD")
		do("fixed_recurring without unitAmount and interval", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_recurring"))
		do("fixed_recurring without unitAmount", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_recurring", "billingInterval", "month"))
		do("fixed_one_time with interval", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_one_time", "unitAmount", 100, "billingInterval", "month"))
		do("usage_metered without meterId", 422, "POST", "/v1/prices", with(price, "priceType", "usage_metered", "unitAmount", 1, "billingInterval", "month"))
		do("free with an amount", 422, "POST", "/v1/prices", with(price, "priceType", "free", "unitAmount", 100))
		do("negative unitAmount", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_one_time", "unitAmount", -1))
		do("unsupported currency", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_one_time", "unitAmount", 1, "currency", "BRL"))
		do("invalid currency", 422, "POST", "/v1/prices", with(price, "priceType", "fixed_one_time", "unitAmount", 1, "currency", "usd"))
		do("duplicate priceId", 409, "POST", "/v1/prices", obj("priceId", "price_setup", "productId", "prod_setup", "name", "Setup", "priceType", "fixed_one_time", "currency", "USD", "unitAmount", 25000))
		do("unknown price", 404, "GET", "/v1/prices/price_nope", nil)
		do("coupon with both", 422, "POST", "/v1/coupons", obj("couponId", "BOTH", "name", "B", "percentOff", 10, "amountOff", 100, "currency", "USD"))
		do("coupon with neither", 422, "POST", "/v1/coupons", obj("couponId", "NONE", "name", "N"))
		do("coupon amountOff without currency", 422, "POST", "/v1/coupons", obj("couponId", "AMT", "name", "A", "amountOff", 100))
		do("coupon percentOff over 100", 422, "POST", "/v1/coupons", obj("couponId", "BIG", "name", "B", "percentOff", 150))
		do("unknown coupon", 404, "GET", "/v1/coupons/NOPE", nil)

		// Customers, billing accounts, balance, payment methods.
		do("unknown customer", 404, "GET", "/v1/customers/cus_nope", nil)
		do("billing account for unknown customer", 404, "POST", "/v1/billing-accounts", obj("customerId", "cus_nope", "currency", "USD"))
		do("unknown billing account", 404, "GET", "/v1/billing-accounts/ba_nope", nil)
		do("grant expiring before effective", 422, "POST", "/v1/customers/cus_1/balance/grant", obj("currency", "USD", "amount", 100, "effectiveAt", "2099-01-02T00:00:00Z", "expiresAt", "2099-01-01T00:00:00Z"))
		do("grant amount 0", 422, "POST", "/v1/customers/cus_1/balance/grant", obj("currency", "USD", "amount", 0))
		do("grant to unknown customer", 404, "POST", "/v1/customers/cus_nope/balance/grant", obj("currency", "USD", "amount", 100))
		do("expire unknown grant", 404, "POST", "/v1/customers/cus_1/balance/expire", obj("sourceEntryId", "nope"))
		do("expire more than remains", 409, "POST", "/v1/customers/cus_1/balance/expire", obj("sourceEntryId", "g1", "amount", 100000))
		do("balance of unknown customer", 404, "GET", "/v1/customers/cus_nope/balance", nil)
		do("setup session for another customer's account", 422, "POST", "/v1/customers/cus_1/payment-method-setup", obj("billingAccountId", "ba_2"))
		do("setAsDefault without billing account", 422, "POST", "/v1/customers/cus_1/payment-method-setup", obj("setAsDefault", true))
		do("setup session method type", 422, "POST", "/v1/customers/cus_1/payment-method-setup", obj("methodType", "sepa_debit"))

		// The customer portal.
		do("portal without token", 401, "PUT", su.Path, nil)
		do("portal with a bad token", 401, "PUT", su.Path+"?token=hpt_nope", nil)
		do("portal unknown tail", 404, "PUT", "/customer-portal/nothing?"+su.RawQuery, nil)
		do("portal unknown test card", 422, "PUT", su.Path+"?"+su.RawQuery+"&paymentMethod=pm_card_amex", nil)
		do("portal token for another resource", 403, "PUT", "/customer-portal/setup-sessions/pmss_other/complete?"+su.RawQuery+"&paymentMethod=pm_card_visa", nil)

		// Quotes.
		quote := obj("orderType", "one_off", "customerId", "cus_1", "billingAccountId", "ba_1", "currency", "USD", "lines", []any{obj("priceId", "price_setup")})
		do("quote line in another currency", 422, "POST", "/v1/quotes", with(quote, "lines", []any{obj("priceId", "price_eur")}))
		do("quote subscriptionId on one_off", 422, "POST", "/v1/quotes", with(quote, "subscriptionId", "sub_x"))
		do("amendment without subscriptionId", 422, "POST", "/v1/quotes", with(quote, "orderType", "subscription_amendment"))
		do("subscription quote without recurring line", 422, "POST", "/v1/quotes", with(quote, "orderType", "subscription_creation"))
		do("quote with unknown coupon", 404, "POST", "/v1/quotes", with(quote, "couponIds", []any{"NOPE"}))
		do("quote with unknown price", 404, "POST", "/v1/quotes", with(quote, "lines", []any{obj("priceId", "price_nope")}))
		do("quote quantity 0", 422, "POST", "/v1/quotes", with(quote, "lines", []any{obj("priceId", "price_setup", "quantity", 0)}))
		do("quote for another customer's billing account", 422, "POST", "/v1/quotes", with(quote, "billingAccountId", "ba_2"))
		do("accept twice", 409, "POST", "/v1/quotes/q1/accept", obj())
		do("unknown quote", 404, "GET", "/v1/quotes/q_nope", nil)
		do("unknown subscription", 404, "GET", "/v1/subscriptions/sub_nope", nil)

		// Invoices and tax.
		do("invoice with unknown price", 404, "POST", "/v1/invoices", with(invBody, "lines", []any{obj("priceId", "price_nope")}))
		do("invoice without lines", 422, "POST", "/v1/invoices", with(invBody, "lines", []any{}))
		do("invoice currency mismatch", 422, "POST", "/v1/invoices", with(invBody, "currency", "EUR", "lines", []any{obj("priceId", "price_eur")}))
		do("invoice period end before start", 422, "POST", "/v1/invoices", with(invBody, "periodStart", "2025-02-01T00:00:00Z", "periodEnd", "2025-01-01T00:00:00Z"))
		do("invoice with half a period", 422, "POST", "/v1/invoices", with(invBody, "periodStart", "2025-02-01T00:00:00Z"))
		do("finalize an open invoice", 409, "POST", "/v1/invoices/"+openID+"/finalize", obj())
		do("refresh an open invoice", 409, "POST", "/v1/invoices/"+openID+"/refresh", obj())
		do("void a draft", 409, "POST", "/v1/invoices/"+draft+"/void", obj())
		do("unknown invoice", 404, "GET", "/v1/invoices/inv_nope", nil)
		do("finalize unknown invoice", 404, "POST", "/v1/invoices/inv_nope/finalize", obj())
		if committedTx != "" {
			do("commit a committed tax transaction", 409, "POST", "/v1/tax-transactions/"+committedTx+"/finalize", obj())
		}
		do("unknown tax transaction", 404, "GET", "/v1/tax-transactions/txn_nope", nil)

		// Credit notes.
		cn := obj("invoiceId", openID, "reason", "order_change", "lines", []any{obj("invoiceLineId", openLine, "bucket", "offset", "description", "Goodwill", "amount", 100)})
		do("credit note on a draft", 409, "POST", "/v1/credit-notes", with(cn, "invoiceId", draft, "lines", []any{obj("bucket", "offset", "description", "x", "amount", 1)}))
		do("credit note over the line", 409, "POST", "/v1/credit-notes", with(cn, "lines", []any{obj("invoiceLineId", openLine, "bucket", "offset", "description", "Too much", "amount", 10_000_000)}))
		do("credit note bucket total mismatch", 422, "POST", "/v1/credit-notes", with(cn, "offsetAmount", 999))
		do("credit note unknown invoice", 404, "POST", "/v1/credit-notes", with(cn, "invoiceId", "inv_nope"))
		do("credit note unknown line", 404, "POST", "/v1/credit-notes", with(cn, "lines", []any{obj("invoiceLineId", "il_nope", "bucket", "offset", "description", "x", "amount", 1)}))
		do("credit note bad reason", 422, "POST", "/v1/credit-notes", with(cn, "reason", "because"))
		do("unknown credit note", 404, "GET", "/v1/credit-notes/cn_nope", nil)

		// Webhooks and events.
		do("webhook URL not absolute", 422, "POST", "/v1/webhook-endpoints", obj("url", "hooks/remit"))
		do("webhook unknown event type", 422, "POST", "/v1/webhook-endpoints", obj("url", "https://hooks.example.com/x", "enabledEvents", []any{"invoice.finalised"}))
		do("webhook ftp URL", 422, "POST", "/v1/webhook-endpoints", obj("url", "ftp://hooks.example.com/x"))
		do("disable twice", 409, "POST", "/v1/webhook-endpoints/"+we+"/disable", obj())
		do("unknown endpoint", 404, "GET", "/v1/webhook-endpoints/we_nope", nil)
		do("unknown event", 404, "GET", "/v1/events/evt_nope", nil)
		do("resend unknown event", 404, "POST", "/v1/events/evt_nope/resend", obj())
		evs := e.Must(200, "GET", "/v1/events?limit=1", nil).Data()["items"].([]any)
		evID := evs[0].(map[string]any)["eventId"].(string)
		do("resend to unknown endpoint", 404, "POST", "/v1/events/"+evID+"/resend", obj("endpointId", "we_nope"))

		// Clock, merchants, claims.
		do("clock advance both", 422, "POST", "/v1/test-helpers/clock/advance", obj("seconds", 10, "to", "2099-01-01T00:00:00Z"))
		do("clock advance neither", 422, "POST", "/v1/test-helpers/clock/advance", obj())
		do("clock advance backwards", 422, "POST", "/v1/test-helpers/clock/advance", obj("to", "2001-01-01T00:00:00Z"))
		do("clock advance negative", 422, "POST", "/v1/test-helpers/clock/advance", obj("seconds", -5))
		do("clock in production", 403, "GET", "/v1/test-helpers/clock", nil, testkit.Production())
		ma := obj("environment", "sandbox", "displayName", "Shop", "legalEntityType", "corporation", "country", "US", "merchantMode", "direct", "defaultCurrency", "USD")
		do("merchant environment mismatch", 422, "POST", "/v1/merchant-accounts", with(ma, "environment", "production"))
		do("merchant bad mcc", 422, "POST", "/v1/merchant-accounts", with(ma, "mcc", "58"))
		do("merchant legalEntityType", 422, "POST", "/v1/merchant-accounts", with(ma, "legalEntityType", "llc"))
		do("merchant tenantId mismatch", 403, "POST", "/v1/merchant-accounts", with(ma, "tenantId", other.OrganizationID))
		do("merchant platform account not platform", 403, "POST", "/v1/merchant-accounts", with(ma, "platformMerchantAccountId", e.Tenant.Sandbox))
		draftMA := e.Must(200, "POST", "/v1/merchant-accounts", ma).Data()["merchantAccountId"].(string)
		do("submit incomplete merchant", 422, "POST", "/v1/merchant-accounts/"+draftMA+"/onboarding/submit", obj())
		do("submit approved merchant", 409, "POST", "/v1/merchant-accounts/"+e.Tenant.Sandbox+"/onboarding/submit", obj())
		do("submit with a bad IP", 422, "POST", "/v1/merchant-accounts/"+draftMA+"/onboarding/submit", obj("merchantAgreementIpAddress", "999.1.1.1"))
		do("payout profile of another organization's account", 404, "GET", "/v1/merchant-accounts/"+other.Sandbox+"/payout-profile", nil)
		do("unknown claim", 404, "POST", "/claims/"+strings.Repeat("ab", 32), obj())

		if len(failures) > 0 {
			t.Errorf("%d error answers are not actionable:\n%s", len(failures), strings.Join(failures, "\n"))
		}
	})
}
