package remit_test

import (
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

var (
	alice     = remit.Customer{CustomerID: "cus_alice"}
	aliceUSD  = remit.BillingAccount{BillingAccountID: "ba_alice", CustomerID: "cus_alice", Currency: "USD", CollectionMethod: remit.ChargeAutomatically}
	bobUSD    = remit.BillingAccount{BillingAccountID: "ba_bob", CustomerID: "cus_bob", Currency: "USD"}
	coupons   = map[string]remit.Coupon{"ten": {CouponID: "ten", PercentOff: ptr[int64](10)}}
	jan, feb  = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)
	lineOf    = func(priceID string) remit.InvoiceLineInput { return remit.InvoiceLineInput{PriceID: priceID} }
	aliceSubs = remit.Subscription{SubscriptionID: "sub_1", CustomerID: "cus_alice", BillingAccountID: "ba_alice", Currency: "USD"}
)

// TestPlanDraftInvoice: a draft invoice decided from its request and what it references.
func TestPlanDraftInvoice(t *testing.T) {
	for _, c := range []struct {
		name     string
		in       remit.InvoiceDraftInput
		ba       remit.BillingAccount
		problems []string
		notFound string
		lines    int
	}{
		{name: "priced lines and a coupon", ba: aliceUSD, lines: 2,
			in: remit.InvoiceDraftInput{Currency: "USD", Lines: []remit.InvoiceLineInput{lineOf("p_once"), lineOf("p_month")}, CouponIDs: []string{"ten"}}},
		{name: "usage needs a period", ba: aliceUSD,
			in:       remit.InvoiceDraftInput{Currency: "USD", Lines: []remit.InvoiceLineInput{lineOf("p_usage")}},
			problems: []string{"periodStart:required"}},
		{name: "usage in a period", ba: aliceUSD, lines: 1,
			in: remit.InvoiceDraftInput{Currency: "USD", PeriodStart: &jan, PeriodEnd: &feb, Lines: []remit.InvoiceLineInput{lineOf("p_usage")}}},
		{name: "every problem at once", ba: bobUSD,
			in: remit.InvoiceDraftInput{Currency: "EUR", PeriodStart: &feb, PeriodEnd: &jan, Metadata: map[string]string{"": "x"},
				Lines: []remit.InvoiceLineInput{{PriceID: "p_once", Quantity: ptr[int64](0)}, lineOf("p_pwyw")}, CouponIDs: []string{"ten", "ten"}},
			problems: []string{"metadata:invalid_key", "periodEnd:before_start", "billingAccountId:customer_mismatch", "currency:currency_mismatch",
				"lines[0].priceId:currency_mismatch", "lines[0].quantity:out_of_range", "lines[1].priceId:currency_mismatch", "lines[1].unitAmount:required", "couponIds[1]:duplicate"}},
		{name: "an unsupported currency is reported once", ba: aliceUSD,
			in:       remit.InvoiceDraftInput{Currency: "XXX", Lines: []remit.InvoiceLineInput{lineOf("p_once")}},
			problems: []string{"currency:currency_not_supported"}},
		{name: "no lines", ba: aliceUSD, in: remit.InvoiceDraftInput{Currency: "USD"}, problems: []string{"lines:required"}},
		{name: "unknown price", ba: aliceUSD, in: remit.InvoiceDraftInput{Currency: "USD", Lines: []remit.InvoiceLineInput{lineOf("p_once"), lineOf("p_gone")}},
			notFound: "lines[1].priceId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, terms, err := remit.PlanDraftInvoice(c.in, alice, c.ba, allPrices, coupons)
			checkPlanError(t, err, c.notFound, c.problems)
			if err != nil {
				return
			}
			if len(inv.Lines) != c.lines || inv.Status != remit.InvoiceDraft || inv.CollectionMethod != c.ba.CollectionMethod || len(terms) != len(c.in.CouponIDs) {
				t.Fatalf("draft %+v, terms %v", inv, terms)
			}
		})
	}
}

// TestPlanQuote: version 1 of a quote decided from its request: order-type rules, intervals, figures.
func TestPlanQuote(t *testing.T) {
	quote := func(orderType string, lines ...string) remit.QuoteInput {
		in := remit.QuoteInput{OrderType: orderType, CustomerID: "cus_alice", BillingAccountID: "ba_alice", Currency: "USD"}
		for _, l := range lines {
			in.Lines = append(in.Lines, lineOf(l))
		}
		return in
	}
	withCoupon := quote(remit.OrderOneOff, "p_once", "p_month")
	withCoupon.CouponIDs = []string{"ten"}
	amend := quote(remit.OrderSubscriptionAmendment, "p_month")
	amend.SubscriptionID = ptr("sub_1")
	otherCurrency := aliceSubs
	otherCurrency.Currency = "EUR"
	for _, c := range []struct {
		name                    string
		in                      remit.QuoteInput
		sub                     *remit.Subscription
		problems                []string
		subtotal, discount, tot int64
	}{
		{name: "figures: subtotal − discounts", in: withCoupon, subtotal: 5400, discount: 540, tot: 4860},
		{name: "usage is not one_off", in: quote(remit.OrderOneOff, "p_usage"), problems: []string{"lines[0].priceId:not_allowed"}},
		{name: "a subscription needs a recurring line", in: quote(remit.OrderSubscriptionCreation, "p_once"), problems: []string{"lines:recurring_line_required"}},
		{name: "recurring lines share one interval", in: quote(remit.OrderSubscriptionCreation, "p_month", "p_year"), problems: []string{"lines[1].priceId:interval_mismatch"}},
		{name: "an amendment needs its subscription", in: quote(remit.OrderSubscriptionAmendment, "p_month"), problems: []string{"subscriptionId:required"}},
		{name: "an amendment replaces recurring items only", in: func() remit.QuoteInput { q := amend; q.Lines = append(q.Lines, lineOf("p_once")); return q }(),
			sub: &aliceSubs, problems: []string{"lines[1].priceId:not_allowed"}},
		{name: "an amendment keeps the currency", in: amend, sub: &otherCurrency, problems: []string{"currency:subscription_mismatch"}},
		{name: "an amendment", in: amend, sub: &aliceSubs, subtotal: 4900, tot: 4900},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := remit.PlanQuote(c.in, alice, aliceUSD, c.sub, allPrices, coupons)
			checkPlanError(t, err, "", c.problems)
			if err == nil && (v.Subtotal != c.subtotal || v.DiscountTotal != c.discount || v.Total != c.tot || v.Status != remit.QuoteDraft) {
				t.Fatalf("version %+v, want %d − %d = %d", v, c.subtotal, c.discount, c.tot)
			}
		})
	}
}

// checkPlanError fails unless err is not_found at notFound, or a validation_failure listing
// exactly problems ("field:reason", in order), or nil when neither is given.
func checkPlanError(t *testing.T, err error, notFound string, problems []string) {
	t.Helper()
	var e *remit.Error
	switch {
	case notFound != "":
		if !errorAs(err, &e) || e.Code != remit.ENotFound || e.Details["field"] != notFound {
			t.Fatalf("err %v, want not_found at %s", err, notFound)
		}
	case len(problems) > 0:
		if !errorAs(err, &e) || e.Code != remit.EInvalid {
			t.Fatalf("err %v, want validation_failure", err)
		}
		var got []string
		for _, f := range e.Fields {
			got = append(got, f.Field+":"+f.Reason)
		}
		if len(got) != len(problems) {
			t.Fatalf("problems %v, want %v", got, problems)
		}
		for i := range got {
			if got[i] != problems[i] {
				t.Fatalf("problems %v, want %v", got, problems)
			}
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	}
}
