package httpapi_test

import (
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestIntegersBeyondInt64: an integer just past int64 (2^63, which a float64 cannot tell from
// 2^63 − 1) in an integer field is a 422 naming the field, like every other bound, listed with the
// body's other problems; never a 400 that hides them.
func TestIntegersBeyondInt64(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "c_big", "name": "Big"})
		for _, c := range []struct {
			name, path, body string
			want             []string
		}{
			{"threshold", "/v1/usage-thresholds", `{"customerId":"c_big","meterId":"api","threshold":9223372036854775808}`,
				[]string{"body:threshold:out_of_range"}},
			{"2^63 + 1024", "/v1/usage-thresholds", `{"customerId":"c_big","meterId":"api","threshold":9223372036854776832}`,
				[]string{"body:threshold:out_of_range"}},
			{"billingIntervalCount, with the price's own problems", "/v1/prices",
				`{"priceId":"p_big","productId":"prod","name":"Big","priceType":"fixed_recurring","currency":"XYZ","unitAmount":1,"billingInterval":"month","billingIntervalCount":9223372036854775808}`,
				[]string{"body:billingIntervalCount:out_of_range", "body:currency:invalid_currency"}},
			{"a line's quantity", "/v1/invoices",
				`{"customerId":"c_big","billingAccountId":"ba","currency":"USD","lines":[{"priceId":"p","quantity":9223372036854775808}]}`,
				[]string{"body:lines[0].quantity:out_of_range"}},
			{"below int64", "/v1/customers/c_big/balance/grant", `{"currency":"USD","amount":-9223372036854775809}`,
				[]string{"body:amount:out_of_range"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.Do("POST", c.path, nil, jsonBody(c.body))
				wantFields(t, r, c.want...)
				if !strings.Contains(string(r.Body), "must be at") {
					t.Errorf("the message does not say the bound: %s", r.Body)
				}
			})
		}
	})
}
