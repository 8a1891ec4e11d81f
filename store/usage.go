package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/remit-billing/remit"
)

// Usage metering. usage_events is the record; usage_totals (one row per merchant account, customer
// and meter) and usage_hourly (one row per UTC hour) are derived from it in the transaction of each
// event, so that evaluating thresholds reads one row and a period sum reads one row per hour.

// hourMicros is the width of a usage_hourly bucket.
const hourMicros = int64(time.Hour / time.Microsecond)

// floorHour is the start of the UTC hour holding us (Unix microseconds, negative ones too).
func floorHour(us int64) int64 {
	h := us / hourMicros * hourMicros
	if h > us {
		h -= hourMicros
	}
	return h
}

// ceilHour is the first hour start at or after us.
func ceilHour(us int64) int64 {
	h := floorHour(us)
	if h < us {
		h += hourMicros
	}
	return h
}

// GetUsageEvent returns a merchant account's usage event, or not_found. Locked, it takes the
// row lock (PostgreSQL).
func (q Q) GetUsageEvent(ctx context.Context, merchantAccountID, eventID string, read Read) (e remit.UsageEvent, err error) {
	return usageEventTable.get(ctx, q, "store.GetUsageEvent", merchantAccountID, eventID, read)
}

const usageEventColumns = `id, customer_id, meter_id, quantity, ts, created_at, properties, unique_value, voided_at, corrections, seq`

// usageEventTable is the usage_events table's reads.
var usageEventTable = accountTable[remit.UsageEvent]{from: "usage_events", columns: usageEventColumns, kind: "usage event",
	scan: owning(scanUsageEvent, func(e *remit.UsageEvent) *string { return &e.MerchantAccountID })}

// scanUsageEvent scans a row of usageEventColumns.
func scanUsageEvent(row interface{ Scan(...any) error }) (e remit.UsageEvent, err error) {
	var ts, created int64
	var props, unique, corrections sql.NullString
	var voided, seq sql.NullInt64
	if err = row.Scan(&e.EventID, &e.CustomerID, &e.MeterID, &e.Quantity, &ts, &created, &props, &unique, &voided, &corrections, &seq); err != nil {
		return e, err
	}
	e.Object, e.Status = "usage_event", remit.UsageRecorded
	e.Timestamp, e.CreatedAt, e.UniqueValue, e.VoidedAt = remit.FromMicros(ts), remit.FromMicros(created), textPtr(unique), timePtr(voided)
	e.Seq = intPtr(seq)
	if e.VoidedAt != nil {
		e.Status = remit.UsageVoided
	}
	e.Properties = map[string]string{}
	if props.Valid {
		if err := json.Unmarshal([]byte(props.String), &e.Properties); err != nil {
			return e, fmt.Errorf("properties: %w", err)
		}
	}
	e.Corrections = []remit.UsageCorrection{}
	if corrections.Valid {
		if err := json.Unmarshal([]byte(corrections.String), &e.Corrections); err != nil {
			return e, fmt.Errorf("corrections: %w", err)
		}
	}
	return e, nil
}

// UsageEventFilter narrows a list of usage events: equal filters (empty: any), and whether voided
// events are listed too.
type UsageEventFilter struct {
	CustomerID, MeterID string
	IncludeVoided       bool
	ListPage
}

// ListUsageEvents lists a merchant account's usage events newest first by when the usage happened
// (ts, then eventId): the page's keyset and range are on ts. It reads usage_events_list,
// usage_events_customer_list or usage_events_meter_list (both filters: the first), leaving out the
// voided events unless asked.
func (q Q) ListUsageEvents(ctx context.Context, merchantAccountID string, f UsageEventFilter) ([]remit.UsageEvent, error) {
	base := usageEventTable.selectAll()
	if !f.IncludeVoided {
		base += ` AND voided_at IS NULL`
	}
	f.TimeColumn = "ts"
	return usageEventTable.listFrom(ctx, q, "store.ListUsageEvents", merchantAccountID, base, []any{merchantAccountID}, f.ListPage,
		Eq{"customer_id", f.CustomerID}, Eq{"meter_id", f.MeterID})
}

// LockUsageTotal returns the customer's running total for the meter (0 before any usage) and the
// seq of the last event counted in it, holding the total's row lock (PostgreSQL) until the
// transaction ends: no usage event of this customer and meter commits in between. The row is
// created when missing, so that there is a row to lock.
func (q Q) LockUsageTotal(ctx context.Context, merchantAccountID, customerID, meterID string, at time.Time) (total, seq int64, err error) {
	if _, err := q.exec(ctx, `INSERT INTO usage_totals (merchant_account_id, customer_id, meter_id, total, event_count, updated_at)
		VALUES ($1, $2, $3, 0, 0, $4) ON CONFLICT (merchant_account_id, customer_id, meter_id) DO NOTHING`,
		merchantAccountID, customerID, meterID, remit.Micros(at)); err != nil {
		return 0, 0, wrapErr(err, "store.LockUsageTotal")
	}
	err = q.QueryRow(ctx, `SELECT total, seq FROM usage_totals WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3`+q.ForUpdate(),
		merchantAccountID, customerID, meterID).Scan(&total, &seq)
	return total, seq, wrapErr(err, "store.LockUsageTotal")
}

// SumUsageEvents is the plain sum of the raw events with a timestamp in [from, to), read through
// the (merchant, customer, meter, ts) index. SumUsage gives the same figure; this one exists to
// check and to measure it.
func (q Q) SumUsageEvents(ctx context.Context, merchantAccountID, customerID, meterID string, from, to int64) (int64, error) {
	var sum int64
	err := q.QueryRow(ctx, `SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM usage_events
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND ts >= $4 AND ts < $5 AND voided_at IS NULL`,
		merchantAccountID, customerID, meterID, from, to).Scan(&sum)
	return sum, wrapErr(err, "store.SumUsageEvents")
}

