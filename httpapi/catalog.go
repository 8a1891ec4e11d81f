package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// listPrices handles GET /v1/prices.
func (s *Server) listPrices(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListPrices(ctx, r.Merchant, remit.PriceQuery{PriceType: r.Query("priceType"), MeterID: r.Query("meterId"),
		Currency: r.Query("currency"), ProductID: r.Query("productId"), Active: r.Query("active"), ListQuery: remit.ListQueryOf(r.Query)})
}

// listCoupons handles GET /v1/coupons.
func (s *Server) listCoupons(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListCoupons(ctx, r.Merchant, remit.CouponQuery{Active: r.Query("active"), ListQuery: remit.ListQueryOf(r.Query)})
}

func priceInput(body api.PriceCreateRequest) remit.Price {
	p := remit.Price{
		PriceID: body.PriceId, ProductID: body.ProductId, Name: body.Name, PriceType: string(body.PriceType),
		Currency: body.Currency, BillingIntervalCount: body.BillingIntervalCount, UnitAmount: body.UnitAmount,
		MeterID: body.MeterId, Metadata: metadata(body.Metadata),
	}
	if body.BillingInterval != nil {
		v := string(*body.BillingInterval)
		p.BillingInterval = &v
	}
	if body.Tiers != nil {
		p.Tiers = make([]remit.Tier, 0, len(*body.Tiers))
		for _, t := range *body.Tiers {
			p.Tiers = append(p.Tiers, remit.Tier{UpTo: t.UpTo, UnitAmount: zeroIfNil(t.UnitAmount), FlatAmount: zeroIfNil(t.FlatAmount),
				UnitAmountGiven: t.UnitAmount != nil})
		}
	}
	if body.TiersMode != nil {
		v := string(*body.TiersMode)
		p.TiersMode = &v
	}
	if t := body.TransformQuantity; t != nil {
		p.TransformQuantity = &remit.TransformQuantity{DivideBy: t.DivideBy, Round: string(t.Round)}
	}
	return p
}

func couponInput(body api.CouponCreateRequest) remit.Coupon {
	return remit.Coupon{
		CouponID: deref(body.CouponId), Name: body.Name, PercentOff: body.PercentOff, AmountOff: body.AmountOff,
		Currency: body.Currency, Metadata: metadata(body.Metadata),
	}
}

// lineInputs are the lines of an invoice, priced as a quote's are.
func lineInputs(lines []api.InvoiceLineInput) []remit.InvoiceLineInput {
	var out []remit.InvoiceLineInput
	for _, l := range lines {
		out = append(out, remit.InvoiceLineInput{PriceID: l.PriceId, Quantity: l.Quantity, UnitAmount: l.UnitAmount, Description: l.Description})
	}
	return out
}

// quoteLineInputs are a quote's lines: an invoice's, with a trial's days.
func quoteLineInputs(lines []api.QuoteLineInput) []remit.InvoiceLineInput {
	var out []remit.InvoiceLineInput
	for _, l := range lines {
		out = append(out, remit.InvoiceLineInput{PriceID: l.PriceId, Quantity: l.Quantity, UnitAmount: l.UnitAmount, Description: l.Description,
			TrialDays: l.TrialDays})
	}
	return out
}

func derefSlice[T any](s *[]T) []T {
	if s == nil {
		return nil
	}
	return *s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func metadata(m *api.Metadata) map[string]string {
	if m == nil {
		return nil
	}
	return map[string]string(*m)
}

// zeroIfNil is *n, or 0 for nil.
func zeroIfNil(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
