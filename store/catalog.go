package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// --- helpers for nullable columns and JSON documents ---

func optText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func optInt(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

func optMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return remit.Micros(*t)
}

func textPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := remit.FromMicros(n.Int64)
	return &t
}

func metadataText(md map[string]string) string {
	if len(md) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(md)
	return string(b)
}

func metadataOf(s string) map[string]string {
	md := map[string]string{}
	if s == "{}" || s == "" { // most rows: no JSON decoding
		return md
	}
	_ = json.Unmarshal([]byte(s), &md)
	return md
}

// jsonText stores v (a pointer to a struct) as a JSON document, or NULL when nil.
func jsonText[T any](v *T) any {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonOf[T any](s sql.NullString) *T {
	if !s.Valid || s.String == "" {
		return nil
	}
	v := new(T)
	if json.Unmarshal([]byte(s.String), v) != nil {
		return nil
	}
	return v
}

// violates reports whether err is a unique violation of the constraint whose name or columns
// contain part (PostgreSQL names the index, SQLite the columns).
func violates(err error, part string) bool {
	return IsUniqueViolation(err) && strings.Contains(err.Error(), part)
}

// --- products and prices ---

// optJSON is v as JSON text when present, else NULL.
func optJSON(present bool, v any) any {
	if !present {
		return nil
	}
	return mustJSON(v)
}

// EnsureProduct creates the product on first use, named after its ID (docs/entitlements.md); an
// existing one is left as is.
func (q Q) EnsureProduct(ctx context.Context, merchantAccountID, productID string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO products (merchant_account_id, id, created_at, name) VALUES ($1, $2, $3, $2)
		ON CONFLICT (merchant_account_id, id) DO NOTHING`, merchantAccountID, productID, remit.Micros(at))
	return wrapErr(err, "store.EnsureProduct")
}

// CreatePrice inserts a price. A priceId already used in the merchant account is a conflict.
func (q Q) CreatePrice(ctx context.Context, p remit.Price) error {
	_, err := q.exec(ctx, `INSERT INTO prices (merchant_account_id, id, product_id, name, price_type, currency,
		billing_interval, billing_interval_count, unit_amount, meter_id, metadata, created_at, tiers, tiers_mode, transform_quantity,
		nickname, active)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		p.MerchantAccountID, p.PriceID, p.ProductID, p.Name, p.PriceType, p.Currency,
		optText(p.BillingInterval), optInt(p.BillingIntervalCount), optInt(p.UnitAmount), optText(p.MeterID),
		metadataText(p.Metadata), remit.Micros(p.CreatedAt), optJSON(p.Tiers != nil, p.Tiers), optText(p.TiersMode),
		optJSON(p.TransformQuantity != nil, p.TransformQuantity), optText(p.Nickname), p.Active)
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreatePrice")
}

const priceColumns = `id, product_id, name, price_type, currency, billing_interval, billing_interval_count, unit_amount, meter_id,
	metadata, created_at, tiers, tiers_mode, transform_quantity, nickname, active`

// priceTable is the prices table's reads.
var priceTable = accountTable[remit.Price]{from: "prices", columns: priceColumns, kind: "price", scan: scanPrice}

func scanPrice(row interface{ Scan(...any) error }, merchantAccountID string) (p remit.Price, err error) {
	var interval, meter, tiers, mode, transform, nickname sql.NullString
	var count, amount sql.NullInt64
	var md string
	var created int64
	if err = row.Scan(&p.PriceID, &p.ProductID, &p.Name, &p.PriceType, &p.Currency, &interval, &count, &amount, &meter, &md, &created,
		&tiers, &mode, &transform, &nickname, &p.Active); err != nil {
		return p, err
	}
	if tiers.Valid {
		if err = json.Unmarshal([]byte(tiers.String), &p.Tiers); err != nil {
			return p, err
		}
	}
	if transform.Valid {
		p.TransformQuantity = new(remit.TransformQuantity)
		if err = json.Unmarshal([]byte(transform.String), p.TransformQuantity); err != nil {
			return p, err
		}
	}
	p.TiersMode, p.Nickname = textPtr(mode), textPtr(nickname)
	p.Object, p.MerchantAccountID = "price", merchantAccountID
	p.BillingInterval, p.BillingIntervalCount, p.UnitAmount, p.MeterID = textPtr(interval), intPtr(count), intPtr(amount), textPtr(meter)
	p.Metadata, p.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return p, nil
}

