package reliability_test

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/testkit"
)

// TestSecretsAtRest reads every table of the store after creating each kind of secret with an
// Idempotency-Key: API keys and hosted tokens are stored only as their SHA-256 (compared in
// constant time: app.SecretsEqual), webhook signing secrets and remembered answers (which carry
// shown-once secrets) only sealed, bank account numbers and tax IDs only sealed. Replays still
// answer the secret.
func TestSecretsAtRest(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		platform := e.NewTenant("Platform", true)
		secrets := map[string]string{}
		for _, tn := range []testkit.Tenant{e.Tenant, platform} {
			secrets["API key of "+tn.OrganizationID] = tn.APIKey
			_, s, _ := strings.Cut(tn.APIKey, ".")
			secrets["API key secret of "+tn.OrganizationID] = s
			if n := count(t, e.Remit.DB.SQL(), `SELECT COUNT(*) FROM api_keys WHERE secret_hash = $1`, app.HashSecret(s)); n != 1 {
				t.Errorf("the API key of %s is not stored as its hash (%d rows)", tn.OrganizationID, n)
			}
		}
		// A webhook signing secret, shown once, with a key.
		ep := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example/x"}, testkit.Key("ep-1"))
		secrets["webhook secret"] = ep.Data()["secret"].(string)
		secrets["webhook secret bytes"] = strings.TrimPrefix(ep.Data()["secret"].(string), "whsec_")
		again := e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example/x"}, testkit.Key("ep-1"))
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(ep.Body) {
			t.Fatalf("replay of the endpoint: %s", again.Body)
		}
		// A setup session's token, with a key.
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c", "name": "C"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c", "customerId": "c", "currency": "USD"})
		ss := e.Must(201, "POST", "/v1/customers/c/payment-method-setup", map[string]any{"billingAccountId": "ba-c"}, testkit.Key("ss-1"))
		u, err := url.Parse(ss.Data()["url"].(string))
		if err != nil || u.Query().Get("token") == "" {
			t.Fatalf("setup session url: %v", ss.Data()["url"])
		}
		secrets["setup session token"] = u.Query().Get("token")
		if n := count(t, e.Remit.DB.SQL(), `SELECT COUNT(*) FROM hosted_tokens WHERE token_hash = $1`, app.HashSecret(u.Query().Get("token"))); n != 1 {
			t.Errorf("the hosted token is not stored as its hash (%d rows)", n)
		}
		// A sub-merchant's claim URL and the merchant's bank account number and tax ID, with a key.
		body := map[string]any{
			"environment": "sandbox", "displayName": "Sub Shop", "legalEntityType": "corporation", "country": "GB",
			"merchantMode": "direct", "defaultCurrency": "GBP", "email": "ops@sub.example", "businessTaxId": "GB998877665",
			"businessAddress":           map[string]any{"line1": "1 High St", "city": "London", "postalCode": "SW1A 2AA", "country": "GB"},
			"settlementBankAccount":     map[string]any{"name": "Sub Shop Ltd", "accountNumber": "GB29 NWBK 6016 1331 9268 19", "bankCode": "601613", "accountType": "checking"},
			"associatedIdentities":      []any{map[string]any{"identityRoles": []string{"principal"}, "firstName": "Ada", "lastName": "Lovelace"}},
			"platformMerchantAccountId": platform.Sandbox,
		}
		sub := e.Must(200, "POST", "/v1/merchant-accounts", body, testkit.As(platform), testkit.Key("sub-1"))
		claim := sub.Data()["claimUrl"].(string)
		secrets["claim token"] = claim[strings.LastIndexByte(claim, '/')+1:]
		secrets["bank account number"] = "GB29NWBK60161331926819"
		secrets["business tax ID"] = "GB998877665"
		if r := e.Must(200, "POST", "/v1/merchant-accounts", body, testkit.As(platform), testkit.Key("sub-1")); string(r.Body) != string(sub.Body) {
			t.Fatalf("replay of the sub-merchant differs: %s", r.Body)
		}

		dump := dumpStore(t, e.Remit.DB.SQL(), e.Store)
		for what, v := range secrets {
			for table, text := range dump {
				if strings.Contains(text, v) {
					t.Errorf("the %s is stored in plain text in table %s", what, table)
				}
			}
		}
		// The remembered answers are sealed, not merely free of these secrets.
		if n := count(t, e.Remit.DB.SQL(), `SELECT COUNT(*) FROM idempotency_keys WHERE state = 'done' AND response NOT LIKE 'v1.%'`); n != 0 {
			t.Errorf("%d remembered answers are not sealed", n)
		}
	})
}

// dumpStore returns every table's rows as text.
func dumpStore(t *testing.T, db *sql.DB, s testkit.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table := range rowCounts(t, db, s) {
		out[table] = strings.Join(testkit.TableRows(t, db, table), "\n")
	}
	return out
}
