package dashboard_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An admin pauses, resumes and cancels a subscription at its period's end from its page; each
// page offers what the subscription's state allows (the engine's rule), and the API agrees after
// each. A viewer is offered nothing and refused.
func TestSubscriptionActionsFromTheDashboard(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
		q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c1", "billingAccountId": "ba-c1",
			"currency": "USD", "lines": []any{map[string]any{"priceId": "team"}}}).Data()
		subID := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()["subscriptionId"].(string)

		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		path := "/dashboard/accounts/" + e.Tenant.Sandbox + "/subscriptions/" + subID
		wantStatus(t, admin.get("/dashboard/accounts/"+e.Tenant.Sandbox+"/customers/c1"), 200, `href="`+path+`"`)
		act := func(action, wantStatus string) {
			t.Helper()
			confirm := admin.get(path + "/" + action)
			if confirm.status != 200 || !strings.Contains(confirm.body, "/v1/subscriptions/"+subID+"/") {
				t.Fatalf("%s confirmation: %d\n%s", action, confirm.status, confirm.body)
			}
			wantRedirect(t, admin.post(path+"/"+action, url.Values{"csrf": {csrfOf(t, confirm)}, "key": {regexpValue(t, confirm.body, "key")}}),
				path+"?done="+action)
			if got := e.Must(200, "GET", "/v1/subscriptions/"+subID, nil).Data()["status"]; got != wantStatus {
				t.Fatalf("after %s the API says %v, want %s", action, got, wantStatus)
			}
		}
		offers := func(want ...string) {
			t.Helper()
			body := admin.get(path).body
			for _, a := range []string{"cancel-at-period-end", "cancel-now", "pause", "resume"} {
				link := `href="` + path + "/" + a + `"`
				if strings.Contains(body, link) != contains(want, a) {
					t.Errorf("page offers %s: %v, want %v", a, strings.Contains(body, link), contains(want, a))
				}
			}
		}
		offers("cancel-at-period-end", "cancel-now", "pause")
		act("pause", "paused")
		offers("cancel-now", "resume")
		wantStatus(t, admin.get(path+"?done=pause"), 200, "The subscription is paused.")
		act("resume", "active")
		act("cancel-at-period-end", "active")
		if e.Must(200, "GET", "/v1/subscriptions/"+subID, nil).Data()["cancelAt"] == nil {
			t.Fatal("cancel at period end set no cancelAt")
		}
		// A pause form from before the subscription ended, sent after: the rule's 409, in words.
		stale := admin.get(path + "/pause")
		act("cancel-now", "canceled")
		offers()
		wantStatus(t, admin.post(path+"/pause", url.Values{"csrf": {csrfOf(t, stale)}, "key": {regexpValue(t, stale.body, "key")}}), 409, "canceled")
		wantStatus(t, admin.get(path+"/refund"), 404)

		viewer := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		v := viewer.get(path)
		wantStatus(t, v, 200, subID)
		if strings.Contains(v.body, `class="button"`) {
			t.Error("a viewer is offered subscription actions")
		}
		wantStatus(t, viewer.get(path+"/cancel-now"), 403, "Viewers cannot act")
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
