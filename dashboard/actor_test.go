package dashboard_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An operator's action in the dashboard emits events whose actor is that operator
// (docs/events.md "Who acted").
func TestOperatorEventsCarryTheOperator(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e)
		ctx := context.Background()
		op, link, err := e.App.Operators.CreateOperator(ctx, e.Tenant.OrganizationID, "actor@example.com", remit.OperatorAdmin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.Operators.SetOperatorPassword(ctx, link[strings.Index(link, "token=")+len("token="):], "a long enough password", "a long enough password"); err != nil {
			t.Fatal(err)
		}
		b := newBrowser(t, e)
		wantRedirect(t, b.post("/dashboard/sign-in", url.Values{"csrf": {csrfOf(t, b.get("/dashboard/sign-in"))},
			"email": {"actor@example.com"}, "password": {"a long enough password"}}), "/dashboard")
		path := "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices/" + id
		confirm := b.get(path + "/void")
		wantRedirect(t, b.post(path+"/void", url.Values{"csrf": {csrfOf(t, confirm)}, "key": {regexpValue(t, confirm.body, "key")}}), path+"?done=void")

		events := e.Must(200, "GET", "/v1/events?type=invoice.voided", nil).Data()["items"].([]any)
		if len(events) != 1 {
			t.Fatalf("invoice.voided events: %v", events)
		}
		a, _ := events[0].(map[string]any)["actor"].(map[string]any)
		if a["type"] != "operator" || a["id"] != op.ID {
			t.Fatalf("actor %v, want the operator %s", a, op.ID)
		}
		created := e.Must(200, "GET", "/v1/events?type=invoice.finalized", nil).Data()["items"].([]any)
		if a, _ := created[0].(map[string]any)["actor"].(map[string]any); a["type"] != "api_key" || a["id"] != e.Tenant.APIKeyID {
			t.Fatalf("the API's finalize: actor %v", a)
		}
	})
}
