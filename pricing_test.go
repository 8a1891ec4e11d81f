package remit_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/remit-billing/remit"
)

func ptr[T any](v T) *T { return &v }

// problems lists a Problems' fields as "field:reason", in order.
func problems(p *remit.Problems) []string {
	var out []string
	for _, f := range p.Fields() {
		out = append(out, f.Field+":"+f.Reason)
	}
	return out
}

func wantProblems(t *testing.T, p *remit.Problems, want ...string) {
	t.Helper()
	if got := problems(p); !slices.Equal(got, want) {
		t.Fatalf("problems %v, want %v", got, want)
	}
}

var (
	oneTime   = remit.Price{PriceID: "p_once", Name: "Setup", PriceType: remit.PriceFixedOneTime, Currency: "USD", UnitAmount: ptr[int64](500)}
	monthly   = remit.Price{PriceID: "p_month", Name: "Pro", PriceType: remit.PriceFixedRecurring, Currency: "USD", UnitAmount: ptr[int64](4900), BillingInterval: ptr("month"), BillingIntervalCount: ptr[int64](1)}
	yearly    = remit.Price{PriceID: "p_year", Name: "Pro yearly", PriceType: remit.PriceFixedRecurring, Currency: "USD", UnitAmount: ptr[int64](49000), BillingInterval: ptr("year")}
	metered   = remit.Price{PriceID: "p_usage", Name: "API calls", PriceType: remit.PriceUsageMetered, Currency: "USD", UnitAmount: ptr[int64](2), MeterID: ptr("m_api"), BillingInterval: ptr("month")}
	pwyw      = remit.Price{PriceID: "p_pwyw", Name: "Donation", PriceType: remit.PricePayWhatYouWant, Currency: "USD"}
	free      = remit.Price{PriceID: "p_free", Name: "Free", PriceType: remit.PriceFree, Currency: "USD", UnitAmount: ptr[int64](0)}
	inEuros   = remit.Price{PriceID: "p_eur", Name: "Euro", PriceType: remit.PriceFixedOneTime, Currency: "EUR", UnitAmount: ptr[int64](100)}
	allPrices = map[string]remit.Price{"p_once": oneTime, "p_month": monthly, "p_year": yearly, "p_usage": metered, "p_pwyw": pwyw, "p_free": free, "p_eur": inEuros}
)

