package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// Secrets the merchant tests send. Every test of this file checks, when it ends, that none of them
// appears in any response body it received, in any log line, in any event or in the stored profile.
var merchantSecrets = []string{
	"784512369021", "DE44500105175407324931", // bank account numbers
	"987654321", "123450987", "555443333", // business tax IDs
	"321987654", "246813579", // personal and identity tax IDs
	"000000000", "111111111", // the sandbox's decisive business tax IDs
}

// mrec sends requests through the env and keeps every answer, so that the secrets check covers all.
type mrec struct {
	t      *testing.T
	e      *testkit.Env
	mu     sync.Mutex
	bodies [][]byte
}

func newMrec(t *testing.T, e *testkit.Env) *mrec {
	r := &mrec{t: t, e: e}
	t.Cleanup(r.checkSecrets)
	return r
}

func (r *mrec) do(method, path string, body any, opts ...testkit.Opt) *testkit.Response {
	r.t.Helper()
	res := r.e.Do(method, path, body, opts...)
	r.mu.Lock()
	r.bodies = append(r.bodies, res.Body)
	r.mu.Unlock()
	return res
}

func (r *mrec) must(want int, method, path string, body any, opts ...testkit.Opt) *testkit.Response {
	r.t.Helper()
	res := r.do(method, path, body, opts...)
	if res.Status != want {
		r.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, res.Status, want, res.Body)
	}
	return res
}

// checkSecrets fails the test if a secret it sent shows anywhere it must not.
func (r *mrec) checkSecrets() {
	t := r.t
	var places []string
	for i, b := range r.bodies {
		places = append(places, fmt.Sprintf("response %d\x00%s", i, b))
	}
	for i, line := range strings.Split(r.e.Logs.String(), "\n") {
		places = append(places, fmt.Sprintf("log line %d\x00%s", i, line))
	}
	db := r.e.App.DB.SQL()
	for _, q := range []string{`SELECT id, data FROM events`, `SELECT id, profile FROM merchant_accounts`, `SELECT id, onboarding FROM merchant_accounts`} {
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		for rows.Next() {
			var id, data string
			if err := rows.Scan(&id, &data); err != nil {
				t.Error(err)
			}
			places = append(places, q+" "+id+"\x00"+data)
		}
		rows.Close()
	}
	if len(r.bodies) == 0 {
		t.Errorf("secrets check saw no responses")
	}
	for _, p := range places {
		where, text, _ := strings.Cut(p, "\x00")
		for _, s := range merchantSecrets {
			if strings.Contains(text, s) {
				t.Errorf("secret %q found in %s: %.300s", s, where, text)
			}
		}
	}
}

func validMerchant(ref string) map[string]any {
	return map[string]any{
		"environment":                      "sandbox",
		"externalMerchantRef":              ref,
		"displayName":                      "Acme Coffee",
		"legalEntityType":                  "limited_liability_company",
		"country":                          "US",
		"merchantMode":                     "direct",
		"defaultCurrency":                  "USD",
		"doingBusinessAs":                  "Acme Beans",
		"businessPhone":                    "+1 415 555 0100",
		"businessTaxId":                    "987654321",
		"phone":                            "+1 415 555 0101",
		"taxId":                            "321987654",
		"email":                            "owner@acme.example",
		"firstName":                        "Ada",
		"lastName":                         "Lovelace",
		"mcc":                              "5814",
		"url":                              "https://acme.example/shop",
		"maxTransactionAmount":             125000,
		"achMaxTransactionAmount":          250000,
		"annualCardVolume":                 98765400,
		"principalPercentageOwnership":     60.5,
		"hasAcceptedCreditCardsPreviously": true,
		"dateOfBirth":                      map[string]any{"day": 10, "month": 12, "year": 1985},
		"incorporationDate":                map[string]any{"day": 29, "month": 2, "year": 2016},
		"businessAddress":                  map[string]any{"line1": "1 Market St", "line2": "Suite 5", "city": "San Francisco", "region": "CA", "postalCode": "94105", "country": "US"},
		"personalAddress":                  map[string]any{"line1": "2 Elm St", "city": "Oakland", "postalCode": "94607", "country": "US"},
		"settlementBankAccount":            map[string]any{"name": "Acme Coffee LLC", "accountNumber": "784512369021", "bankCode": "110000000", "accountType": "checking", "attemptValidationCheck": true},
		"associatedIdentities": []any{
			map[string]any{"identityRoles": []string{"control_person", "beneficial_owner"}, "relationType": "individual",
				"firstName": "Ada", "lastName": "Lovelace", "title": "CEO", "email": "ada@acme.example", "phone": "+1 415 555 0102",
				"taxId": "246813579", "principalPercentageOwnership": 60.5,
				"dateOfBirth":     map[string]any{"day": 10, "month": 12, "year": 1985},
				"personalAddress": map[string]any{"line1": "2 Elm St", "city": "Oakland", "postalCode": "94607", "country": "US"}},
			map[string]any{"identityRoles": []string{"beneficial_owner"}, "relationType": "business", "firstName": "Holdco",
				"principalPercentageOwnership": 39.5},
		},
		"underwriting": map[string]any{
			"annualAchVolume": 4500000, "averageAchTransferAmount": 12000, "averageCardTransferAmount": 1500,
			"businessDescription": "Coffee shop and online bean subscriptions.", "creditCheckAllowed": true,
			"creditCheckIpAddress": "203.0.113.7", "creditCheckTimestamp": "2024-05-01T12:00:00Z", "creditCheckUserAgent": "Mozilla/5.0",
			"refundPolicy":                     "Refunds within 30 days.",
			"cardVolumeDistribution":           map[string]any{"cardPresentPercentage": 33.3, "ecommercePercentage": 33.3, "mailOrderTelephoneOrderPercentage": 33.4},
			"volumeDistributionByBusinessType": map[string]any{"businessToConsumerVolumePercentage": 100},
		},
		"metadata": map[string]any{"crmId": "hs-1042"},
	}
}