// --- thresholds ---

const thresholdColumns = `id, customer_id, meter_id, threshold, status, crossed_at, archived_at, metadata, created_at`

// thresholdTable is the usage_thresholds table's reads.
var thresholdTable = accountTable[remit.UsageThreshold]{from: "usage_thresholds", columns: thresholdColumns, kind: "usage threshold",
	scan: scanThreshold}

func scanThreshold(row interface{ Scan(...any) error }, merchantAccountID string) (t remit.UsageThreshold, err error) {
	var crossed, archived sql.NullInt64
	var md string
	var created int64
	if err = row.Scan(&t.ThresholdID, &t.CustomerID, &t.MeterID, &t.Threshold, &t.Status, &crossed, &archived, &md, &created); err != nil {
		return t, err
	}
	t.Object, t.MerchantAccountID = "usage_threshold", merchantAccountID
	t.CrossedAt, t.ArchivedAt = timePtr(crossed), timePtr(archived)
	t.Metadata, t.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return t, nil
}

// CreateUsageThreshold inserts a threshold and, when it is still to cross, lowers the running
// total's next_threshold to it. Call it holding the total's lock (LockUsageTotal). A thresholdId
// already used in the merchant account is a conflict.
func (q Q) CreateUsageThreshold(ctx context.Context, t remit.UsageThreshold) error {
	_, err := q.exec(ctx, `INSERT INTO usage_thresholds (merchant_account_id, id, customer_id, meter_id, threshold, status,
		crossed_at, archived_at, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		t.MerchantAccountID, t.ThresholdID, t.CustomerID, t.MeterID, t.Threshold, t.Status, optMicros(t.CrossedAt),
		optMicros(t.ArchivedAt), metadataText(t.Metadata), remit.Micros(t.CreatedAt))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	if err != nil || t.Status != remit.ThresholdActive || t.CrossedAt != nil {
		return wrapErr(err, "store.CreateUsageThreshold")
	}
	_, err = q.exec(ctx, `UPDATE usage_totals SET next_threshold = $4
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND (next_threshold IS NULL OR next_threshold > $4)`,
		t.MerchantAccountID, t.CustomerID, t.MeterID, t.Threshold)
	return wrapErr(err, "store.CreateUsageThreshold")
}

// GetUsageThreshold returns a merchant account's threshold, or not_found. Locked, it takes the
// row lock (PostgreSQL).
func (q Q) GetUsageThreshold(ctx context.Context, merchantAccountID, thresholdID string, read Read) (remit.UsageThreshold, error) {
	return thresholdTable.get(ctx, q, "store.GetUsageThreshold", merchantAccountID, thresholdID, read)
}

// ThresholdFilter narrows a list of usage thresholds: equal filters, empty ones left out.
type ThresholdFilter struct {
	CustomerID, MeterID, Status string
	ListPage
}

// ListUsageThresholds lists a merchant account's usage thresholds newest first, over
// usage_thresholds_list or the filter's own (customer, meter, status) index.
func (q Q) ListUsageThresholds(ctx context.Context, merchantAccountID string, f ThresholdFilter) ([]remit.UsageThreshold, error) {
	return thresholdTable.list(ctx, q, "store.ListUsageThresholds", merchantAccountID, f.ListPage,
		Eq{"customer_id", f.CustomerID}, Eq{"meter_id", f.MeterID}, Eq{"status", f.Status})
}

// ArchiveUsageThreshold moves an active threshold to archived and reports whether it did (false:
// it was not active).
func (q Q) ArchiveUsageThreshold(ctx context.Context, merchantAccountID, thresholdID string, at time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE usage_thresholds SET status = 'archived', archived_at = $3, updated_at = $3
		WHERE merchant_account_id = $1 AND id = $2 AND status = 'active'`, merchantAccountID, thresholdID, remit.Micros(at))
	return n == 1, wrapErr(err, "store.ArchiveUsageThreshold")
}

// CrossUsageThresholds marks crossed, at `at`, every active threshold of the customer and meter
// not crossed yet whose threshold the total reaches, and returns them (lowest first); then it
// recomputes the running total's next_threshold. The one UPDATE decides: a threshold is marked
// once, whatever runs concurrently, and an archived one never. Call it holding the total's lock.
func (q Q) CrossUsageThresholds(ctx context.Context, merchantAccountID, customerID, meterID string, total int64, at time.Time) ([]remit.UsageThreshold, error) {
	out, err := thresholdTable.all(ctx, q, "store.CrossUsageThresholds", merchantAccountID, `UPDATE usage_thresholds SET crossed_at = $5, updated_at = $5
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND status = 'active' AND crossed_at IS NULL
		  AND threshold <= $4
		RETURNING `+thresholdColumns, merchantAccountID, customerID, meterID, total, remit.Micros(at))
	if err != nil {
		return nil, err
	}
	if _, err := q.exec(ctx, `UPDATE usage_totals SET next_threshold = (SELECT MIN(threshold) FROM usage_thresholds t
			WHERE t.merchant_account_id = $1 AND t.customer_id = $2 AND t.meter_id = $3 AND t.status = 'active' AND t.crossed_at IS NULL)
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3`, merchantAccountID, customerID, meterID); err != nil {
		return nil, wrapErr(err, "store.CrossUsageThresholds")
	}
	// RETURNING has no order of its own: lowest threshold first, then ID, so that events follow
	// the order in which the total passed them.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Threshold != out[j].Threshold {
			return out[i].Threshold < out[j].Threshold
		}
		return out[i].ThresholdID < out[j].ThresholdID
	})
	return out, nil
}
