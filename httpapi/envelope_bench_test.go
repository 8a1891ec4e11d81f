package httpapi

import (
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// BenchmarkEnvelope: the success envelope {data, requestId} of two answers: an invoice with three
// lines (GET /v1/invoices/{id}) and a customer balance with 100 ledger entries (GET
// /v1/customers/{id}/balance with the load harness's seed).
//
//	go test -run '^$' -bench Envelope -benchtime 2s ./httpapi/
func BenchmarkEnvelope(b *testing.B) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	str := func(s string) *string { return &s }
	inv := remit.Invoice{Object: "invoice", InvoiceID: "inv_01hzy3bq2x4d7c6v0s1n9m8k7j", Number: str("INV-000123"), CustomerID: "cus_01hzy3bq2x4d7c6v0s1n9m8k7j",
		BillingAccountID: "ba_01hzy3bq2x4d7c6v0s1n9m8k7j", Currency: "USD", Status: remit.InvoiceOpen, CollectionMethod: remit.SendInvoice,
		CouponIDs: []string{}, Subtotal: 9000, TaxTotal: 653, Total: 9653, AmountDue: 9653, AmountRemaining: 9653,
		TaxTransactionID: str("txn_01hzy3bq2x4d7c6v0s1n9m8k7j"), PaymentURL: str("https://billing.example.com/customer-portal/invoices/inv_01hzy3bq2x4d7c6v0s1n9m8k7j/pay?token=hpt_0123456789abcdef"),
		FinalizedAt: &now, Metadata: map[string]string{"order": "1234"}, Environment: remit.Sandbox, MerchantAccountID: "ma_01hzy3bq2x4d7c6v0s1n9m8k7j",
		CreatedAt: now, UpdatedAt: now}
	for i := range 3 {
		inv.Lines = append(inv.Lines, remit.InvoiceLine{Object: "invoice_line", InvoiceLineID: "il_01hzy3bq2x4d7c6v0s1n9m8k7" + string(rune('a'+i)),
			LineType: remit.LineRecurring, PriceID: "price_basic", PriceType: remit.PriceFixedRecurring, Description: "Basic plan",
			Quantity: 1, UnitAmount: 3000, Amount: 3000, TaxAmount: 218,
			Taxes: []remit.LineTax{{Jurisdiction: "US-CA", Rate: 0.0725, RatePPM: 72500, TaxableAmount: 3000, TaxAmount: 218}}})
	}
	bal := remit.CustomerBalance{Object: "customer_balance", CustomerID: inv.CustomerID, Environment: remit.Sandbox, MerchantAccountID: inv.MerchantAccountID,
		Balances: []remit.CurrencyBalance{{Currency: "USD", Available: 4000}}}
	for i := range 100 {
		left := int64(0)
		bal.Entries = append(bal.Entries, remit.BalanceEntry{Object: "balance_entry", EntryID: "ble_01hzy3bq2x4d7c6v0s1n9m8k" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			CustomerID: inv.CustomerID, Type: remit.EntryGrant, Currency: "USD", Amount: 1000, Remaining: &left, Description: str("Prepaid credit"),
			EffectiveAt: now, Metadata: map[string]string{}, Environment: remit.Sandbox, MerchantAccountID: inv.MerchantAccountID, CreatedAt: now})
	}
	for _, c := range []struct {
		name string
		data any
	}{{"invoice", inv}, {"balance-100-entries", bal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				body, err := encodeSuccess(c.data, remit.Sandbox, "req_01hzy3bq2x4d7c6v0s1n9m8k7j")
				if err != nil {
					b.Fatal(err)
				}
				n = len(body)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}