// minimalMerchant is the smallest body submission accepts.
func minimalMerchant(env, taxID string) map[string]any {
	b := map[string]any{
		"environment": env, "displayName": "Minimal Co", "legalEntityType": "corporation", "country": "GB",
		"merchantMode": "direct", "defaultCurrency": "GBP", "email": "ops@minimal.example",
		"businessAddress":       map[string]any{"line1": "10 Downing St", "city": "London", "postalCode": "SW1A 2AA", "country": "GB"},
		"settlementBankAccount": map[string]any{"name": "Minimal Co Ltd", "accountNumber": "DE44 5001 0517 5407 3249 31", "bankCode": "500105", "accountType": "savings"},
		"associatedIdentities":  []any{map[string]any{"identityRoles": []string{"principal"}, "firstName": "Grace", "lastName": "Hopper"}},
	}
	if taxID != "" {
		b["businessTaxId"] = taxID
	}
	return b
}

func submitPath(id string) string            { return "/v1/merchant-accounts/" + id + "/onboarding/submit" }
func payoutPath(id string) string            { return "/v1/merchant-accounts/" + id + "/payout-profile" }
func mstr(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func merchantEventTypes(t *testing.T, e *testkit.Env, merchantAccountID, objectID string) []string {
	t.Helper()
	evs, err := e.App.DB.Read(context.Background()).ListEventsByObject(context.Background(), merchantAccountID, objectID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func TestMerchantCreateFull(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		body := validMerchant("acme-coffee")
		body["tenantId"] = e.Tenant.OrganizationID
		res := r.must(200, "POST", "/v1/merchant-accounts", body, testkit.Key("create-1"))
		d := res.Data()
		// Times are shown as stored (microseconds), so a later read shows the same instant.
		if created, err := time.Parse(time.RFC3339Nano, mstr(d, "createdAt")); err != nil || created.Nanosecond()%1000 != 0 {
			t.Errorf("createdAt %v %v", d["createdAt"], err)
		}
		id := mstr(d, "merchantAccountId")
		if !strings.HasPrefix(id, "ma_") || d["object"] != "merchant_account" || d["status"] != "draft" ||
			d["environment"] != "sandbox" || d["organizationId"] != e.Tenant.OrganizationID || mstr(d, "createdAt") == "" {
			t.Fatalf("created: %s", res.Body)
		}
		for k, want := range map[string]any{
			"externalMerchantRef": "acme-coffee", "displayName": "Acme Coffee", "legalEntityType": "limited_liability_company",
			"country": "US", "merchantMode": "direct", "defaultCurrency": "USD", "doingBusinessAs": "Acme Beans",
			"businessPhone": "+1 415 555 0100", "phone": "+1 415 555 0101", "email": "owner@acme.example", "firstName": "Ada",
			"lastName": "Lovelace", "mcc": "5814", "url": "https://acme.example/shop", "maxTransactionAmount": 125000.0,
			"achMaxTransactionAmount": 250000.0, "annualCardVolume": 98765400.0, "principalPercentageOwnership": 60.5,
			"hasAcceptedCreditCardsPreviously": true, "businessTaxIdProvided": true, "taxIdProvided": true,
			"platformEnabled": false, "platformMerchantAccountId": nil, "claimUrl": nil, "claimExpiresAt": nil, "submittedAt": nil,
		} {
			if d[k] != want {
				t.Errorf("%s = %#v, want %#v", k, d[k], want)
			}
		}
		for _, k := range []string{"businessTaxId", "taxId"} {
			if _, ok := d[k]; ok {
				t.Errorf("%s is shown", k)
			}
		}
		bank, _ := d["settlementBankAccount"].(map[string]any)
		if bank["last4"] != "9021" || bank["name"] != "Acme Coffee LLC" || bank["bankCode"] != "110000000" || bank["accountType"] != "checking" || bank["attemptValidationCheck"] != true {
			t.Errorf("bank account: %v", bank)
		}
		if _, ok := bank["accountNumber"]; ok {
			t.Errorf("account number shown")
		}
		ids, _ := d["associatedIdentities"].([]any)
		if len(ids) != 2 {
			t.Fatalf("identities: %v", d["associatedIdentities"])
		}
		id0 := ids[0].(map[string]any)
		if id0["taxIdProvided"] != true || id0["title"] != "CEO" || id0["dateOfBirth"].(map[string]any)["year"] != 1985.0 {
			t.Errorf("identity 0: %v", id0)
		}
		if ids[1].(map[string]any)["taxIdProvided"] != false {
			t.Errorf("identity 1: %v", ids[1])
		}
		uw, _ := d["underwriting"].(map[string]any)
		cv, _ := uw["cardVolumeDistribution"].(map[string]any)
		if cv["cardPresentPercentage"] != 33.3 || uw["creditCheckTimestamp"] != "2024-05-01T12:00:00Z" || uw["annualAchVolume"] != 4500000.0 {
			t.Errorf("underwriting: %v", uw)
		}
		if d["incorporationDate"].(map[string]any)["day"] != 29.0 || d["businessAddress"].(map[string]any)["line2"] != "Suite 5" {
			t.Errorf("dates/addresses: %s", res.Body)
		}
		if d["metadata"].(map[string]any)["crmId"] != "hs-1042" {
			t.Errorf("metadata: %v", d["metadata"])
		}
		ob, _ := d["onboarding"].(map[string]any)
		if ob["status"] != "draft" || ob["submittedAt"] != nil || ob["agreement"] != nil {
			t.Errorf("onboarding: %v", ob)
		}
		if got := merchantEventTypes(t, e, id, id); !slices.Equal(got, []string{"merchant_account.created"}) {
			t.Errorf("events: %v", got)
		}
		// The secrets are kept, sealed.
		var sealed string
		if err := e.App.DB.SQL().QueryRow(`SELECT secrets FROM merchant_accounts WHERE id = $1`, id).Scan(&sealed); err != nil ||
			!strings.HasPrefix(sealed, "v1:") || len(sealed) < 60 {
			t.Errorf("sealed secrets %q %v", sealed, err)
		}
		for _, s := range merchantSecrets {
			if strings.Contains(sealed, s) {
				t.Errorf("secret %s stored in clear", s)
			}
		}

		// The same key and body replays; the account is made once.
		again := r.must(200, "POST", "/v1/merchant-accounts", body, testkit.Key("create-1"))
		if again.Header.Get("Idempotent-Replayed") != "true" || mstr(again.Data(), "merchantAccountId") != id {
			t.Fatalf("replay: %s", again.Body)
		}
		// A duplicate reference in the organization and environment is 409.
		dup := r.must(409, "POST", "/v1/merchant-accounts", body)
		if dup.ErrorDetails()["field"] != "externalMerchantRef" {
			t.Errorf("duplicate: %s", dup.Body)
		}
		// The same reference in production is another namespace.
		prod := validMerchant("acme-coffee")
		prod["environment"] = "production"
		r.must(200, "POST", "/v1/merchant-accounts", prod, testkit.Production())

		// Omitted, the reference is generated, and unique.
		m1 := minimalMerchant("sandbox", "")
		a := r.must(200, "POST", "/v1/merchant-accounts", m1).Data()
		b := r.must(200, "POST", "/v1/merchant-accounts", m1).Data()
		if mstr(a, "externalMerchantRef") == "" || mstr(a, "externalMerchantRef") == mstr(b, "externalMerchantRef") {
			t.Errorf("generated refs: %q %q", a["externalMerchantRef"], b["externalMerchantRef"])
		}
		// Spaces in the account number are ignored; last4 comes from the digits.
		if a["settlementBankAccount"].(map[string]any)["last4"] != "4931" {
			t.Errorf("last4: %v", a["settlementBankAccount"])
		}
	})
}

func TestMerchantCreateValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		b := validMerchant("bad")
		b["environment"] = "production"
		b["country"] = "XX"
		b["defaultCurrency"] = "XYZ"
		b["email"] = "not-an-email"
		b["url"] = "ftp://acme.example"
		b["dateOfBirth"] = map[string]any{"day": 1, "month": 1, "year": 2100}
		b["incorporationDate"] = map[string]any{"day": 30, "month": 2, "year": 2020}
		b["businessAddress"].(map[string]any)["country"] = "ZZ"
		b["personalAddress"].(map[string]any)["line1"] = "   "
		b["settlementBankAccount"].(map[string]any)["accountNumber"] = "12"
		ids := b["associatedIdentities"].([]any)
		ids[0].(map[string]any)["email"] = "ada-at-acme"
		ids[0].(map[string]any)["personalAddress"].(map[string]any)["country"] = "QQ"
		ids[1].(map[string]any)["dateOfBirth"] = map[string]any{"day": 31, "month": 4, "year": 1990}
		uw := b["underwriting"].(map[string]any)
		uw["creditCheckIpAddress"] = "300.1.2.3"
		uw["cardVolumeDistribution"] = map[string]any{"cardPresentPercentage": 50, "ecommercePercentage": 40}
		uw["volumeDistributionByBusinessType"] = map[string]any{"businessToConsumerVolumePercentage": 80, "otherVolumePercentage": 30}
		b["metadata"] = map[string]any{strings.Repeat("k", 41): "v"}

		res := r.must(422, "POST", "/v1/merchant-accounts", b)
		want := []string{
			"body:environment:environment_mismatch",
			"body:country:invalid_country",
			"body:defaultCurrency:invalid_currency",
			"body:email:invalid_email",
			"body:url:invalid_url",
			"body:dateOfBirth:in_future",
			"body:incorporationDate.day:invalid_date",
			"body:businessAddress.country:invalid_country",
			"body:personalAddress.line1:blank",
			"body:settlementBankAccount.accountNumber:invalid_account_number",
			"body:associatedIdentities[0].email:invalid_email",
			"body:associatedIdentities[0].personalAddress.country:invalid_country",
			"body:associatedIdentities[1].dateOfBirth.day:invalid_date",
			"body:underwriting.creditCheckIpAddress:invalid_ip_address",
			"body:underwriting.cardVolumeDistribution:sum_not_100",
			"body:underwriting.volumeDistributionByBusinessType:sum_not_100",
			"body:metadata:invalid_key",
		}
		got := res.FieldErrors()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("fields:\n got %v\nwant %v\n%s", got, want, res.Body)
		}
		if res.ErrorCode() != "validation_failure" {
			t.Errorf("code: %s", res.Body)
		}

		// Rules the contract states are reported with the same full paths, all at once.
		b = validMerchant("bad2")
		b["associatedIdentities"].([]any)[1].(map[string]any)["dateOfBirth"] = map[string]any{"day": 1, "month": 13, "year": 1990}
		b["mcc"] = "58a4"
		b["maxTransactionAmount"] = -1
		b["principalPercentageOwnership"] = 101
		b["legalEntityType"] = "llc"
		res = r.must(422, "POST", "/v1/merchant-accounts", b)
		got = res.FieldErrors()
		for _, f := range []string{"associatedIdentities[1].dateOfBirth.month", "mcc", "maxTransactionAmount", "principalPercentageOwnership", "legalEntityType"} {
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "body:"+f+":") }) {
				t.Errorf("missing %s in %v", f, got)
			}
		}

		// Secrets of the wrong type or length are refused without being echoed (the secrets check
		// at the end searches these answers too).
		b = validMerchant("bad3")
		b["businessTaxId"] = 987654321
		b["taxId"] = strings.Repeat("321987654", 30)
		b["settlementBankAccount"].(map[string]any)["accountNumber"] = 784512369021
		b["associatedIdentities"].([]any)[0].(map[string]any)["taxId"] = []any{"246813579"}
		res = r.must(422, "POST", "/v1/merchant-accounts", b)
		got = res.FieldErrors()
		for _, f := range []string{"businessTaxId", "taxId", "settlementBankAccount.accountNumber", "associatedIdentities[0].taxId"} {
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "body:"+f+":") }) {
				t.Errorf("missing %s in %v", f, got)
			}
		}

		// A valid code the rails do not process; ownership over 100 in total; a future birth date
		// on the merchant clock.
		b = minimalMerchant("sandbox", "")
		b["defaultCurrency"] = "BRL"
		b["associatedIdentities"] = []any{
			map[string]any{"identityRoles": []string{"principal"}, "principalPercentageOwnership": 70},
			map[string]any{"identityRoles": []string{"beneficial_owner"}, "principalPercentageOwnership": 40},
		}
		tomorrow := time.Now().UTC().AddDate(0, 0, 2)
		b["dateOfBirth"] = map[string]any{"day": tomorrow.Day(), "month": int(tomorrow.Month()), "year": tomorrow.Year()}
		res = r.must(422, "POST", "/v1/merchant-accounts", b)
		got = res.FieldErrors()
		slices.Sort(got)
		want = []string{"body:associatedIdentities:ownership_exceeds_100", "body:dateOfBirth:in_future", "body:defaultCurrency:currency_not_supported"}
		if !slices.Equal(got, want) {
			t.Fatalf("fields: got %v want %v", got, want)
		}
		// Nothing was created by any of these.
		var n int
		if err := e.App.DB.SQL().QueryRow(`SELECT COUNT(*) FROM merchant_accounts`).Scan(&n); err != nil || n != 2 {
			t.Errorf("merchant accounts: %d %v", n, err)
		}
	})
}

