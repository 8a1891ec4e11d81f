package dashboard_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An admin decides a production account in review from its page (the confirmation names the CLI
// command that does the same); the account is approved once, a second decision is the rule's 409,
// and a viewer is offered none.
func TestUnderwritingFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		body := map[string]any{
			"environment": "production", "displayName": "Prod Co", "legalEntityType": "corporation", "country": "US",
			"merchantMode": "direct", "defaultCurrency": "USD", "email": "ops@prod.example",
			"businessAddress":       map[string]any{"line1": "1 Main St", "city": "Austin", "postalCode": "78701", "country": "US"},
			"settlementBankAccount": map[string]any{"name": "Prod Co", "accountNumber": "55667788", "bankCode": "111000025", "accountType": "checking"},
			"associatedIdentities":  []any{map[string]any{"identityRoles": []string{"control_person"}, "firstName": "Kim"}},
		}
		id := e.Must(200, "POST", "/v1/merchant-accounts", body, testkit.Production()).Data()["merchantAccountId"].(string)
		e.Must(200, "POST", "/v1/merchant-accounts/"+id+"/onboarding/submit", map[string]any{}, testkit.Production())

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		path := "/dashboard/accounts/" + id
		v := viewer.get(path)
		wantStatus(t, v, 200, "in_review")
		if strings.Contains(v.body, "/decide/") {
			t.Error("a viewer is offered underwriting")
		}
		wantStatus(t, viewer.get(path+"/decide/approve"), 403)

		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		wantStatus(t, admin.get(path), 200, `href="`+path+`/decide/approve"`, `href="`+path+`/decide/reject"`)
		confirm := admin.get(path + "/decide/approve")
		wantStatus(t, confirm, 200, "remit merchant decide "+id+" approve")
		form := url.Values{"csrf": {csrfOf(t, confirm)}, "key": {regexpValue(t, confirm.body, "key")}}
		wantRedirect(t, admin.post(path+"/decide/approve", form), path+"?decided=approve")
		wantRedirect(t, admin.post(path+"/decide/approve", form), path+"?decided=approve") // the same form: once
		wantStatus(t, admin.get(path+"?decided=approve"), 200, "the account is now approved")
		if pp := e.Must(200, "GET", "/v1/merchant-accounts/"+id+"/payout-profile", nil, testkit.Production()).Data(); pp["status"] != "approved" {
			t.Fatalf("payout profile after the decision: %v", pp)
		}
		again := admin.get(path + "/decide/reject")
		wantStatus(t, admin.post(path+"/decide/reject", url.Values{"csrf": {csrfOf(t, again)}, "key": {regexpValue(t, again.body, "key")}}), 409, "decided only when in_review")
		wantStatus(t, admin.get(path+"/decide/maybe"), 404)
	})
}
