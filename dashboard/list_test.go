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

func ids(body string) []string {
	var out []string
	for _, m := range invoiceRow.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}
