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
	return create(ctx, ca.core, m, &p, remit.EventPriceCreated, func(probs *remit.Problems) { remit.CheckPrice(&p, probs) }, func(now time.Time) string {
		p.Object, p.Environment, p.MerchantAccountID, p.CreatedAt, p.Active = "price", m.Environment, m.ID, now, true
		p.Metadata = remit.CopyMetadata(p.Metadata)
		return p.PriceID
	}, func(ctx context.Context, tx *store.Tx, now time.Time) error {
		if err := tx.EnsureProduct(ctx, m.ID, p.ProductID, now); err != nil {
			return err
		}
		return duplicateAs(tx.CreatePrice(ctx, p), "price", "priceId", p.PriceID)
	})
}

// GetPrice returns a price of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetPrice(ctx context.Context, m remit.MerchantAccount, priceID string) (remit.Price, error) {
	return ca.DB.Read(ctx).GetPrice(ctx, m.ID, priceID)
}

// ListPrices lists the merchant account's prices newest first, by type, meter, currency, product
// and archive state (active).
//
// Errors: validation_failure (priceType, currency, active, limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListPrices(ctx context.Context, m remit.MerchantAccount, in remit.PriceQuery) (remit.List[remit.Price], error) {
	return listActive(ctx, ca.core, m, "prices", in.ListQuery, func(p *remit.Problems) {
		enumProblem(p, "priceType", in.PriceType, remit.PriceTypes)
		currencyFilter(p, "currency", in.Currency)
	}, in.Active, func(active *bool, page store.ListPage) ([]remit.Price, error) {
		return ca.DB.Read(ctx).ListPrices(ctx, m.ID, store.PriceFilter{PriceType: in.PriceType, MeterID: in.MeterID, Currency: in.Currency,
			ProductID: in.ProductID, Active: active, ListPage: page})
	})
}

// CreateCoupon adds a coupon (couponId generated as cpn_... when omitted) and emits coupon.created.
//
// Errors: validation_failure, conflict (couponId taken).
func (ca *Catalog) CreateCoupon(ctx context.Context, m remit.MerchantAccount, c remit.Coupon) (remit.Coupon, error) {
	return create(ctx, ca.core, m, &c, remit.EventCouponCreated, func(probs *remit.Problems) { remit.CheckCoupon(&c, probs) }, func(now time.Time) string {
		c.CouponID = remit.IDOr(c.CouponID, "cpn")
		c.Object, c.Environment, c.MerchantAccountID, c.CreatedAt, c.Active = "coupon", m.Environment, m.ID, now, true
		c.Metadata = remit.CopyMetadata(c.Metadata)
		return c.CouponID
	}, func(ctx context.Context, tx *store.Tx, _ time.Time) error {
		return duplicateAs(tx.CreateCoupon(ctx, c), "coupon", "couponId", c.CouponID)
	})
}

// GetCoupon returns a coupon of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetCoupon(ctx context.Context, m remit.MerchantAccount, couponID string) (remit.Coupon, error) {
	return ca.DB.Read(ctx).GetCoupon(ctx, m.ID, couponID)
}

// ListCoupons lists the merchant account's coupons newest first, by archive state (active).
//
// Errors: validation_failure (active, limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListCoupons(ctx context.Context, m remit.MerchantAccount, in remit.CouponQuery) (remit.List[remit.Coupon], error) {
	return listActive(ctx, ca.core, m, "coupons", in.ListQuery, nil, in.Active, func(active *bool, page store.ListPage) ([]remit.Coupon, error) {
		return ca.DB.Read(ctx).ListCoupons(ctx, m.ID, store.CouponFilter{Active: active, ListPage: page})
	})
}

// listActive is listPage for a catalog list filtered by archive state (active=, activeParam) after
// its other filters (check, nil for none): read gets what active asks (nil: either) with the page.
func listActive[T remit.Keyed](ctx context.Context, co *core, m remit.MerchantAccount, list string, q remit.ListQuery, check func(*remit.Problems), active string,
	read func(active *bool, page store.ListPage) ([]T, error)) (remit.List[T], error) {
	var a *bool
	return listPage(ctx, co, scopeOf(m), list, q, func(p *remit.Problems) {
		if check != nil {
			check(p)
		}
		a = activeParam(p, active)
	}, func(page store.ListPage) ([]T, error) { return read(a, page) })
}

// activeParam reads a list's active= filter: nil when absent, else true or false (boolParam).
func activeParam(p *remit.Problems, value string) *bool {
	if value == "" {
		return nil
	}
	v := boolParam(p, "active", value)
	return &v
}
