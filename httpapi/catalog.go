package httpapi

import (
	"context"
	"maps"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// catalogHandlers registers the catalog (prices, coupons) and, through their own files, customers
// and billing accounts, the prepaid balance ledger, payment-method setup and the customer portal.
func (s *Server) catalogHandlers() map[string]HandlerFunc {
	h := map[string]HandlerFunc{
		"createPrice": func(ctx context.Context, r *Request) (any, error) {
			var body api.PriceCreateRequest
			if err := r.Decode(&body); err != nil {
				return nil, err
			}
			p := remit.Price{
				PriceID: body.PriceId, ProductID: body.ProductId, Name: body.Name, PriceType: string(body.PriceType),
				Currency: body.Currency, BillingIntervalCount: body.BillingIntervalCount, UnitAmount: body.UnitAmount,
				MeterID: body.MeterId, Metadata: metadata(body.Metadata),
			}
			if body.BillingInterval != nil {
				v := string(*body.BillingInterval)
				p.BillingInterval = &v
			}
			return s.eng.Catalog.CreatePrice(ctx, r.Merchant, p)
		},
		"getPrice": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Catalog.GetPrice(ctx, r.Merchant, r.Path("priceId"), "")
		},
		"createCoupon": func(ctx context.Context, r *Request) (any, error) {
			var body api.CouponCreateRequest
			if err := r.Decode(&body); err != nil {
				return nil, err
			}
			return s.eng.Catalog.CreateCoupon(ctx, r.Merchant, remit.Coupon{
				CouponID: deref(body.CouponId), Name: body.Name, PercentOff: body.PercentOff, AmountOff: body.AmountOff,
				Currency: body.Currency, Metadata: metadata(body.Metadata),
			})
		},
		"getCoupon": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Catalog.GetCoupon(ctx, r.Merchant, r.Path("couponId"), "")
		},
	}
	maps.Copy(h, s.customerHandlers())
	maps.Copy(h, s.balanceHandlers())
	maps.Copy(h, s.portalHandlers())
	return h
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
