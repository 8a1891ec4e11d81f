package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The catalog (docs/catalog-and-balance.md): prices, the products they name (created on first use) and
// coupons. Every one belongs to one merchant account; another account's answers 404.

// scopeOf is the scope a merchant account acts in.
func scopeOf(m remit.MerchantAccount) remit.Scope {
	return remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
}

// CreatePrice adds a price to the merchant account's catalog after the per-type rules of
// remit.CheckPrice, creating its product on first use, and emits price.created.
//
// Errors: validation_failure (every broken rule), conflict (priceId taken).
func (ca *Catalog) CreatePrice(ctx context.Context, m remit.MerchantAccount, p remit.Price) (remit.Price, error) {
	var probs remit.Problems
	if remit.CheckPrice(&p, &probs); probs.Len() > 0 {
		return remit.Price{}, probs.Err()
	}
	now := micro(ca.Now(m))
	p.Object, p.Environment, p.MerchantAccountID, p.CreatedAt, p.Active = "price", m.Environment, m.ID, now, true
	p.Metadata = remit.CopyMetadata(p.Metadata)
	insert := func(ctx context.Context, tx *store.Tx) error {
		if err := tx.EnsureProduct(ctx, m.ID, p.ProductID, now); err != nil {
			return err
		}
		return duplicateAs(tx.CreatePrice(ctx, p), "price", "priceId", p.PriceID)
	}
	return p, ca.insertAndEmit(ctx, insert, scopeOf(m), now, remit.EventPriceCreated, p.PriceID, p)
}

// GetPrice returns a price of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetPrice(ctx context.Context, m remit.MerchantAccount, priceID string) (remit.Price, error) {
	p, err := ca.DB.Read(ctx).GetPrice(ctx, m.ID, priceID)
	if err != nil {
		return p, err
	}
	return p, nil
}

// ListPrices lists the merchant account's prices newest first, by type, meter, currency, product
// and archive state (active).
//
// Errors: validation_failure (priceType, currency, active, limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListPrices(ctx context.Context, m remit.MerchantAccount, in remit.PriceQuery) (remit.List[remit.Price], error) {
	var active *bool
	return listPage(ctx, ca.core, scopeOf(m), "prices", in.ListQuery, func(p *remit.Problems) {
		enumProblem(p, "priceType", in.PriceType, remit.PriceTypes)
		currencyFilter(p, "currency", in.Currency)
		active = activeParam(p, in.Active)
	}, func(page store.ListPage) ([]remit.Price, error) {
		return ca.DB.Read(ctx).ListPrices(ctx, m.ID, store.PriceFilter{PriceType: in.PriceType, MeterID: in.MeterID, Currency: in.Currency,
			ProductID: in.ProductID, Active: active, ListPage: page})
	}, func(p remit.Price) (time.Time, string) { return p.CreatedAt, p.PriceID })
}

// CreateCoupon adds a coupon (couponId generated as cpn_... when omitted) and emits coupon.created.
//
// Errors: validation_failure, conflict (couponId taken).
func (ca *Catalog) CreateCoupon(ctx context.Context, m remit.MerchantAccount, c remit.Coupon) (remit.Coupon, error) {
	var probs remit.Problems
	if remit.CheckCoupon(&c, &probs); probs.Len() > 0 {
		return remit.Coupon{}, probs.Err()
	}
	c.CouponID = remit.IDOr(c.CouponID, "cpn")
	now := micro(ca.Now(m))
	c.Object, c.Environment, c.MerchantAccountID, c.CreatedAt, c.Active = "coupon", m.Environment, m.ID, now, true
	c.Metadata = remit.CopyMetadata(c.Metadata)
	insert := func(ctx context.Context, tx *store.Tx) error {
		return duplicateAs(tx.CreateCoupon(ctx, c), "coupon", "couponId", c.CouponID)
	}
	return c, ca.insertAndEmit(ctx, insert, scopeOf(m), now, remit.EventCouponCreated, c.CouponID, c)
}

// GetCoupon returns a coupon of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetCoupon(ctx context.Context, m remit.MerchantAccount, couponID string) (remit.Coupon, error) {
	c, err := ca.DB.Read(ctx).GetCoupon(ctx, m.ID, couponID)
	if err != nil {
		return c, err
	}
	return c, nil
}

// ListCoupons lists the merchant account's coupons newest first, by archive state (active).
//
// Errors: validation_failure (active, limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListCoupons(ctx context.Context, m remit.MerchantAccount, in remit.CouponQuery) (remit.List[remit.Coupon], error) {
	var active *bool
	return listPage(ctx, ca.core, scopeOf(m), "coupons", in.ListQuery, func(p *remit.Problems) { active = activeParam(p, in.Active) },
		func(page store.ListPage) ([]remit.Coupon, error) {
			return ca.DB.Read(ctx).ListCoupons(ctx, m.ID, store.CouponFilter{Active: active, ListPage: page})
		}, func(c remit.Coupon) (time.Time, string) { return c.CreatedAt, c.CouponID })
}

// activeParam reads a list's active= filter: nil when absent, else true or false (boolParam).
func activeParam(p *remit.Problems, value string) *bool {
	if value == "" {
		return nil
	}
	v := boolParam(p, "active", value)
	return &v
}