func TestMerchantTenantAndEnvironment(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		other := e.NewTenant("Other Org", false)
		b := minimalMerchant("sandbox", "")
		b["tenantId"] = other.OrganizationID
		res := r.must(403, "POST", "/v1/merchant-accounts", b)
		if res.ErrorCode() != "forbidden" {
			t.Errorf("tenant: %s", res.Body)
		}
		// A body that breaks its own rules (a blank name, a country outside the contract's table)
		// is 422 before its tenantId is compared: a body is checked before anything it names.
		name := b["displayName"]
		b["displayName"] = " "
		wantFields(t, r.must(422, "POST", "/v1/merchant-accounts", b), "body:displayName:blank")
		b["displayName"], b["country"] = name, "XX"
		r.must(422, "POST", "/v1/merchant-accounts", b)
		b["country"] = "GB"
		b["tenantId"] = e.Tenant.OrganizationID
		r.must(200, "POST", "/v1/merchant-accounts", b)

		// body.environment must equal the query's.
		b = minimalMerchant("sandbox", "")
		res = r.must(422, "POST", "/v1/merchant-accounts", b, testkit.Production())
		if !slices.Equal(res.FieldErrors(), []string{"body:environment:environment_mismatch"}) {
			t.Errorf("env: %v", res.FieldErrors())
		}
		b = minimalMerchant("production", "")
		d := r.must(200, "POST", "/v1/merchant-accounts", b, testkit.Production()).Data()
		if d["environment"] != "production" || d["status"] != "draft" {
			t.Errorf("production create: %v", d)
		}
		// The account is reachable in its environment only.
		r.must(200, "GET", payoutPath(mstr(d, "merchantAccountId")), nil, testkit.Production())
		r.must(404, "GET", payoutPath(mstr(d, "merchantAccountId")), nil)
		// Another organization's account in the query is 403, in the path 404.
		r.must(403, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", ""), testkit.Scope("sandbox", other.Sandbox))
		r.must(404, "GET", payoutPath(other.Sandbox), nil)
	})
}

