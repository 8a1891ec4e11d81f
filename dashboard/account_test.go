package dashboard_test

import (
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An account's home: today's revenue in the chart (one bar of 30 drawn, titled with its amount),
// the open invoices' total, and no failed payment.
func TestAccountHome(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e) // stays open: $25.00
		paid := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "item", "quantity": 3}}}).Data()["invoiceId"].(string)
		e.Must(200, "POST", "/v1/invoices/"+paid+"/finalize", map[string]any{})
		e.Must(200, "POST", "/v1/invoices/"+paid+"/pay", map[string]any{"outOfBand": true})

		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		path := "/dashboard/accounts/" + e.Tenant.Sandbox
		wantStatus(t, b.get("/dashboard"), 200, `href="`+path+`"`)
		home := b.get(path)
		wantStatus(t, home, 200, "$75.00 paid from", `role="img"`, "No failed payment.", `href="`+path+`/invoices?status=open">1</a>`)
		if n := strings.Count(home.body, "<rect "); n != remit.RevenueDays {
			t.Fatalf("%d bars, want %d", n, remit.RevenueDays)
		}
		if !strings.Contains(home.body, ": $75.00</title>") {
			t.Fatal("today's bar is not titled with its amount")
		}
		open := home.body[strings.Index(home.body, "<h2>Open invoices</h2>"):]
		if !strings.Contains(open, "$25.00") {
			t.Fatalf("open invoices: %s", open[:min(len(open), 600)])
		}
		wantStatus(t, b.get("/dashboard/accounts/ma_nope"), 404)
	})
}