// GetPrice returns a merchant account's price, or not_found.
func (q Q) GetPrice(ctx context.Context, merchantAccountID, priceID string) (remit.Price, error) {
	return q.ReadPrice(ctx, merchantAccountID, priceID, Unlocked)
}

// ReadPrice is GetPrice; Locked, it takes the row lock (PostgreSQL), as an update does.
func (q Q) ReadPrice(ctx context.Context, merchantAccountID, priceID string, read Read) (remit.Price, error) {
	return priceTable.get(ctx, q, "store.GetPrice", merchantAccountID, priceID, read)
}

// UpdatePrice writes what an update changes of a price: its nickname, whether it is active, its
// metadata.
func (q Q) UpdatePrice(ctx context.Context, p remit.Price) error {
	_, err := q.exec(ctx, `UPDATE prices SET nickname = $3, active = $4, metadata = $5 WHERE merchant_account_id = $1 AND id = $2`,
		p.MerchantAccountID, p.PriceID, optText(p.Nickname), p.Active, metadataText(p.Metadata))
	return wrapErr(err, "store.UpdatePrice")
}

// GetPrices returns the merchant account's prices among ids, by ID, in one query (the callers
// that price several lines read them all at once, not one query per line). IDs that name no
// price are absent from the map.
func (q Q) GetPrices(ctx context.Context, merchantAccountID string, ids []string) (map[string]remit.Price, error) {
	return priceTable.byIDs(ctx, q, "store.GetPrices", merchantAccountID, ids, func(p remit.Price) string { return p.PriceID })
}

// eachAmong reads the rows query(in) selects of the merchant account ($1) among ids, in the IN
// list in of the distinct ids ($2 on; inList), and hands each row scan reads to add. With no ids
// it reads nothing.
func eachAmong[T any](ctx context.Context, q Q, op, merchantAccountID string, ids []string, query func(in string) string,
	scan func(scanner) (T, error), add func(T)) error {
	in, args := inList(2, ids)
	if in == "" {
		return nil
	}
	return eachRow(ctx, q, op, scan, func(v *T) error {
		add(*v)
		return nil
	}, query(in), append([]any{merchantAccountID}, args...)...)
}

// textPairs is eachAmong of a query of two text columns: the map of the first column's values to
// the second's. On an error the map is nil.
func textPairs(ctx context.Context, q Q, op, merchantAccountID string, ids []string, query func(in string) string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := eachAmong(ctx, q, op, merchantAccountID, ids, query, func(row scanner) (p [2]string, err error) {
		return p, row.Scan(&p[0], &p[1])
	}, func(p [2]string) { out[p[0]] = p[1] })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inList is the placeholders ($argN, $argN+1, ...) and arguments of an IN list of the distinct
// values of ids ("" when there are none).
func inList(argN int, ids []string) (string, []any) {
	seen := make(map[string]bool, len(ids))
	var sb strings.Builder
	var args []any
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if len(args) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("$" + itoa(argN+len(args)))
		args = append(args, id)
	}
	return sb.String(), args
}

// --- coupons ---