func TestMerchantSandboxDecisions(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		create := func(taxID string) string {
			return mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", taxID)).Data(), "merchantAccountId")
		}
		ua := testkit.Header("User-Agent", "RemitTest/1.0")

		// Approved (no tax ID, or any other): agreement captured from the request.
		ok := create("555443333")
		d := r.must(200, "POST", submitPath(ok), map[string]any{}, ua).Data()
		ob, _ := d["onboarding"].(map[string]any)
		ag, _ := ob["agreement"].(map[string]any)
		if d["status"] != "approved" || ob["status"] != "approved" || ob["submittedByType"] != "merchant" ||
			ob["submittedAt"] == nil || ob["decidedAt"] == nil || d["submittedAt"] != ob["submittedAt"] {
			t.Fatalf("approved: %s", d)
		}
		if ag["ipAddress"] != "127.0.0.1" || ag["userAgent"] != "RemitTest/1.0" || ag["acceptedAt"] != ob["submittedAt"] {
			t.Errorf("agreement: %v", ag)
		}
		if got := merchantEventTypes(t, e, ok, ok); !slices.Equal(got, []string{"merchant_account.created", "merchant_account.submitted", "merchant_account.approved"}) {
			t.Errorf("events: %v", got)
		}
		pp := r.must(200, "GET", payoutPath(ok), nil).Data()
		if pp["object"] != "payout_profile" || pp["payoutsEnabled"] != true || pp["schedule"] != "daily" || pp["delayDays"] != 2.0 ||
			pp["currency"] != "GBP" || pp["status"] != "approved" || pp["merchantAccountId"] != ok || pp["environment"] != "sandbox" {
			t.Errorf("payout profile: %v", pp)
		}
		if ba, _ := pp["bankAccount"].(map[string]any); ba["last4"] != "4931" || ba["name"] != "Minimal Co Ltd" || ba["bankCode"] != "500105" || ba["accountType"] != "savings" || len(ba) != 4 {
			t.Errorf("bank account: %v", pp["bankAccount"])
		}

		// Submit twice: 409 with the current state.
		res := r.must(409, "POST", submitPath(ok), map[string]any{})
		if res.ErrorDetails()["currentState"] != "approved" {
			t.Errorf("twice: %s", res.Body)
		}

		// Rejected.
		rej := create("000000000")
		d = r.must(200, "POST", submitPath(rej), map[string]any{"submittedByType": "operator",
			"merchantAgreementIpAddress": "2001:db8::1", "merchantAgreementUserAgent": "Agent/2"}).Data()
		ob = d["onboarding"].(map[string]any)
		ag = ob["agreement"].(map[string]any)
		if d["status"] != "rejected" || ob["submittedByType"] != "operator" || ag["ipAddress"] != "2001:db8::1" || ag["userAgent"] != "Agent/2" {
			t.Errorf("rejected: %v", d)
		}
		if pp := r.must(200, "GET", payoutPath(rej), nil).Data(); pp["payoutsEnabled"] != false || pp["status"] != "rejected" {
			t.Errorf("rejected payout profile: %v", pp)
		}
		r.must(409, "POST", submitPath(rej), map[string]any{})

		// Update requested, and submitted again (the body's idempotencyKey acts as the header).
		upd := create("111111111")
		d = r.must(200, "POST", submitPath(upd), map[string]any{"idempotencyKey": "sub-1"}).Data()
		first := d["onboarding"].(map[string]any)["submittedAt"]
		if d["status"] != "update_requested" {
			t.Fatalf("update_requested: %v", d)
		}
		replay := r.must(200, "POST", submitPath(upd), map[string]any{"idempotencyKey": "sub-1"})
		if replay.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("no replay")
		}
		if pp := r.must(200, "GET", payoutPath(upd), nil).Data(); pp["payoutsEnabled"] != false {
			t.Errorf("update_requested payout profile: %v", pp)
		}
		d = r.must(200, "POST", submitPath(upd), map[string]any{"idempotencyKey": "sub-2"}).Data()
		if d["status"] != "update_requested" || d["onboarding"].(map[string]any)["submittedAt"] == first {
			t.Errorf("resubmitted: %v", d)
		}
		if got := merchantEventTypes(t, e, upd, upd); !slices.Equal(got, []string{"merchant_account.created",
			"merchant_account.submitted", "merchant_account.update_requested",
			"merchant_account.submitted", "merchant_account.update_requested"}) {
			t.Errorf("events: %v", got)
		}

		// The submission's own fields.
		res = r.must(422, "POST", submitPath(create("")), map[string]any{"environment": "production", "merchantAgreementIpAddress": "localhost"})
		got := res.FieldErrors()
		slices.Sort(got)
		if !slices.Equal(got, []string{"body:environment:environment_mismatch", "body:merchantAgreementIpAddress:invalid_ip_address"}) {
			t.Errorf("submission fields: %v", got)
		}
		// Header and body idempotency keys that differ.
		r.must(422, "POST", submitPath(create("")), map[string]any{"idempotencyKey": "a"}, testkit.Key("b"))
	})
}

