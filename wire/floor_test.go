//go:build remitfloor

package wire_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/wire"
)

// TestFloorRoute: in a build with -tags remitfloor (go test -tags remitfloor ./wire), the invoice
// read's floor route answers an invoice's stored lines by its merchant account and ID, beside the
// ceiling, and only when the ceiling is served.
func TestFloorRoute(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst, cfg.LoadCeiling = 100000, 100000, true
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
			"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 2500})
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "C1"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1", "customerId": "c1", "currency": "USD", "collectionMethod": "send_invoice"})
		id := e.Must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
			"lines": []any{map[string]any{"priceId": "item"}, map[string]any{"priceId": "item", "quantity": 2}}}).Data()["invoiceId"].(string)

		srv := httptest.NewServer(e.Remit.HTTPServer().Handler)
		defer srv.Close()
		get := func(merchant, invoice string) (int, []byte) {
			res, err := http.Get(srv.URL + wire.FloorInvoicePath + invoice + "?merchantAccountId=" + merchant)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, b
		}
		status, body := get(e.Tenant.Sandbox, id)
		var lines []struct {
			PriceID  string `json:"price_id"`
			Quantity int64  `json:"quantity"`
			Amount   int64  `json:"amount"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &lines) != nil {
			t.Fatalf("floor route: %d %s", status, body)
		}
		if len(lines) != 2 || lines[0].PriceID != "item" || lines[1].Quantity != 2 || lines[1].Amount != 5000 {
			t.Errorf("floor route answered %s, want the invoice's two stored lines", body)
		}
		if status, _ := get(e.Tenant.Production, id); status != http.StatusNotFound {
			t.Errorf("another merchant account's read answered %d, want 404", status)
		}
		if status, _ := get(e.Tenant.Sandbox, "in_missing"); status != http.StatusNotFound {
			t.Errorf("an unknown invoice answered %d, want 404", status)
		}

		off := cfg
		off.LoadCeiling = false
		e2 := testkit.StartOn(t, e.Store, e.DBURL, testkit.Options{Config: &off})
		plain := httptest.NewServer(e2.Remit.HTTPServer().Handler)
		defer plain.Close()
		res, err := http.Get(plain.URL + wire.FloorInvoicePath + id + "?merchantAccountId=" + e.Tenant.Sandbox)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Error("the floor route answered without REMIT_LOAD_CEILING")
		}
	})
}
