package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// Meters. Every meter that has been used has a row: POST /v1/meters writes one, and so does the
// first usage event of a meter nobody created (implicit, a sum meter). Both lock the row (on
// PostgreSQL), so a change of aggregation and the first event of the meter happen one after the
// other, and once has_events is set the aggregation never changes.

const meterColumns = `id, name, aggregation, unique_property, implicit, has_events, created_at, updated_at`

// meterTable is the meters table's reads.
var meterTable = accountTable[remit.Meter]{from: "meters", columns: meterColumns, kind: "meter", scan: scanMeter}

func scanMeter(row interface{ Scan(...any) error }, merchantAccountID string) (m remit.Meter, err error) {
	var name, unique sql.NullString
	var created, updated int64
	if err = row.Scan(&m.MeterID, &name, &m.Aggregation, &unique, &m.Implicit, &m.HasEvents, &created, &updated); err != nil {
		return m, err
	}
	m.Object, m.MerchantAccountID, m.Name, m.UniqueProperty = "meter", merchantAccountID, textPtr(name), textPtr(unique)
	m.CreatedAt, m.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	return m, nil
}

// MeterForUsage returns the meter a usage event records on, marking it as having events, and
// creating it as an implicit sum meter when nobody created it. It takes the meter's row lock
// (PostgreSQL) until the transaction ends, so that no change of aggregation commits in between.
func (q Q) MeterForUsage(ctx context.Context, merchantAccountID, meterID string, at time.Time) (remit.Meter, error) {
	m, err := scanMeter(q.QueryRow(ctx, `INSERT INTO meters (merchant_account_id, id, name, aggregation, unique_property, implicit,
		has_events, created_at, updated_at) VALUES ($1, $2, NULL, 'sum', NULL, TRUE, TRUE, $3, $3)
		ON CONFLICT (merchant_account_id, id) DO UPDATE SET has_events = TRUE
		RETURNING `+meterColumns, merchantAccountID, meterID, remit.Micros(at)), merchantAccountID)
	return m, wrapErr(err, "store.MeterForUsage")
}

// GetMeter returns a meter, or not_found. Locked, it takes the row lock (PostgreSQL). implicit
// says whether a meter created by usage alone counts (the API shows only created meters).
func (q Q) GetMeter(ctx context.Context, merchantAccountID, meterID string, read Read, implicit bool) (remit.Meter, error) {
	cond := `id = $2`
	if !implicit {
		cond += ` AND implicit = FALSE`
	}
	return meterTable.getWhere(ctx, q, "store.GetMeter", merchantAccountID, cond, meterID, read)
}

// PutMeter writes a meter's row: inserts it, or rewrites an existing one (implicit or not) with
// the new name and aggregation. Call it holding the row's lock when it exists (GetMeter Locked).
// A concurrent insert of the same meterId is a conflict.
func (q Q) PutMeter(ctx context.Context, m remit.Meter, exists bool) error {
	if exists {
		_, err := q.exec(ctx, `UPDATE meters SET name = $3, aggregation = $4, unique_property = $5, implicit = FALSE, updated_at = $6
			WHERE merchant_account_id = $1 AND id = $2`, m.MerchantAccountID, m.MeterID, optText(m.Name), m.Aggregation,
			optText(m.UniqueProperty), remit.Micros(m.UpdatedAt))
		return wrapErr(err, "store.PutMeter")
	}
	_, err := q.exec(ctx, `INSERT INTO meters (merchant_account_id, id, name, aggregation, unique_property, implicit, has_events,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, FALSE, FALSE, $6, $7)`, m.MerchantAccountID, m.MeterID, optText(m.Name),
		m.Aggregation, optText(m.UniqueProperty), remit.Micros(m.CreatedAt), remit.Micros(m.UpdatedAt))
	if IsUniqueViolation(err) {
		return duplicate("meterId")
	}
	return wrapErr(err, "store.PutMeter")
}

// ListMeters is a page of the merchant account's created meters, newest first (keyset paging).
func (q Q) ListMeters(ctx context.Context, merchantAccountID string, p ListPage) ([]remit.Meter, error) {
	return meterTable.listFrom(ctx, q, "store.ListMeters", merchantAccountID, meterTable.selectAll()+` AND implicit = FALSE`, []any{merchantAccountID}, p)
}