func TestMerchantSubmissionRequirements(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		bare := map[string]any{"environment": "sandbox", "displayName": "Bare", "legalEntityType": "corporation",
			"country": "US", "merchantMode": "platform", "defaultCurrency": "USD",
			"associatedIdentities": []any{map[string]any{"identityRoles": []string{"director"}}}}
		id := mstr(r.must(200, "POST", "/v1/merchant-accounts", bare).Data(), "merchantAccountId")
		res := r.must(422, "POST", submitPath(id), map[string]any{"environment": "production"})
		got := res.FieldErrors()
		slices.Sort(got)
		want := []string{"body:associatedIdentities:required_for_submission", "body:businessAddress:required_for_submission",
			"body:email:required_for_submission", "body:environment:environment_mismatch", "body:settlementBankAccount:required_for_submission"}
		if !slices.Equal(got, want) {
			t.Fatalf("requirements:\n got %v\nwant %v", got, want)
		}
		// Still a draft, nothing emitted beyond the creation.
		if got := merchantEventTypes(t, e, id, id); !slices.Equal(got, []string{"merchant_account.created"}) {
			t.Errorf("events: %v", got)
		}

		// A sole proprietor may stand as its own control person with firstName and lastName.
		sole := minimalMerchant("sandbox", "")
		sole["legalEntityType"] = "individual_sole_proprietorship"
		delete(sole, "associatedIdentities")
		sole["firstName"] = "Ada"
		sid := mstr(r.must(200, "POST", "/v1/merchant-accounts", sole).Data(), "merchantAccountId")
		res = r.must(422, "POST", submitPath(sid), map[string]any{})
		if !slices.Equal(res.FieldErrors(), []string{"body:lastName:required_for_submission"}) {
			t.Errorf("sole proprietor: %v", res.FieldErrors())
		}
		sole["lastName"] = "Lovelace"
		sid = mstr(r.must(200, "POST", "/v1/merchant-accounts", sole).Data(), "merchantAccountId")
		if d := r.must(200, "POST", submitPath(sid), map[string]any{}).Data(); d["status"] != "approved" {
			t.Errorf("sole proprietor: %v", d)
		}
	})
}