// TestPriceLine: the one pricing rule of invoice and quote lines.
func TestPriceLine(t *testing.T) {
	for _, c := range []struct {
		name     string
		doc      remit.LineDocument
		currency string
		price    remit.Price
		in       remit.InvoiceLineInput
		want     remit.PricedRequest
		problems []string
		message  string // of the first problem, when it matters
	}{
		{name: "catalog price, quantity 1", doc: remit.ForInvoice, currency: "USD", price: oneTime,
			want: remit.PricedRequest{Description: "Setup", Quantity: 1, UnitAmount: 500, Amount: 500}},
		{name: "quantity and description", doc: remit.ForQuote, currency: "USD", price: monthly,
			in:   remit.InvoiceLineInput{Quantity: ptr[int64](3), Description: ptr("Seats")},
			want: remit.PricedRequest{Description: "Seats", Quantity: 3, UnitAmount: 4900, Amount: 14700}},
		{name: "the line's unit amount overrides the price's", doc: remit.ForInvoice, currency: "USD", price: oneTime,
			in:   remit.InvoiceLineInput{UnitAmount: ptr[int64](450)},
			want: remit.PricedRequest{Description: "Setup", Quantity: 1, UnitAmount: 450, UnitOverride: true, Amount: 450}},
		{name: "usage is measured: no quantity", doc: remit.ForInvoice, currency: "USD", price: metered,
			in:       remit.InvoiceLineInput{Quantity: ptr[int64](5)},
			want:     remit.PricedRequest{Description: "API calls", Quantity: 0, UnitAmount: 2},
			problems: []string{"lines[0].quantity:not_allowed"}, message: "quantity is measured for usage_metered prices: it is the usage recorded in the period."},
		{name: "usage in a quote is billed in arrears", doc: remit.ForQuote, currency: "USD", price: metered,
			in:       remit.InvoiceLineInput{Quantity: ptr[int64](5)},
			want:     remit.PricedRequest{Description: "API calls", Quantity: 0, UnitAmount: 2},
			problems: []string{"lines[0].quantity:not_allowed"}, message: "quantity is measured for usage_metered prices: the usage recorded in each period is billed in arrears."},
		{name: "pay what you want needs the line's amount", doc: remit.ForQuote, currency: "USD", price: pwyw,
			want:     remit.PricedRequest{Description: "Donation", Quantity: 1},
			problems: []string{"lines[0].unitAmount:required"}, message: "unitAmount is required on the line for priceType pay_what_you_want: the amount is chosen per quote."},
		{name: "a free price stays free", doc: remit.ForInvoice, currency: "USD", price: free, in: remit.InvoiceLineInput{UnitAmount: ptr[int64](1)},
			want:     remit.PricedRequest{Description: "Free", Quantity: 1, UnitAmount: 1, UnitOverride: true, Amount: 1},
			problems: []string{"lines[0].unitAmount:not_allowed"}},
		{name: "price in another currency", doc: remit.ForInvoice, currency: "USD", price: inEuros,
			want:     remit.PricedRequest{Description: "Euro", Quantity: 1, UnitAmount: 100, Amount: 100},
			problems: []string{"lines[0].priceId:currency_mismatch"}, message: "Price 'p_eur' is in EUR; every line's price must be in the invoice's currency USD."},
		{name: "no comparison with an invalid document currency", doc: remit.ForInvoice, currency: "", price: inEuros,
			want: remit.PricedRequest{Description: "Euro", Quantity: 1, UnitAmount: 100, Amount: 100}},
		{name: "quantity below 1", doc: remit.ForQuote, currency: "USD", price: oneTime, in: remit.InvoiceLineInput{Quantity: ptr[int64](0)},
			want: remit.PricedRequest{Description: "Setup", Quantity: 1, UnitAmount: 500, Amount: 500}, problems: []string{"lines[0].quantity:out_of_range"}},
		{name: "unit amount out of range", doc: remit.ForQuote, currency: "USD", price: oneTime, in: remit.InvoiceLineInput{UnitAmount: ptr[int64](-1)},
			want: remit.PricedRequest{Description: "Setup", Quantity: 1, Amount: 0}, problems: []string{"lines[0].unitAmount:out_of_range"}},
		{name: "quantity × unit amount too large", doc: remit.ForInvoice, currency: "USD", price: oneTime,
			in:       remit.InvoiceLineInput{Quantity: ptr[int64](2), UnitAmount: ptr[int64](remit.MaxAmount)},
			want:     remit.PricedRequest{Description: "Setup", Quantity: 2, UnitAmount: remit.MaxAmount, UnitOverride: true},
			problems: []string{"lines[0].quantity:amount_too_large"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			got := remit.PriceLine(c.doc, "lines[0]", c.currency, c.price, c.in, &p)
			c.want.Price = c.price
			if c.want.Units == 0 {
				c.want.Units = c.want.Quantity // no packages: the quantity asked for is the quantity billed
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			wantProblems(t, &p, c.problems...)
			if c.message != "" && p.Fields()[0].Message != c.message {
				t.Errorf("message %q, want %q", p.Fields()[0].Message, c.message)
			}
		})
	}
}

// TestCouponsFor: coupons resolve in order, each once, in the document's currency.
func TestCouponsFor(t *testing.T) {
	byID := map[string]remit.Coupon{
		"pct":  {CouponID: "pct", PercentOff: ptr[int64](10)},
		"usd":  {CouponID: "usd", AmountOff: ptr[int64](500), Currency: ptr("USD")},
		"eur":  {CouponID: "eur", AmountOff: ptr[int64](500), Currency: ptr("EUR")},
		"half": {CouponID: "half", PercentOff: ptr[int64](50)},
	}
	for _, c := range []struct {
		name     string
		ids      []string
		want     []remit.CouponTerms
		problems []string
		notFound string
	}{
		{name: "in order", ids: []string{"usd", "pct"}, want: []remit.CouponTerms{{ID: "usd", AmountOff: 500}, {ID: "pct", PercentOff: 10}}},
		{name: "a coupon applies once", ids: []string{"half", "half"}, want: []remit.CouponTerms{{ID: "half", PercentOff: 50}}, problems: []string{"couponIds[1]:duplicate"}},
		{name: "amount off in another currency", ids: []string{"eur"}, want: []remit.CouponTerms{{ID: "eur", AmountOff: 500}}, problems: []string{"couponIds[0]:currency_mismatch"}},
		{name: "unknown coupon", ids: []string{"pct", "nope"}, notFound: "couponIds[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			got, err := remit.CouponsFor(remit.ForInvoice, "USD", c.ids, byID, &p)
			if c.notFound != "" {
				var e *remit.Error
				if !errorAs(err, &e) || e.Code != remit.ENotFound || e.Details["field"] != c.notFound {
					t.Fatalf("err %v, want not_found at %s", err, c.notFound)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v %v, want %v", got, err, c.want)
			}
			wantProblems(t, &p, c.problems...)
		})
	}
}

func errorAs(err error, target **remit.Error) bool {
	e, ok := err.(*remit.Error)
	if ok {
		*target = e
	}
	return ok
}