// CreateCoupon inserts a coupon. A couponId already used in the merchant account is a conflict.
func (q Q) CreateCoupon(ctx context.Context, c remit.Coupon) error {
	_, err := q.exec(ctx, `INSERT INTO coupons (merchant_account_id, id, name, percent_off, amount_off, currency, metadata, created_at, active)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		c.MerchantAccountID, c.CouponID, c.Name, optInt(c.PercentOff), optInt(c.AmountOff), optText(c.Currency),
		metadataText(c.Metadata), remit.Micros(c.CreatedAt), c.Active)
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateCoupon")
}

const couponColumns = `id, name, percent_off, amount_off, currency, metadata, created_at, active`

// couponTable is the coupons table's reads.
var couponTable = accountTable[remit.Coupon]{from: "coupons", columns: couponColumns, kind: "coupon", scan: scanCoupon}

func scanCoupon(row interface{ Scan(...any) error }, merchantAccountID string) (c remit.Coupon, err error) {
	var pct, amt sql.NullInt64
	var cur sql.NullString
	var md string
	var created int64
	if err = row.Scan(&c.CouponID, &c.Name, &pct, &amt, &cur, &md, &created, &c.Active); err != nil {
		return c, err
	}
	c.Object, c.MerchantAccountID = "coupon", merchantAccountID
	c.PercentOff, c.AmountOff, c.Currency = intPtr(pct), intPtr(amt), textPtr(cur)
	c.Metadata, c.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return c, nil
}

// GetCoupon returns a merchant account's coupon, or not_found.
func (q Q) GetCoupon(ctx context.Context, merchantAccountID, couponID string) (remit.Coupon, error) {
	return q.ReadCoupon(ctx, merchantAccountID, couponID, Unlocked)
}

// UpdateCoupon writes what an update changes of a coupon: whether it is active, its metadata.
func (q Q) UpdateCoupon(ctx context.Context, c remit.Coupon) error {
	_, err := q.exec(ctx, `UPDATE coupons SET active = $3, metadata = $4 WHERE merchant_account_id = $1 AND id = $2`,
		c.MerchantAccountID, c.CouponID, c.Active, metadataText(c.Metadata))
	return wrapErr(err, "store.UpdateCoupon")
}

// ReadCoupon is GetCoupon; Locked, it takes the row lock (PostgreSQL), as an update does.
func (q Q) ReadCoupon(ctx context.Context, merchantAccountID, couponID string, read Read) (remit.Coupon, error) {
	return couponTable.get(ctx, q, "store.GetCoupon", merchantAccountID, couponID, read)
}

// GetCoupons returns the merchant account's coupons among ids, by ID, in one query. IDs that name
// no coupon are absent from the map.
func (q Q) GetCoupons(ctx context.Context, merchantAccountID string, ids []string) (map[string]remit.Coupon, error) {
	return couponTable.byIDs(ctx, q, "store.GetCoupons", merchantAccountID, ids, func(c remit.Coupon) string { return c.CouponID })
}

// PriceFilter narrows a list of prices: equal filters, empty ones left out; Active, when set, the
// archive state (active or archived prices only).
type PriceFilter struct {
	PriceType, MeterID, Currency, ProductID string
	Active                                  *bool
	ListPage
}

// ListPrices lists a merchant account's prices newest first; each filter reads its own index
// (prices_list, prices_type_list, prices_meter_list, prices_currency_list, prices_product_list,
// prices_active_list).
func (q Q) ListPrices(ctx context.Context, merchantAccountID string, f PriceFilter) ([]remit.Price, error) {
	return priceTable.listActive(ctx, q, "store.ListPrices", merchantAccountID, f.Active, f.ListPage,
		Eq{"price_type", f.PriceType}, Eq{"meter_id", f.MeterID}, Eq{"currency", f.Currency}, Eq{"product_id", f.ProductID})
}

// CouponFilter narrows a list of coupons: Active, when set, to the active or the archived ones.
type CouponFilter struct {
	Active *bool
	ListPage
}

// ListCoupons lists a merchant account's coupons newest first, over coupons_list or
// coupons_active_list.
func (q Q) ListCoupons(ctx context.Context, merchantAccountID string, f CouponFilter) ([]remit.Coupon, error) {
	return couponTable.listActive(ctx, q, "store.ListCoupons", merchantAccountID, f.Active, f.ListPage)
}

// activeFilter adds to a list's query the archive state of its rows (active = $n) when active is
// set.
func activeFilter(query string, args []any, active *bool) (string, []any) {
	if active == nil {
		return query, args
	}
	args = append(args, *active)
	return query + " AND active = $" + itoa(len(args)), args
}

// listActive is list of t's rows in the archive state active names, when it is set (activeFilter).
func (t accountTable[T]) listActive(ctx context.Context, q Q, op, merchantAccountID string, active *bool, p ListPage, filters ...Eq) ([]T, error) {
	base, args := activeFilter(t.selectAll(), []any{merchantAccountID}, active)
	return t.listFrom(ctx, q, op, merchantAccountID, base, args, p, filters...)
}