func TestMerchantPathScope(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		other := e.NewTenant("Other Org", false)
		// Another organization's account: 404 on submit and payout profile, whether it exists or not.
		theirs := mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", ""), testkit.As(other)).Data(), "merchantAccountId")
		for _, id := range []string{theirs, other.Sandbox, "ma_doesnotexist"} {
			res := r.must(404, "POST", submitPath(id), map[string]any{})
			if res.ErrorCode() != "not_found" {
				t.Errorf("submit %s: %s", id, res.Body)
			}
			r.must(404, "GET", payoutPath(id), nil)
		}
		// Theirs is untouched.
		if d := r.must(200, "GET", payoutPath(theirs), nil, testkit.As(other)).Data(); d["status"] != "draft" {
			t.Errorf("their account: %v", d)
		}
		// Another account of the same organization and environment is reachable in the path.
		mine := mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", "")).Data(), "merchantAccountId")
		if d := r.must(200, "POST", submitPath(mine), map[string]any{}).Data(); d["status"] != "approved" || d["merchantAccountId"] != mine {
			t.Errorf("same org: %v", d)
		}
		// ... and acting as it, the bootstrap account is too. Bootstrap accounts render without a profile.
		pp := r.must(200, "GET", payoutPath(e.Tenant.Sandbox), nil, testkit.Scope("sandbox", mine)).Data()
		if pp["status"] != "approved" || pp["payoutsEnabled"] != true || pp["bankAccount"] != nil || pp["currency"] != "USD" {
			t.Errorf("bootstrap payout profile: %v", pp)
		}
		res := r.must(409, "POST", submitPath(e.Tenant.Sandbox), map[string]any{})
		if res.ErrorDetails()["currentState"] != "approved" {
			t.Errorf("bootstrap submit: %s", res.Body)
		}
		// A bootstrap account renders as a merchant account too (as in its events).
		m, err := e.App.DB.Read(context.Background()).GetMerchantAccount(context.Background(), e.Tenant.Production, store.Unlocked)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := remit.NewMerchantAccountObject(m)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(obj)
		var got map[string]any
		_ = json.Unmarshal(raw, &got)
		if got["object"] != "merchant_account" || got["status"] != "approved" || got["environment"] != "production" ||
			got["settlementBankAccount"] != nil || got["email"] != nil || got["businessTaxIdProvided"] != false ||
			fmt.Sprint(got["metadata"]) != "map[]" || fmt.Sprint(got["associatedIdentities"]) != "[]" ||
			got["onboarding"].(map[string]any)["status"] != "approved" || got["platformMerchantAccountId"] != nil {
			t.Errorf("bootstrap account: %s", raw)
		}
	})
}

func TestMerchantConcurrentSubmit(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		id := mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", "")).Data(), "merchantAccountId")
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = r.do("POST", submitPath(id), map[string]any{}).Status
			}()
		}
		wg.Wait()
		slices.Sort(statuses)
		if statuses[0] != 200 || statuses[1] != 409 || statuses[n-1] != 409 {
			t.Fatalf("statuses: %v", statuses)
		}
		if got := merchantEventTypes(t, e, id, id); len(got) != 3 {
			t.Errorf("events: %v", got)
		}
	})
}

func TestMerchantProductionDecide(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		ctx := context.Background()
		prod := testkit.Production()
		id := mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("production", "000000000"), prod).Data(), "merchantAccountId")
		d := r.must(200, "POST", submitPath(id), map[string]any{"environment": "production"}, prod).Data()
		if d["status"] != "in_review" || d["onboarding"].(map[string]any)["decidedAt"] != nil {
			t.Fatalf("production submit: %v", d)
		}
		// The sandbox tax IDs mean nothing in production; it waits for the operator.
		if _, err := e.App.Merchants.DecideMerchant(ctx, id, "approved"); remit.ErrorCode(err) != remit.EInvalid {
			t.Errorf("unknown decision: %v", err)
		}
		if _, err := e.App.Merchants.DecideMerchant(ctx, "ma_nope", "approve"); remit.ErrorCode(err) != remit.ENotFound {
			t.Errorf("unknown account: %v", err)
		}
		status, err := e.App.Merchants.DecideMerchant(ctx, id, "request-update")
		if err != nil || status != "update_requested" {
			t.Fatalf("request-update: %v %v", status, err)
		}
		if _, err := e.App.Merchants.DecideMerchant(ctx, id, "approve"); remit.ErrorCode(err) != remit.EConflict {
			t.Errorf("decide outside review: %v", err)
		}
		d = r.must(200, "POST", submitPath(id), map[string]any{}, prod).Data()
		if d["status"] != "in_review" {
			t.Fatalf("resubmit: %v", d)
		}
		if status, err := e.App.Merchants.DecideMerchant(ctx, id, "approve"); err != nil || status != "approved" {
			t.Fatalf("approve: %v %v", status, err)
		}
		pp := r.must(200, "GET", payoutPath(id), nil, prod).Data()
		if pp["status"] != "approved" || pp["payoutsEnabled"] != true {
			t.Errorf("payout profile: %v", pp)
		}
		if got := merchantEventTypes(t, e, id, id); !slices.Equal(got, []string{"merchant_account.created", "merchant_account.submitted",
			"merchant_account.update_requested", "merchant_account.submitted", "merchant_account.approved"}) {
			t.Errorf("events: %v", got)
		}
		// Reject path.
		id2 := mstr(r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("production", ""), prod).Data(), "merchantAccountId")
		r.must(200, "POST", submitPath(id2), map[string]any{}, prod)
		if status, err := e.App.Merchants.DecideMerchant(ctx, id2, "reject"); err != nil || status != "rejected" {
			t.Fatalf("reject: %v %v", status, err)
		}
		r.must(409, "POST", submitPath(id2), map[string]any{}, prod)
	})
}

