package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// `remit merchant decide` moves a production account out of review while serve runs on the store.
func TestMerchantDecideCommand(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		body := map[string]any{
			"environment": "production", "displayName": "Prod Co", "legalEntityType": "corporation", "country": "US",
			"merchantMode": "direct", "defaultCurrency": "USD", "email": "ops@prod.example",
			"businessAddress":       map[string]any{"line1": "1 Main St", "city": "Austin", "postalCode": "78701", "country": "US"},
			"settlementBankAccount": map[string]any{"name": "Prod Co", "accountNumber": "55667788", "bankCode": "111000025", "accountType": "checking"},
			"associatedIdentities":  []any{map[string]any{"identityRoles": []string{"control_person"}, "firstName": "Kim"}},
		}
		id, _ := e.Must(200, "POST", "/v1/merchant-accounts", body, testkit.Production()).Data()["merchantAccountId"].(string)
		submitted := e.Must(200, "POST", "/v1/merchant-accounts/"+id+"/onboarding/submit", map[string]any{}, testkit.Production()).Data()
		if submitted["status"] != "in_review" {
			t.Fatalf("submitted: %v", submitted)
		}
		decide := func(decision string) (string, error) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"merchant", "decide", "--database-url", e.DBURL, id, decision}, &out, &errb)
			return out.String(), err
		}
		if _, err := decide("maybe"); err == nil || !strings.Contains(err.Error(), "approve, reject, request-update") {
			t.Errorf("unknown decision: %v", err)
		}
		out, err := decide("approve")
		if err != nil || !strings.Contains(out, "is now approved") {
			t.Fatalf("decide: %q %v", out, err)
		}
		pp := e.Must(200, "GET", "/v1/merchant-accounts/"+id+"/payout-profile", nil, testkit.Production()).Data()
		if pp["status"] != "approved" || pp["payoutsEnabled"] != true {
			t.Errorf("payout profile: %v", pp)
		}
		if _, err := decide("reject"); err == nil || !strings.Contains(err.Error(), "is approved") {
			t.Errorf("decide twice: %v", err)
		}
	})
}
