package dashboard_test

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

var invoiceRow = regexp.MustCompile(`/invoices/(inv_[0-9a-z]+)"`)

// The invoices list pages like the API (newest first, a cursor link to the next page), filters by
// status and by customer, and shows a bad filter's message next to its field.
func TestInvoicesList(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		open := openInvoice(t, e) // the oldest
		var drafts []string
		for range 2 {
			drafts = append(drafts, e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1",
				"currency": "USD", "lines": []any{map[string]any{"priceId": "item"}}}).Data()["invoiceId"].(string))
		}
		admin := signedInAs(t, e, "admin@example.com", remit.OperatorAdmin)
		base := "/dashboard/accounts/" + e.Tenant.Sandbox + "/invoices"
		wantStatus(t, admin.get("/dashboard"), 200, `href="`+base+`"`)

		first := admin.get(base + "?limit=2")
		wantStatus(t, first, 200, `rel="next"`)
		if got := ids(first.body); len(got) != 2 || got[0] != drafts[1] || got[1] != drafts[0] {
			t.Fatalf("first page %v, want the two drafts newest first %v", got, drafts)
		}
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)[1]
		second := admin.get(html.UnescapeString(next))
		if got := ids(second.body); len(got) != 1 || got[0] != open || strings.Contains(second.body, `rel="next"`) {
			t.Fatalf("second page %v, want [%s] and no next page", got, open)
		}
		if got := ids(admin.get(base + "?status=open").body); len(got) != 1 || got[0] != open {
			t.Fatalf("status=open: %v", got)
		}
		if got := ids(admin.get(base + "?customer=nobody").body); len(got) != 0 {
			t.Fatalf("another customer's: %v", got)
		}
		if got := ids(admin.get(base + "?customer=c1").body); len(got) != 3 {
			t.Fatalf("customer c1: %v", got)
		}
		wantStatus(t, admin.get(base+"?status=lost"), 422, `id="status-error"`, "status must be one of draft, open, paid, void, uncollectible.")
		wantStatus(t, admin.get(base+"?cursor=forged"), 422)
		wantStatus(t, admin.get("/dashboard/accounts/ma_nope/invoices"), 404)
	})
}

func ids(body string) []string { return firstGroups(invoiceRow, body) }

// firstGroups is the first group of every match of re in body, in order.
func firstGroups(re *regexp.Regexp, body string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// The payments, subscriptions and e-mails lists: the API's filters and paging, a bad filter's
// message next to it.
func TestOtherLists(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		id := openInvoice(t, e)
		e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
		q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c1", "billingAccountId": "ba-c1",
			"currency": "USD", "lines": []any{map[string]any{"priceId": "team"}}}).Data()
		sub := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()["subscriptionId"].(string)
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox

		payments := b.get(a + "/payments")
		wantStatus(t, payments, 200, "<h1>Payments</h1>", "/invoices/"+id, "succeeded", "$25.00")
		wantStatus(t, b.get(a+"/payments?status=failed"), 200, "No payment matches.")
		wantStatus(t, b.get(a+"/payments?customer=c1&status=succeeded"), 200, "/invoices/"+id)
		bad := b.get(a + "/payments?status=lost")
		wantStatus(t, bad, 422, `id="f-status-error"`, "status must be one of")

		subs := b.get(a + "/subscriptions?status=active")
		wantStatus(t, subs, 200, a+"/subscriptions/"+sub, "active")
		wantStatus(t, b.get(a+"/subscriptions?status=paused"), 200, "No subscription matches.")
		wantStatus(t, b.get(a+"/subscriptions?limit=0"), 422)

		wantStatus(t, b.get(a+"/emails"), 200, "<h1>E-mails</h1>")
		wantStatus(t, b.get(a+"/emails?customer=c1"), 200)
		wantStatus(t, b.get("/dashboard/accounts/ma_nope/payments"), 404)
	})
}

// Receipts (offset-paged like the API) and settlements.
func TestReceiptsAndSettlementsLists(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		ids := []string{openInvoice(t, e)}
		for range 2 {
			id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
				"lines": []any{map[string]any{"priceId": "item"}}}).Data()["invoiceId"].(string)
			e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
			ids = append(ids, id)
		}
		for _, id := range ids {
			e.Must(200, "POST", "/v1/invoices/"+id+"/pay", map[string]any{"outOfBand": true})
		}
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		a := "/dashboard/accounts/" + e.Tenant.Sandbox
		wantStatus(t, b.get(a), 200, `href="`+a+`/receipts"`, `href="`+a+`/settlements"`)
		all := b.get(a + "/receipts")
		wantStatus(t, all, 200, "<h1>Receipts</h1>", "RCPT-")
		if n := strings.Count(all.body, "RCPT-"); n != 3 {
			t.Fatalf("%d receipts listed, want 3", n)
		}
		first := b.get(a + "/receipts?limit=2")
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
		if strings.Count(first.body, "RCPT-") != 2 || next == nil || !strings.Contains(next[1], "offset=2") {
			t.Fatalf("first page of 2: %d receipts, next %v", strings.Count(first.body, "RCPT-"), next)
		}
		if n := strings.Count(b.get(html.UnescapeString(next[1])).body, "RCPT-"); n != 1 {
			t.Fatalf("second page: %d receipts, want 1", n)
		}
		wantStatus(t, b.get(a+"/receipts?status=lost"), 422, `id="f-status-error"`)
		wantStatus(t, b.get(a+"/settlements"), 200, "<h1>Settlements</h1>")
		wantStatus(t, b.get(a+"/settlements?scope=sideways"), 422)
	})
}
