package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/remit-billing/remit"
)

// Products, features and the features products grant (docs/entitlements.md).

// CreateProduct inserts a product. A productId already used in the merchant account (also by a
// product a price created on first use) is a conflict.
func (q Q) CreateProduct(ctx context.Context, p remit.Product) error {
	_, err := q.exec(ctx, `INSERT INTO products (merchant_account_id, id, created_at, name, description, active, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.MerchantAccountID, p.ProductID, remit.Micros(p.CreatedAt), p.Name, optText(p.Description), p.Active, metadataText(p.Metadata))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateProduct")
}

const productColumns = `id, created_at, name, description, active, metadata`

// productTable is the products table's reads.
var productTable = accountTable[remit.Product]{from: "products", columns: productColumns, kind: "product",
	scan: owning(scanProduct, func(p *remit.Product) *string { return &p.MerchantAccountID })}

func scanProduct(row interface{ Scan(...any) error }) (p remit.Product, err error) {
	var desc sql.NullString
	var md string
	var created int64
	if err = row.Scan(&p.ProductID, &created, &p.Name, &desc, &p.Active, &md); err != nil {
		return p, err
	}
	p.Object, p.Description, p.Metadata, p.CreatedAt = "product", textPtr(desc), metadataOf(md), remit.FromMicros(created)
	p.Features = []remit.ProductFeature{}
	return p, nil
}

// ReadProduct returns a merchant account's product with the features it grants, or not_found;
// Locked, it takes the row lock (PostgreSQL), as an update does.
func (q Q) ReadProduct(ctx context.Context, merchantAccountID, productID string, read Read) (remit.Product, error) {
	p, err := productTable.get(ctx, q, "store.ReadProduct", merchantAccountID, productID, read)
	if err != nil {
		return p, err
	}
	grants, err := q.ProductGrants(ctx, merchantAccountID, []string{productID})
	p.Features = append(p.Features, grants[productID]...)
	return p, err
}

// UpdateProduct writes what an update changes of a product: name, description, active, metadata.
func (q Q) UpdateProduct(ctx context.Context, p remit.Product) error {
	_, err := q.exec(ctx, `UPDATE products SET name = $3, description = $4, active = $5, metadata = $6 WHERE merchant_account_id = $1 AND id = $2`,
		p.MerchantAccountID, p.ProductID, p.Name, optText(p.Description), p.Active, metadataText(p.Metadata))
	return wrapErr(err, "store.UpdateProduct")
}

// ProductFilter narrows a list of products: Active, when set, to the active or the archived ones.
type ProductFilter struct {
	Active *bool
	ListPage
}

// ListProducts returns a page of products with their features, newest first (Limit+1 rows).
func (q Q) ListProducts(ctx context.Context, merchantAccountID string, f ProductFilter) ([]remit.Product, error) {
	base, args := activeFilter(productTable.selectAll(), []any{merchantAccountID}, f.Active)
	items, err := productTable.listFrom(ctx, q, "store.ListProducts", merchantAccountID, base, args, f.ListPage)
	if err != nil || len(items) == 0 {
		return items, err
	}
	ids := make([]string, len(items))
	for i, p := range items {
		ids[i] = p.ProductID
	}
	grants, err := q.ProductGrants(ctx, merchantAccountID, ids)
	for i := range items {
		items[i].Features = append(items[i].Features, grants[items[i].ProductID]...)
	}
	return items, err
}

// ProductGrants returns the features each of the products among ids grants, by product ID and
// then by featureKey, with each feature's type, in one query.
func (q Q) ProductGrants(ctx context.Context, merchantAccountID string, ids []string) (map[string][]remit.ProductFeature, error) {
	type grant struct {
		product string
		feature remit.ProductFeature
	}
	out := map[string][]remit.ProductFeature{}
	err := eachAmong(ctx, q, "store.ProductGrants", merchantAccountID, ids, func(in string) string {
		return `SELECT pf.product_id, pf.feature_key, f.type, pf.limit_units, pf.soft_limit, pf.value, f.meter_id
		FROM product_features pf JOIN features f ON f.merchant_account_id = pf.merchant_account_id AND f.id = pf.feature_key
		WHERE pf.merchant_account_id = $1 AND pf.product_id IN (` + in + `) ORDER BY pf.product_id, pf.feature_key`
	}, func(row scanner) (gr grant, err error) {
		var limit sql.NullInt64
		var value, meter sql.NullString
		g := &gr.feature
		err = row.Scan(&gr.product, &g.FeatureKey, &g.Type, &limit, &g.SoftLimit, &value, &meter)
		g.Limit, g.Value, g.MeterID = intPtr(limit), textPtr(value), meter.String
		return gr, err
	}, func(gr grant) { out[gr.product] = append(out[gr.product], gr.feature) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PutProductFeature makes a product grant a feature, replacing its grant of the same feature.
func (q Q) PutProductFeature(ctx context.Context, merchantAccountID, productID string, g remit.ProductFeature) error {
	_, err := q.exec(ctx, `INSERT INTO product_features (merchant_account_id, product_id, feature_key, limit_units, soft_limit, value)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (merchant_account_id, product_id, feature_key) DO UPDATE SET limit_units = $4, soft_limit = $5, value = $6`,
		merchantAccountID, productID, g.FeatureKey, optInt(g.Limit), g.SoftLimit, optText(g.Value))
	return wrapErr(err, "store.PutProductFeature")
}

// DeleteProductFeature stops a product granting a feature; it reports whether it did.
func (q Q) DeleteProductFeature(ctx context.Context, merchantAccountID, productID, featureKey string) (bool, error) {
	n, err := q.exec(ctx, `DELETE FROM product_features WHERE merchant_account_id = $1 AND product_id = $2 AND feature_key = $3`,
		merchantAccountID, productID, featureKey)
	return n > 0, wrapErr(err, "store.DeleteProductFeature")
}

// CreateFeature inserts a feature. A featureKey already used in the merchant account is a
// conflict.
func (q Q) CreateFeature(ctx context.Context, f remit.Feature) error {
	_, err := q.exec(ctx, `INSERT INTO features (merchant_account_id, id, name, type, meter_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		f.MerchantAccountID, f.FeatureKey, f.Name, f.Type, optText(f.MeterID), remit.Micros(f.CreatedAt))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateFeature")
}

const featureColumns = `id, name, type, meter_id, created_at`

// featureTable is the features table's reads.
var featureTable = accountTable[remit.Feature]{from: "features", columns: featureColumns, kind: "feature",
	scan: owning(scanFeature, func(f *remit.Feature) *string { return &f.MerchantAccountID })}

func scanFeature(row interface{ Scan(...any) error }) (f remit.Feature, err error) {
	var meter sql.NullString
	var created int64
	if err = row.Scan(&f.FeatureKey, &f.Name, &f.Type, &meter, &created); err != nil {
		return f, err
	}
	f.Object, f.MeterID, f.CreatedAt = "feature", textPtr(meter), remit.FromMicros(created)
	return f, nil
}

// GetFeature returns a merchant account's feature, or not_found.
func (q Q) GetFeature(ctx context.Context, merchantAccountID, featureKey string) (remit.Feature, error) {
	return featureTable.get(ctx, q, "store.GetFeature", merchantAccountID, featureKey, Unlocked)
}

// ListFeatures returns a page of features, newest first (Limit+1 rows).
func (q Q) ListFeatures(ctx context.Context, merchantAccountID string, page ListPage) ([]remit.Feature, error) {
	return featureTable.list(ctx, q, "store.ListFeatures", merchantAccountID, page)
}

// EntitlementVersions are the versions of a customer's entitlements (catalog: the merchant
// account's products and meters; customer: its subscriptions and usage), 0 before any change;
// triggers move them (catalog_migration.go).
func (q Q) EntitlementVersions(ctx context.Context, merchantAccountID, customerID string) (catalog, customer int64, err error) {
	err = q.QueryRow(ctx, `SELECT COALESCE(MAX(CASE WHEN customer_id = '' THEN version END), 0), COALESCE(MAX(CASE WHEN customer_id = $2 THEN version END), 0)
		FROM entitlement_versions WHERE merchant_account_id = $1 AND customer_id IN ('', $2)`, merchantAccountID, customerID).Scan(&catalog, &customer)
	return catalog, customer, wrapErr(err, "store.EntitlementVersions")
}

// EntitlementState is the last entitlement state a customer was told of (JSON; "" when none);
// Locked, it takes the row lock (PostgreSQL) so that two changes of one customer compare in turn.
func (q Q) EntitlementState(ctx context.Context, merchantAccountID, customerID string, read Read) (string, error) {
	var state string
	err := q.QueryRow(ctx, `SELECT state FROM entitlement_states WHERE merchant_account_id = $1 AND customer_id = $2`+q.lockFor(read),
		merchantAccountID, customerID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return state, wrapErr(err, "store.EntitlementState")
}

// PutEntitlementState records the entitlement state a customer was told of.
func (q Q) PutEntitlementState(ctx context.Context, merchantAccountID, customerID, state string) error {
	_, err := q.exec(ctx, `INSERT INTO entitlement_states (merchant_account_id, customer_id, state) VALUES ($1, $2, $3)
		ON CONFLICT (merchant_account_id, customer_id) DO UPDATE SET state = $3`, merchantAccountID, customerID, state)
	return wrapErr(err, "store.PutEntitlementState")
}

// PriceProducts returns the product of each price among ids, by price ID.
func (q Q) PriceProducts(ctx context.Context, merchantAccountID string, ids []string) (map[string]string, error) {
	return textPairs(ctx, q, "store.PriceProducts", merchantAccountID, ids, func(in string) string {
		return `SELECT id, product_id FROM prices WHERE merchant_account_id = $1 AND id IN (` + in + `)`
	})
}

// ProductPriceIDs returns the IDs of a product's prices.
func (q Q) ProductPriceIDs(ctx context.Context, merchantAccountID, productID string) ([]string, error) {
	return queryStrings(ctx, q, "store.ProductPriceIDs", `SELECT id FROM prices WHERE merchant_account_id = $1 AND product_id = $2`, merchantAccountID, productID)
}
