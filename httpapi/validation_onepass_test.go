package httpapi_test

import (
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestOnePassValidation: a body with problems the contract finds and problems the operation's own
// rules find is answered with one 422 listing both kinds, and a field the contract already refused
// is not reported twice.
func TestOnePassValidation(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		t.Run("price", func(t *testing.T) {
			// Contract: name too long is not needed; unitAmount below its minimum. Rules of
			// priceType usage_metered: meterId and billingInterval required. Both lists at once.
			r := e.Do("POST", "/v1/prices", map[string]any{
				"priceId": "price_both", "productId": "prod_both", "name": "Both", "priceType": "usage_metered",
				"currency": "USD", "unitAmount": -5,
			})
			wantFields(t, r, "body:unitAmount:out_of_range", "body:meterId:required", "body:billingInterval:required")
		})
		t.Run("coupon", func(t *testing.T) {
			// Contract: percentOff above 100. Rule: percentOff and amountOff are exclusive; the
			// refused percentOff is reported once, by the contract.
			r := e.Do("POST", "/v1/coupons", map[string]any{
				"couponId": "cpn_both", "name": "Both", "percentOff": 150, "amountOff": 100, "currency": "USD",
			})
			wantFields(t, r, "body:percentOff:out_of_range", "body:amountOff:mutually_exclusive")
		})
		t.Run("merchant account", func(t *testing.T) {
			// The contract refuses country "USA"; the record's rules refuse an unsupported default
			// currency and a card volume distribution that does not sum to 100. One 422, both kinds.
			body := validMerchant("onepass")
			body["country"] = "USA"
			body["defaultCurrency"] = "XYZ"
			body["underwriting"].(map[string]any)["cardVolumeDistribution"] = map[string]any{
				"cardPresentPercentage": 50, "ecommercePercentage": 30, "mailOrderTelephoneOrderPercentage": 10}
			r := e.Do("POST", "/v1/merchant-accounts", body)
			wantFields(t, r, "body:country:invalid_format", "body:defaultCurrency:invalid_currency",
				"body:underwriting.cardVolumeDistribution:sum_not_100")
		})
		t.Run("invoice", func(t *testing.T) {
			// The contract refuses a quantity of 0; the request's own rules refuse an unknown
			// currency and a period that ends before it starts. Nothing is read to find them.
			r := e.Do("POST", "/v1/invoices", map[string]any{
				"customerId": "cus_none", "billingAccountId": "ba_none", "currency": "XYZ",
				"periodStart": "2030-02-01T00:00:00Z", "periodEnd": "2030-01-01T00:00:00Z",
				"lines": []any{map[string]any{"priceId": "price_none", "quantity": 0}},
			})
			wantFields(t, r, "body:lines[0].quantity:out_of_range", "body:currency:invalid_currency", "body:periodEnd:before_start")
		})
		t.Run("wrong type", func(t *testing.T) {
			// A value of the wrong type does not hide the rules' problems of the other fields.
			r := e.Do("POST", "/v1/prices", map[string]any{
				"priceId": "price_type", "productId": "prod_type", "name": "Type", "priceType": "fixed_one_time",
				"currency": "USD", "unitAmount": "ten", "billingInterval": "month",
			})
			wantFields(t, r, "body:unitAmount:invalid_type", "body:billingInterval:not_allowed")
		})
	})
}
