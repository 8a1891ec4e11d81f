package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// An account's home: today's revenue in the chart (one bar of 30 drawn, titled with its amount,
// on axes with labelled values and days), the open invoices' total, and no failed payment.
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
		if n := strings.Count(home.body, "<rect "); n != 2*remit.RevenueDays { // revenue, then MRR
			t.Fatalf("%d bars, want %d", n, remit.RevenueDays)
		}
		if !strings.Contains(home.body, ": $75.00</title>") {
			t.Fatal("today's bar is not titled with its amount")
		}
		// The value axis climbs from $0.00 in round steps past $75.00; today is labelled under its bar.
		revenue := home.body[strings.Index(home.body, `id="chart-revenue-title"`):]
		revenue = revenue[:strings.Index(revenue, "</svg>")]
		for _, label := range []string{">$0.00</text>", ">$20.00</text>", ">$80.00</text>", ">" + e.Clock.Now().UTC().Format("Jan 2") + "</text>"} {
			if !strings.Contains(revenue, label) {
				t.Errorf("the revenue chart's axes lack %q:\n%s", label, revenue)
			}
		}
		open := home.body[strings.Index(home.body, "<h2>Open invoices</h2>"):]
		if !strings.Contains(open, "$25.00") {
			t.Fatalf("open invoices: %s", open[:min(len(open), 600)])
		}
		wantStatus(t, b.get("/dashboard/accounts/ma_nope"), 404)
	})
}

// The MRR chart: a monthly subscription of 90.00 billed today is its monthly rate today.
func TestAccountHomeMRR(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		openInvoice(t, e)
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "team", "productId": "team", "name": "Team plan", "priceType": "fixed_recurring",
			"currency": "USD", "billingInterval": "month", "unitAmount": 9000})
		q := e.Must(201, "POST", "/v1/quotes", map[string]any{"orderType": "subscription_creation", "customerId": "c1", "billingAccountId": "ba-c1",
			"currency": "USD", "lines": []any{map[string]any{"priceId": "team"}}}).Data()
		sub := e.Must(200, "POST", "/v1/quotes/"+q["quoteId"].(string)+"/accept", map[string]any{}).Data()
		s := e.Must(200, "GET", "/v1/subscriptions/"+sub["subscriptionId"].(string), nil).Data()
		start, _ := time.Parse(time.RFC3339Nano, s["currentPeriodStart"].(string))
		end, _ := time.Parse(time.RFC3339Nano, s["currentPeriodEnd"].(string))
		want := remit.MonthlyRate(remit.BilledRecurring{Start: start, End: end, Amount: 9000})
		b := signedInAs(t, e, "viewer@example.com", remit.OperatorViewer)
		home := b.get("/dashboard/accounts/" + e.Tenant.Sandbox)
		mrr := home.body[strings.Index(home.body, "Monthly recurring revenue, last 30 days"):]
		today := fmt.Sprintf("$%d.%02d today", want/100, want%100) // 90.00 over this month's length, per average month
		if want < 8800 || want > 9200 || !strings.Contains(mrr, today) || !strings.Contains(mrr, `id="chart-mrr-title"`) {
			t.Fatalf("MRR section, want %q: %s", today, mrr[:min(len(mrr), 1200)])
		}
		if strings.Count(home.body, `id="chart-`) != 2 {
			t.Fatal("the two charts' titles need IDs of their own")
		}
	})
}
