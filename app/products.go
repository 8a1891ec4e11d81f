package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Products and features (docs/entitlements.md): a product names the features it grants; a
// customer's entitlements follow from the products of its live subscriptions (entitlements.go).

// CreateProduct adds a product (productId generated as prod_... when omitted) and emits
// product.created.
//
// Errors: validation_failure, conflict (productId taken, also by a product a price created).
func (ca *Catalog) CreateProduct(ctx context.Context, m remit.MerchantAccount, p remit.Product) (remit.Product, error) {
	return create(ctx, ca.core, m, &p, remit.EventProductCreated, func(probs *remit.Problems) { remit.CheckProduct(&p, probs) }, func(now time.Time) string {
		p.ProductID = remit.IDOr(p.ProductID, "prod")
		p.Object, p.Environment, p.MerchantAccountID, p.CreatedAt, p.Active = "product", m.Environment, m.ID, now, true
		p.Metadata, p.Features = remit.CopyMetadata(p.Metadata), []remit.ProductFeature{}
		return p.ProductID
	}, func(ctx context.Context, tx *store.Tx, _ time.Time) error {
		return duplicateAs(tx.CreateProduct(ctx, p), "product", "productId", p.ProductID)
	})
}

// GetProduct returns a product of the merchant account with the features it grants.
//
// Errors: not_found.
func (ca *Catalog) GetProduct(ctx context.Context, m remit.MerchantAccount, productID string) (remit.Product, error) {
	return ca.DB.Read(ctx).ReadProduct(ctx, m.ID, productID, store.Unlocked)
}

// ListProducts lists the merchant account's products newest first, by archive state (active).
//
// Errors: validation_failure (active, limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListProducts(ctx context.Context, m remit.MerchantAccount, in remit.ProductQuery) (remit.List[remit.Product], error) {
	return listActive(ctx, ca.core, m, "products", in.ListQuery, nil, in.Active, func(active *bool, page store.ListPage) ([]remit.Product, error) {
		return ca.DB.Read(ctx).ListProducts(ctx, m.ID, store.ProductFilter{Active: active, ListPage: page})
	})
}

// UpdateProduct applies a merge patch to a product (name, description, active, metadata) and
// emits product.updated.
//
// Errors: validation_failure, not_found.
func (ca *Catalog) UpdateProduct(ctx context.Context, m remit.MerchantAccount, productID string, patch remit.Patch) (remit.Product, error) {
	return rowUpdate(remit.ProductPatch, remit.EventProductUpdated, func(p *remit.Product) string { return p.ProductID },
		m.ID, productID, store.Q.ReadProduct, store.Q.UpdateProduct).run(ctx, ca.core, scopeOf(m), micro(ca.Now(m)), patch)
}

// AttachProductFeature makes a product grant a feature (remit.GrantOf: limit and softLimit for a
// metered feature, value for a static one), replacing its grant of the same feature, and emits
// product.updated with previousAttributes.features. A grant equal to the one kept changes nothing.
//
// Errors: validation_failure, not_found (the product; the feature, details.field featureKey).
func (ca *Catalog) AttachProductFeature(ctx context.Context, m remit.MerchantAccount, productID string, in remit.ProductFeatureInput) (remit.Product, error) {
	now := micro(ca.Now(m))
	return inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (remit.Product, error) {
		p, err := tx.ReadProduct(ctx, m.ID, productID, store.Locked)
		if err != nil {
			return p, err
		}
		f, err := tx.GetFeature(ctx, m.ID, in.FeatureKey)
		if remit.ErrorCode(err) == remit.ENotFound {
			return p, remit.NotFound("feature", in.FeatureKey, "featureKey")
		} else if err != nil {
			return p, err
		}
		var probs remit.Problems
		g := remit.GrantOf(f, in, &probs)
		if probs.Len() > 0 {
			return p, probs.Err()
		}
		before := p.Features
		if p.Features = remit.WithFeature(before, g); sameJSON(before, p.Features) {
			return p, nil
		}
		if err := tx.PutProductFeature(ctx, m.ID, productID, g); err != nil {
			return p, err
		}
		if err := ca.productChangedEntitlements(ctx, tx, m, productID); err != nil {
			return p, err
		}
		return p, ca.EmitUpdated(ctx, tx, scopeOf(m), now, remit.EventProductUpdated, p.ProductID, p, map[string]any{"features": before})
	})
}

// DetachProductFeature stops a product granting a feature and emits product.updated with
// previousAttributes.features.
//
// Errors: not_found (the product, or a feature it does not grant).
func (ca *Catalog) DetachProductFeature(ctx context.Context, m remit.MerchantAccount, productID, featureKey string) (remit.Product, error) {
	now := micro(ca.Now(m))
	return inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (remit.Product, error) {
		p, err := tx.ReadProduct(ctx, m.ID, productID, store.Locked)
		if err != nil {
			return p, err
		}
		ok, err := tx.DeleteProductFeature(ctx, m.ID, productID, featureKey)
		if err != nil {
			return p, err
		}
		if !ok {
			return p, remit.Errorf(remit.ENotFound, "Product '%s' does not grant feature '%s'.", productID, featureKey).With("field", "featureKey")
		}
		if err := ca.productChangedEntitlements(ctx, tx, m, productID); err != nil {
			return p, err
		}
		before := p.Features
		p.Features = remit.WithoutFeature(before, featureKey)
		return p, ca.EmitUpdated(ctx, tx, scopeOf(m), now, remit.EventProductUpdated, p.ProductID, p, map[string]any{"features": before})
	})
}

// CreateFeature adds a feature (remit.CheckFeature: meterId with a metered feature only) and
// emits feature.created.
//
// Errors: validation_failure, conflict (featureKey taken).
func (ca *Catalog) CreateFeature(ctx context.Context, m remit.MerchantAccount, f remit.Feature) (remit.Feature, error) {
	return create(ctx, ca.core, m, &f, remit.EventFeatureCreated, func(probs *remit.Problems) { remit.CheckFeature(f, probs) }, func(now time.Time) string {
		f.Object, f.Environment, f.MerchantAccountID, f.CreatedAt = "feature", m.Environment, m.ID, now
		return f.FeatureKey
	}, func(ctx context.Context, tx *store.Tx, _ time.Time) error {
		return duplicateAs(tx.CreateFeature(ctx, f), "feature", "featureKey", f.FeatureKey)
	})
}

// GetFeature returns a feature of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetFeature(ctx context.Context, m remit.MerchantAccount, featureKey string) (remit.Feature, error) {
	return ca.DB.Read(ctx).GetFeature(ctx, m.ID, featureKey)
}

// ListFeatures lists the merchant account's features newest first.
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListFeatures(ctx context.Context, m remit.MerchantAccount, in remit.ListQuery) (remit.List[remit.Feature], error) {
	return listPage(ctx, ca.core, scopeOf(m), "features", in, nil,
		func(page store.ListPage) ([]remit.Feature, error) {
			return ca.DB.Read(ctx).ListFeatures(ctx, m.ID, page)
		})
}
