package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// BenchmarkInvoicePDF: GET /v1/invoices/{id}/pdf of a finalized invoice of 200 lines (three
// prices, two coupons, a customer in British Columbia: GST + PST on every line) on SQLite: the
// route's reads (invoice and lines, credit notes, customer, billing account, coupons) and the
// rendering. Figures in docs/performance.md ("Documents").
func BenchmarkInvoicePDF(b *testing.B) {
	e := benchEnv(b)
	e.Tenant.Sandbox = e.Must(200, "POST", "/v1/merchant-accounts", map[string]any{
		"environment": "sandbox", "displayName": "Northwind Outfitters", "legalEntityType": "corporation", "country": "US",
		"merchantMode": "direct", "defaultCurrency": "USD",
		"businessAddress": map[string]any{"line1": "500 Market St", "city": "San Francisco", "region": "CA", "postalCode": "94105", "country": "US"},
	}).Data()["merchantAccountId"].(string)
	for _, p := range []map[string]any{
		{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 5000},
		{"priceId": "seats", "productId": "seats", "name": "Seats", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1234},
		{"priceId": "setup", "productId": "setup", "name": "Setup", "priceType": "fixed_one_time", "currency": "USD", "unitAmount": 2500},
	} {
		e.Must(200, "POST", "/v1/prices", p)
	}
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "ten", "name": "10% off", "percentOff": 10})
	e.Must(201, "POST", "/v1/coupons", map[string]any{"couponId": "five", "name": "5.00 off", "amountOff": 500, "currency": "USD"})
	e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "bc", "name": "Customer bc",
		"address": map[string]any{"line1": "1 Main St", "city": "Vancouver", "postalCode": "V5K 0A1", "country": "CA", "region": "BC"}})
	e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-bc", "customerId": "bc", "currency": "USD"})
	var lines []any
	for i := range 200 {
		lines = append(lines, map[string]any{"priceId": []string{"plan", "seats", "setup"}[i%3], "quantity": i%9 + 1,
			"description": fmt.Sprintf("Line %d: workspace seats for the platform engineering team", i+1)})
	}
	id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "bc", "billingAccountId": "ba-bc", "currency": "USD",
		"lines": lines, "couponIds": []string{"ten", "five"}}).Data()["invoiceId"].(string)
	e.Must(200, "POST", "/v1/invoices/"+id+"/finalize", map[string]any{})
	u := e.Server.URL + "/v1/invoices/" + id + "/pdf?environment=sandbox&merchantAccountId=" + url.QueryEscape(e.Tenant.Sandbox)
	newReq := func() *http.Request {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
		return req
	}
	cpu := func(b *testing.B, start time.Duration) {
		if used := testkit.ProcessCPU() - start; used > 0 {
			b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		}
	}
	b.Run("serial", func(b *testing.B) {
		c := benchClient()
		b.ReportAllocs()
		start := testkit.ProcessCPU()
		for b.Loop() {
			doBench(b, c, newReq(), 200)
		}
		cpu(b, start)
	})
	b.Run("handler", func(b *testing.B) {
		start := testkit.ProcessCPU()
		benchHandler(b, e, newReq, 200)
		cpu(b, start)
	})
}