func TestMerchantClaimFlow(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		platform := e.NewTenant("Platform Inc", true)
		unrelated := e.NewTenant("Unrelated", false)
		asPlatform := testkit.As(platform)

		body := minimalMerchant("sandbox", "123450987")
		body["displayName"] = "Sub Shop"
		body["externalMerchantRef"] = "sub-1"
		body["platformMerchantAccountId"] = platform.Sandbox

		// Only a platform-granted account of the caller: not the plain tenant's own account, not
		// another organization's platform account, not a production account.
		notPlatform := testkit.Scope("sandbox", e.Tenant.Sandbox)
		body["platformMerchantAccountId"] = e.Tenant.Sandbox
		r.must(403, "POST", "/v1/merchant-accounts", body, notPlatform)
		body["platformMerchantAccountId"] = platform.Sandbox
		r.must(403, "POST", "/v1/merchant-accounts", body, notPlatform)
		body["platformMerchantAccountId"] = "ma_nope"
		r.must(403, "POST", "/v1/merchant-accounts", body, asPlatform)
		pbody := minimalMerchant("production", "")
		pbody["platformMerchantAccountId"] = platform.Production
		res := r.must(501, "POST", "/v1/merchant-accounts", pbody, testkit.APIKey(platform.APIKey), testkit.Scope("production", platform.Production))
		if res.ErrorCode() != "not_implemented" {
			t.Errorf("production: %s", res.Body)
		}

		body["platformMerchantAccountId"] = platform.Sandbox
		start := time.Now().UTC()
		d := r.must(200, "POST", "/v1/merchant-accounts", body, asPlatform).Data()
		sub := mstr(d, "merchantAccountId")
		newOrg := mstr(d, "organizationId")
		if newOrg == platform.OrganizationID || !strings.HasPrefix(newOrg, "org_") || d["platformMerchantAccountId"] != platform.Sandbox || d["status"] != "draft" {
			t.Fatalf("sub-merchant: %v", d)
		}
		claimURL := mstr(d, "claimUrl")
		u, err := url.Parse(claimURL)
		if err != nil || !strings.HasPrefix(claimURL, e.Server.URL+"/claims/") {
			t.Fatalf("claimUrl %q", claimURL)
		}
		exp, err := time.Parse(time.RFC3339Nano, mstr(d, "claimExpiresAt"))
		if err != nil || exp.Sub(start) < 7*24*time.Hour-time.Minute || exp.Sub(start) > 7*24*time.Hour+time.Minute {
			t.Errorf("claimExpiresAt %v (%v)", d["claimExpiresAt"], err)
		}
		var orgName string
		if err := e.App.DB.SQL().QueryRow(`SELECT name FROM organizations WHERE id = $1`, newOrg).Scan(&orgName); err != nil || orgName != "Sub Shop" {
			t.Errorf("organization name %q %v", orgName, err)
		}
		// The token is stored only as a hash.
		token := strings.TrimPrefix(u.Path, "/claims/")
		var n int
		if err := e.App.DB.SQL().QueryRow(`SELECT COUNT(*) FROM merchant_claims WHERE token_hash = $1`, token).Scan(&n); err != nil || n != 0 {
			t.Errorf("token stored in clear: %d %v", n, err)
		}
		// The same reference under the same platform is a duplicate.
		r.must(409, "POST", "/v1/merchant-accounts", body, asPlatform)

		// The platform reaches its sub-merchant through the path; an unrelated account does not.
		pp := r.must(200, "GET", payoutPath(sub), nil, asPlatform).Data()
		if pp["merchantAccountId"] != sub || pp["status"] != "draft" || pp["payoutsEnabled"] != false {
			t.Errorf("platform payout profile: %v", pp)
		}
		r.must(404, "GET", payoutPath(sub), nil, testkit.As(unrelated))
		r.must(404, "GET", payoutPath(sub), nil) // the bootstrap tenant, unrelated too
		// The platform's other account (production) is not the linked one.
		r.must(404, "GET", payoutPath(sub), nil, testkit.APIKey(platform.APIKey), testkit.Scope("production", platform.Production))
		// The platform may act for it only through the path, never as it.
		r.must(403, "GET", payoutPath(sub), nil, testkit.APIKey(platform.APIKey), testkit.Scope("sandbox", sub))
		// The platform submits it for its owner.
		if d := r.must(200, "POST", submitPath(sub), map[string]any{}, asPlatform).Data(); d["status"] != "approved" {
			t.Errorf("platform submit: %v", d)
		}
		// Both streams carry the sub-merchant's events.
		wantEvents := []string{"merchant_account.created", "merchant_account.submitted", "merchant_account.approved"}
		if got := merchantEventTypes(t, e, sub, sub); !slices.Equal(got, wantEvents) {
			t.Errorf("sub-merchant events: %v", got)
		}
		if got := merchantEventTypes(t, e, platform.Sandbox, sub); !slices.Equal(got, wantEvents) {
			t.Errorf("platform events: %v", got)
		}

		// Unknown token: 404. The claim itself needs no API key.
		res = r.must(404, "POST", "/claims/"+strings.Repeat("ab", 32), map[string]any{})
		if res.ErrorCode() != "not_found" {
			t.Errorf("unknown: %s", res.Body)
		}
		res = r.must(200, "POST", u.Path, nil, testkit.APIKey(""))
		c := res.Data()
		newKey := mstr(c, "apiKey")
		if c["organizationId"] != newOrg || c["merchantAccountId"] != sub || !strings.HasPrefix(newKey, "rk_") || c["object"] != "organization_claim" {
			t.Fatalf("claim: %s", res.Body)
		}
		// Once only.
		res = r.must(409, "POST", u.Path, map[string]any{}, testkit.APIKey(""))
		if res.ErrorDetails()["currentState"] != "claimed" {
			t.Errorf("second claim: %s", res.Body)
		}

		// The new key works for the claimed account ...
		owner := testkit.Scope("sandbox", sub)
		if pp := r.must(200, "GET", payoutPath(sub), nil, testkit.APIKey(newKey), owner).Data(); pp["status"] != "approved" {
			t.Errorf("owner payout profile: %v", pp)
		}
		own := r.must(200, "POST", "/v1/merchant-accounts", minimalMerchant("sandbox", ""), testkit.APIKey(newKey), owner).Data()
		if own["organizationId"] != newOrg {
			t.Errorf("owner create: %v", own)
		}
		// ... and the platform's key no longer reaches it.
		r.must(404, "GET", payoutPath(sub), nil, asPlatform)
		r.must(404, "POST", submitPath(sub), map[string]any{}, asPlatform)
		r.must(403, "GET", payoutPath(sub), nil, testkit.APIKey(platform.APIKey), owner)
		// The new key does not reach the platform either.
		r.must(403, "GET", payoutPath(platform.Sandbox), nil, testkit.APIKey(newKey), testkit.Scope("sandbox", platform.Sandbox))
		r.must(404, "GET", payoutPath(platform.Sandbox), nil, testkit.APIKey(newKey), owner)
		if got := merchantEventTypes(t, e, platform.Sandbox, sub); got[len(got)-1] != "merchant_account.claimed" {
			t.Errorf("platform events: %v", got)
		}
		if got := merchantEventTypes(t, e, sub, sub); got[len(got)-1] != "merchant_account.claimed" {
			t.Errorf("sub-merchant events: %v", got)
		}
	})
}

func TestMerchantClaimRace(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		r := newMrec(t, e)
		platform := e.NewTenant("Platform Inc", true)
		body := minimalMerchant("sandbox", "")
		body["platformMerchantAccountId"] = platform.Sandbox
		d := r.must(200, "POST", "/v1/merchant-accounts", body, testkit.As(platform)).Data()
		u, _ := url.Parse(mstr(d, "claimUrl"))
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = r.do("POST", u.Path, map[string]any{}, testkit.APIKey("")).Status
			}()
		}
		wg.Wait()
		slices.Sort(statuses)
		if statuses[0] != 200 || statuses[1] != 409 || statuses[n-1] != 409 {
			t.Fatalf("statuses: %v", statuses)
		}
		var keys int
		if err := e.App.DB.SQL().QueryRow(`SELECT COUNT(*) FROM api_keys WHERE organization_id = $1`, d["organizationId"]).Scan(&keys); err != nil || keys != 1 {
			t.Errorf("api keys for the claimed organization: %d %v", keys, err)
		}
	})
}

func TestMerchantClaimExpires(t *testing.T) {
	for _, st := range testkit.Stores() {
		t.Run(string(st), func(t *testing.T) {
			clock := remit.NewFixedClock(time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC))
			e := testkit.Start(t, st, testkit.Options{Clock: clock})
			r := newMrec(t, e)
			platform := e.NewTenant("Platform Inc", true)
			body := minimalMerchant("sandbox", "")
			body["platformMerchantAccountId"] = platform.Sandbox
			body["dateOfBirth"] = map[string]any{"day": 27, "month": 2, "year": 2030} // past on this clock, future in real time
			d := r.must(200, "POST", "/v1/merchant-accounts", body, testkit.As(platform)).Data()
			if d["claimExpiresAt"] != "2030-03-08T12:00:00Z" || d["createdAt"] != "2030-03-01T12:00:00Z" {
				t.Errorf("claimExpiresAt %v, createdAt %v", d["claimExpiresAt"], d["createdAt"])
			}
			u, _ := url.Parse(mstr(d, "claimUrl"))
			clock.Add(7 * 24 * time.Hour)
			res := r.must(409, "POST", u.Path, map[string]any{}, testkit.APIKey(""))
			if res.ErrorDetails()["currentState"] != "expired" {
				t.Errorf("expired: %s", res.Body)
			}
			// The platform keeps its reach over an unclaimed sub-merchant.
			r.must(200, "GET", payoutPath(mstr(d, "merchantAccountId")), nil, testkit.As(platform))
		})
	}
}
