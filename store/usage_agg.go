package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/remit-billing/remit"
)

// The aggregates of usage (docs/usage.md "Aggregations"). Each live usage event is folded, in its
// own transaction, into three pre-aggregates: the running total of the customer and meter (the
// meter's aggregation over the whole history, which thresholds compare), the hourly row of its UTC
// hour (sum, count, max and latest, whatever the meter's aggregation), and, for unique_count, the
// distinct values of its hour and of the customer's history. A period reads the hourly rows of the
// whole hours inside it and the raw live events of at most two partial edge hours, so it is exact
// at the edges and its cost grows with hours, not events. A void takes an event out of all three.
//
// The running total's row also counts the events of its customer and meter (seq): each event gets
// the next number, under the row's lock, and keeps it. "Latest" means the greatest timestamp, then
// the greatest seq (the event counted last); since a new event always has the greatest seq, it
// replaces the latest event of its hour and of the history whenever its timestamp is not earlier.

// newerLatest is true when the incoming row's event is at least as late as the stored one's (ties
// go to the incoming event: it was counted last).
const newerLatest = `(%[1]s.latest_ts IS NULL OR excluded.latest_ts >= %[1]s.latest_ts)`

// totalSets are the running total's UPSERT per aggregation (the excluded row carries the event's
// contribution as total, its timestamp as latest_ts). totalUpsert adds the rest.
var totalSets = map[string]string{
	remit.AggSum:         `total = usage_totals.total + excluded.total`,
	remit.AggCount:       `total = usage_totals.total + 1`,
	remit.AggUniqueCount: `total = usage_totals.total + excluded.total`,
	remit.AggMax:         `total = CASE WHEN excluded.total > usage_totals.total THEN excluded.total ELSE usage_totals.total END`,
	remit.AggLatest: `total = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_totals") + ` THEN excluded.total ELSE usage_totals.total END,
		latest_ts = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_totals") + ` THEN excluded.latest_ts ELSE usage_totals.latest_ts END,
		latest_seq = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_totals") + ` THEN usage_totals.seq + 1 ELSE usage_totals.latest_seq END`,
}

// totalUpserts and hourlyUpserts are the statements of each aggregation, built once; hourlyInserts
// are SQLite's whole hourly statements (PostgreSQL folds the hour into RecordUsage's one statement).
var totalUpserts, hourlyUpserts, hourlyInserts = func() (t, h, i map[string]string) {
	t, h, i = map[string]string{}, map[string]string{}, map[string]string{}
	for agg := range totalSets {
		t[agg], h[agg] = buildTotalUpsert(agg), buildHourlySet(agg)
		i[agg] = hourlyColumns + ` VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $6) ` + h[agg]
	}
	return t, h, i
}()

// totalUpsert is the running total's UPSERT for aggregation agg ($1-$3 the key, $4 the event's
// contribution, $5 the time, $6 its timestamp), returning the new total, next_threshold and seq.
func totalUpsert(agg string) (string, bool) {
	q, ok := totalUpserts[agg]
	return q, ok
}

func buildTotalUpsert(agg string) string {
	set := totalSets[agg]
	where := ""
	if agg == remit.AggSum { // a sum that would pass the int64 range changes nothing and returns no row
		where = ` WHERE usage_totals.total <= ` + strconv.FormatInt(math.MaxInt64, 10) + ` - excluded.total`
	}
	return `INSERT INTO usage_totals (merchant_account_id, customer_id, meter_id, total, event_count, updated_at, latest_ts, latest_seq, seq)
		VALUES ($1, $2, $3, $4, 1, $5, $6, 1, 1)
		ON CONFLICT (merchant_account_id, customer_id, meter_id) DO UPDATE SET ` + set + `,
			event_count = usage_totals.event_count + 1, updated_at = excluded.updated_at, seq = usage_totals.seq + 1` + where + `
		RETURNING total, next_threshold, seq`
}

// hourlySets fold one event into its hour's row, per aggregation: each keeps the hour's number of
// events, and what its aggregation reads (the sum, the largest quantity, or the latest event).
// A meter's aggregation never changes once it has events, so its hourly rows only ever serve it
// (a void recomputes every column of its hour from the raw events). The inserted row carries the
// event: quantity (summed for a sum meter, else 0, so that other meters' hourly sums never pass the
// int64 range), max_quantity and latest_quantity its quantity, latest_ts its timestamp,
// latest_seq its seq.
var hourlySets = map[string]string{
	remit.AggSum:         `quantity = usage_hourly.quantity + excluded.quantity`,
	remit.AggCount:       ``,
	remit.AggUniqueCount: ``,
	remit.AggMax: `max_quantity = CASE WHEN usage_hourly.max_quantity IS NULL OR excluded.max_quantity > usage_hourly.max_quantity
			THEN excluded.max_quantity ELSE usage_hourly.max_quantity END`,
	remit.AggLatest: `latest_ts = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_hourly") + ` THEN excluded.latest_ts ELSE usage_hourly.latest_ts END,
		latest_seq = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_hourly") + ` THEN excluded.latest_seq ELSE usage_hourly.latest_seq END,
		latest_quantity = CASE WHEN ` + fmt.Sprintf(newerLatest, "usage_hourly") + ` THEN excluded.latest_quantity ELSE usage_hourly.latest_quantity END`,
}

// hourlySet is the hour's UPSERT clause of aggregation agg.
func hourlySet(agg string) string { return hourlyUpserts[agg] }

func buildHourlySet(agg string) string {
	set := `event_count = usage_hourly.event_count + 1`
	if more := hourlySets[agg]; more != "" {
		set += ", " + more
	}
	return `ON CONFLICT (merchant_account_id, customer_id, meter_id, hour_start) DO UPDATE SET ` + set
}

const hourlyColumns = `INSERT INTO usage_hourly (merchant_account_id, customer_id, meter_id, hour_start, quantity, event_count,
		max_quantity, latest_ts, latest_seq, latest_quantity)`

// UsageCount is what recording one usage event did.
type UsageCount struct {
	Recorded bool   // false: its eventId was taken (a repeat); nothing changed
	InRange  bool   // false: a sum would pass the int64 range; fail the transaction
	Total    int64  // the running total after it
	Next     *int64 // a lower bound of the smallest threshold still to cross (nil: none)
	Seq      int64  // its place among the events of its customer and meter
}

// RecordUsage records a new live usage event e of a meter of aggregation agg and folds it into the
// pre-aggregates, in one go: the insert (deduplicated by eventId: a repeat records and counts
// nothing; the foreign key checks the customer, not_found on "customerId"), the distinct value of a
// unique_count event, the running total's UPSERT (which takes the total's row lock on PostgreSQL
// until the transaction ends, so that events of one customer and meter apply one after another
// across processes, each seeing the total its predecessors left, and gives the event its seq), and
// the hour's UPSERT. On SQLite (one writer) the event's seq is read in its insert; on PostgreSQL the
// total, the event's seq and the hour are written by one statement after the insert: two round
// trips, four for a unique_count event.
func (q Q) RecordUsage(ctx context.Context, e remit.UsageEvent, agg string, at time.Time) (UsageCount, error) {
	upsert, ok := totalUpsert(agg)
	if !ok {
		return UsageCount{}, errors.New("store.RecordUsage: unknown aggregation " + agg)
	}
	c := UsageCount{}
	recorded, err := q.insertUsageEvent(ctx, e)
	if err != nil || !recorded {
		return c, err // an error, or a repeat
	}
	c.Recorded = true
	contribution, err := q.contribution(ctx, e, agg)
	if err != nil {
		return c, err
	}
	ts := remit.Micros(e.Timestamp)
	var next sql.NullInt64
	if q.d == Postgres {
		// One statement counts the event in the running total (its row lock), writes the seq it
		// got on the event, and folds it into its hour.
		err = q.QueryRow(ctx, `WITH t AS (`+upsert+`),
			s AS (UPDATE usage_events SET seq = t.seq FROM t WHERE usage_events.merchant_account_id = $1 AND usage_events.id = $7),
			h AS (`+hourlyColumns+` SELECT $1, $2, $3, $8, $9, 1, $10, $6, t.seq, $10 FROM t `+hourlySet(agg)+`)
			SELECT total, next_threshold, seq FROM t`,
			e.MerchantAccountID, e.CustomerID, e.MeterID, contribution, remit.Micros(at), ts, e.EventID, floorHour(ts), summed(e, agg),
			e.Quantity).Scan(&c.Total, &next, &c.Seq)
	} else {
		err = q.QueryRow(ctx, upsert, e.MerchantAccountID, e.CustomerID, e.MeterID, contribution, remit.Micros(at), ts).Scan(&c.Total, &next, &c.Seq)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil // out of range: nothing counted
	}
	if err != nil {
		return c, wrapErr(err, "store.RecordUsage: total")
	}
	c.InRange, c.Next = true, intPtr(next)
	if q.d != Postgres {
		_, err = q.exec(ctx, hourlyInserts[agg],
			e.MerchantAccountID, e.CustomerID, e.MeterID, floorHour(ts), summed(e, agg), e.Quantity, ts, c.Seq)
		if err != nil {
			return c, wrapErr(err, "store.RecordUsage: hourly")
		}
	}
	return c, q.addUniqueHour(ctx, e, agg)
}

// insertUsageEvent inserts a usage event unless its eventId is taken (false: a repeat). On SQLite
// it also writes the seq the running total is about to give it: exact, since the one writer
// counts it next; on PostgreSQL RecordUsage writes it with the count.
func (q Q) insertUsageEvent(ctx context.Context, e remit.UsageEvent) (bool, error) {
	seq := `NULL`
	if q.d != Postgres {
		seq = `COALESCE((SELECT seq FROM usage_totals WHERE merchant_account_id = $1 AND customer_id = $3 AND meter_id = $4), 0) + 1`
	}
	n, err := q.exec(ctx, `INSERT INTO usage_events (merchant_account_id, id, customer_id, meter_id, quantity, ts, created_at,
		properties, unique_value, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, `+seq+`)
		ON CONFLICT (merchant_account_id, id) DO NOTHING`,
		e.MerchantAccountID, e.EventID, e.CustomerID, e.MeterID, e.Quantity, remit.Micros(e.Timestamp), remit.Micros(e.CreatedAt),
		optJSON(len(e.Properties) > 0, e.Properties), optText(e.UniqueValue))
	if isForeignKeyViolation(err) {
		// A customer that does not exist in the merchant account: the foreign key checks it,
		// which spares the hot path a query.
		return false, remit.AtField(remit.NotFound("customer", e.CustomerID, ""), "customerId")
	}
	return n == 1, wrapErr(err, "store.RecordUsage: insert")
}

// summed is what the event adds to its hour's sum: its quantity for a sum meter, else 0.
func summed(e remit.UsageEvent, agg string) int64 {
	if agg == remit.AggSum {
		return e.Quantity
	}
	return 0
}

// contribution is what the event adds to the running total's UPSERT: its quantity, or for
// unique_count 1 when it brings a value new to the customer's history (0 otherwise, and for an
// event without the property).
func (q Q) contribution(ctx context.Context, e remit.UsageEvent, agg string) (int64, error) {
	if agg != remit.AggUniqueCount {
		return e.Quantity, nil
	}
	if e.UniqueValue == nil {
		return 0, nil
	}
	return q.addUniqueValue(ctx, e)
}

// addUniqueHour counts the unique_count event's value in its hour.
func (q Q) addUniqueHour(ctx context.Context, e remit.UsageEvent, agg string) error {
	if agg != remit.AggUniqueCount || e.UniqueValue == nil {
		return nil
	}
	_, err := q.exec(ctx, `INSERT INTO usage_unique_hourly (merchant_account_id, customer_id, meter_id, hour_start, value, events)
		VALUES ($1, $2, $3, $4, $5, 1) ON CONFLICT (merchant_account_id, customer_id, meter_id, hour_start, value)
		DO UPDATE SET events = usage_unique_hourly.events + 1`,
		e.MerchantAccountID, e.CustomerID, e.MeterID, floorHour(remit.Micros(e.Timestamp)), *e.UniqueValue)
	return wrapErr(err, "store.RecordUsage: unique hourly")
}

// addUniqueValue counts one more live event with e's unique value in the customer's history and
// returns 1 when the value is new to it (the running total grows by one), else 0.
func (q Q) addUniqueValue(ctx context.Context, e remit.UsageEvent) (int64, error) {
	var events int64
	err := q.QueryRow(ctx, `INSERT INTO usage_unique_values (merchant_account_id, customer_id, meter_id, value, events)
		VALUES ($1, $2, $3, $4, 1) ON CONFLICT (merchant_account_id, customer_id, meter_id, value)
		DO UPDATE SET events = usage_unique_values.events + 1 RETURNING events`,
		e.MerchantAccountID, e.CustomerID, e.MeterID, *e.UniqueValue).Scan(&events)
	if err != nil {
		return 0, wrapErr(err, "store.RecordUsage: unique values")
	}
	if events == 1 {
		return 1, nil
	}
	return 0, nil
}

// periodParts splits [from, to) into a left edge [from, a), whole hours [a, b) and a right edge
// [b, to); with no whole hour inside, the left edge is the whole range and the others are empty.
func periodParts(from, to int64) (a, b int64) {
	a, b = ceilHour(from), floorHour(to)
	if a >= b {
		return to, to
	}
	return a, b
}

// edge is the condition of the raw live events with lo <= ts < hi (placeholders): each edge is read
// on its own, so that both use the period index's range.
func edge(lo, hi string) string {
	return `merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND voided_at IS NULL AND ts >= ` + lo + ` AND ts < ` + hi
}

// The hourly rows of the whole hours: $5..$6.
const wholeHours = `merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND hour_start >= $5 AND hour_start < $6`

// periodQueries answer each aggregation over [$4, $7) with edges [$4, $5) and [$6, $7) and the
// whole hours [$5, $6).
var periodQueries = map[string]string{
	remit.AggSum: `SELECT (SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM usage_events WHERE ` + edge("$4", "$5") + `)
		+ (SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM usage_hourly WHERE ` + wholeHours + `)
		+ (SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM usage_events WHERE ` + edge("$6", "$7") + `)`,
	remit.AggCount: `SELECT (SELECT COUNT(*) FROM usage_events WHERE ` + edge("$4", "$5") + `)
		+ (SELECT CAST(COALESCE(SUM(event_count), 0) AS BIGINT) FROM usage_hourly WHERE ` + wholeHours + `)
		+ (SELECT COUNT(*) FROM usage_events WHERE ` + edge("$6", "$7") + `)`,
	remit.AggMax: `SELECT CAST(COALESCE(MAX(m), 0) AS BIGINT) FROM (
		SELECT MAX(quantity) AS m FROM usage_events WHERE ` + edge("$4", "$5") + `
		UNION ALL SELECT MAX(max_quantity) FROM usage_hourly WHERE ` + wholeHours + ` AND event_count > 0
		UNION ALL SELECT MAX(quantity) FROM usage_events WHERE ` + edge("$6", "$7") + `) AS parts`,
	remit.AggLatest: `SELECT COALESCE((SELECT q FROM (
		SELECT ts, COALESCE(seq, 0) AS s, quantity AS q FROM usage_events WHERE ` + edge("$4", "$5") + `
		UNION ALL SELECT latest_ts, COALESCE(latest_seq, 0), latest_quantity FROM usage_hourly WHERE ` + wholeHours + ` AND event_count > 0
		UNION ALL SELECT ts, COALESCE(seq, 0), quantity FROM usage_events WHERE ` + edge("$6", "$7") + `
		) AS parts ORDER BY ts DESC, s DESC LIMIT 1), 0)`,
	remit.AggUniqueCount: `SELECT COUNT(*) FROM (
		SELECT unique_value AS v FROM usage_events WHERE ` + edge("$4", "$5") + ` AND unique_value IS NOT NULL
		UNION SELECT value FROM usage_unique_hourly WHERE ` + wholeHours + `
		UNION SELECT unique_value FROM usage_events WHERE ` + edge("$6", "$7") + ` AND unique_value IS NOT NULL) AS parts`,
}

// AggregateUsage is the customer's usage of the meter, aggregated by agg, over the live events
// with a timestamp in [from, to) (Unix microseconds): 0 for an empty or inverted range or one
// without events.
func (q Q) AggregateUsage(ctx context.Context, agg, merchantAccountID, customerID, meterID string, from, to int64) (int64, error) {
	if to <= from {
		return 0, nil
	}
	query, ok := periodQueries[agg]
	if !ok {
		return 0, errors.New("store.AggregateUsage: unknown aggregation " + agg)
	}
	a, b := periodParts(from, to)
	var v int64
	err := q.QueryRow(ctx, query, merchantAccountID, customerID, meterID, from, a, b, to).Scan(&v)
	return v, wrapErr(err, "store.AggregateUsage")
}

// LockUniqueValue takes the row lock (PostgreSQL) of a unique value of the customer's history,
// in the order AddUsage takes it (before the running total's), so that a void and an event never
// wait for each other in a circle.
func (q Q) LockUniqueValue(ctx context.Context, merchantAccountID, customerID, meterID, value string) error {
	var events int64
	err := q.QueryRow(ctx, `SELECT events FROM usage_unique_values WHERE merchant_account_id = $1 AND customer_id = $2
		AND meter_id = $3 AND value = $4`+q.ForUpdate(), merchantAccountID, customerID, meterID, value).Scan(&events)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return wrapErr(err, "store.LockUniqueValue")
}

// VoidUsage takes the live event e out of every pre-aggregate of its meter (aggregation agg) and
// marks it voided at `at`, with the corrections its void made; false (and nothing changed) when it
// was voided already. Call it holding the event's row lock, then the unique value's
// (LockUniqueValue) and the running total's (LockUsageTotal), in that order.
func (q Q) VoidUsage(ctx context.Context, e remit.UsageEvent, agg string, at time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE usage_events SET voided_at = $3 WHERE merchant_account_id = $1 AND id = $2 AND voided_at IS NULL`,
		e.MerchantAccountID, e.EventID, remit.Micros(at))
	if err != nil || n == 0 {
		return false, wrapErr(err, "store.VoidUsage")
	}
	key := []any{e.MerchantAccountID, e.CustomerID, e.MeterID}
	hour := floorHour(remit.Micros(e.Timestamp))
	var valueLeft int64 // 1 when the void takes the last live event of its unique value out of the history
	if agg == remit.AggUniqueCount && e.UniqueValue != nil {
		if valueLeft, err = q.removeUniqueValue(ctx, e, hour); err != nil {
			return false, err
		}
	}
	// The hour's row, recomputed from its live events (max and latest cannot be taken apart).
	summed := `0`
	if agg == remit.AggSum {
		summed = `(SELECT CAST(COALESCE(SUM(quantity), 0) AS BIGINT) FROM usage_events e WHERE ` + hourEvents + `)`
	}
	latest := func(col string) string {
		return `(SELECT ` + col + ` FROM usage_events e WHERE ` + hourEvents + ` ORDER BY e.ts DESC, COALESCE(e.seq, 0) DESC LIMIT 1)`
	}
	if _, err := q.exec(ctx, `UPDATE usage_hourly SET quantity = `+summed+`,
			event_count = (SELECT COUNT(*) FROM usage_events e WHERE `+hourEvents+`),
			max_quantity = (SELECT MAX(quantity) FROM usage_events e WHERE `+hourEvents+`),
			latest_ts = `+latest("ts")+`, latest_seq = `+latest("seq")+`, latest_quantity = `+latest("quantity")+`
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3 AND hour_start = $4`,
		append(key, hour, hour+hourMicros)...); err != nil {
		return false, wrapErr(err, "store.VoidUsage: hourly")
	}
	args := append(key, remit.Micros(at))
	switch agg {
	case remit.AggSum:
		args = append(args, e.Quantity)
	case remit.AggCount:
		args = append(args, 1)
	case remit.AggUniqueCount:
		args = append(args, valueLeft)
	}
	_, err = q.exec(ctx, `UPDATE usage_totals SET `+totalVoids[agg]+`, event_count = event_count - 1, updated_at = $4
		WHERE merchant_account_id = $1 AND customer_id = $2 AND meter_id = $3`, args...)
	return true, wrapErr(err, "store.VoidUsage: total")
}

// hourEvents are the live events of the hour [$4, $5) of the customer and meter.
const hourEvents = `e.merchant_account_id = $1 AND e.customer_id = $2 AND e.meter_id = $3 AND e.ts >= $4 AND e.ts < $5 AND e.voided_at IS NULL`

// latestHour is the customer's hourly row with the latest live event.
const latestHour = `FROM usage_hourly h WHERE h.merchant_account_id = $1 AND h.customer_id = $2 AND h.meter_id = $3
	AND h.event_count > 0 ORDER BY h.latest_ts DESC, COALESCE(h.latest_seq, 0) DESC LIMIT 1`

// totalVoids take an event out of the running total, per aggregation ($5: what a sum, count or
// unique_count total loses, its quantity, 1, or 1 when its unique value left the history).
var totalVoids = map[string]string{
	remit.AggSum:         `total = total - $5`,
	remit.AggCount:       `total = total - $5`,
	remit.AggUniqueCount: `total = total - $5`,
	remit.AggMax: `total = COALESCE((SELECT MAX(h.max_quantity) FROM usage_hourly h WHERE h.merchant_account_id = $1
		AND h.customer_id = $2 AND h.meter_id = $3 AND h.event_count > 0), 0)`,
	remit.AggLatest: `total = COALESCE((SELECT h.latest_quantity ` + latestHour + `), 0),
		latest_ts = (SELECT h.latest_ts ` + latestHour + `), latest_seq = (SELECT h.latest_seq ` + latestHour + `)`,
}

// removeUniqueValue counts one live event less with e's unique value in its hour and in the
// customer's history, dropping a value no live event carries any more; it returns 1 when the value
// left the history.
func (q Q) removeUniqueValue(ctx context.Context, e remit.UsageEvent, hour int64) (int64, error) {
	key := []any{e.MerchantAccountID, e.CustomerID, e.MeterID, *e.UniqueValue}
	if _, err := q.exec(ctx, `UPDATE usage_unique_hourly SET events = events - 1 WHERE merchant_account_id = $1 AND customer_id = $2
		AND meter_id = $3 AND value = $4 AND hour_start = $5`, append(key, hour)...); err != nil {
		return 0, wrapErr(err, "store.VoidUsage: unique hourly")
	}
	if _, err := q.exec(ctx, `DELETE FROM usage_unique_hourly WHERE merchant_account_id = $1 AND customer_id = $2
		AND meter_id = $3 AND value = $4 AND hour_start = $5 AND events <= 0`, append(key, hour)...); err != nil {
		return 0, wrapErr(err, "store.VoidUsage: unique hourly")
	}
	var left int64
	if err := q.QueryRow(ctx, `UPDATE usage_unique_values SET events = events - 1 WHERE merchant_account_id = $1 AND customer_id = $2
		AND meter_id = $3 AND value = $4 RETURNING events`, key...).Scan(&left); err != nil {
		return 0, wrapErr(err, "store.VoidUsage: unique values")
	}
	if left > 0 {
		return 0, nil
	}
	_, err := q.exec(ctx, `DELETE FROM usage_unique_values WHERE merchant_account_id = $1 AND customer_id = $2
		AND meter_id = $3 AND value = $4`, key...)
	return 1, wrapErr(err, "store.VoidUsage: unique values")
}

// SetUsageCorrections records the corrections a usage event's void made.
func (q Q) SetUsageCorrections(ctx context.Context, merchantAccountID, eventID string, c []remit.UsageCorrection) error {
	if c == nil {
		c = []remit.UsageCorrection{}
	}
	_, err := q.exec(ctx, `UPDATE usage_events SET corrections = $3 WHERE merchant_account_id = $1 AND id = $2`,
		merchantAccountID, eventID, mustJSON(c))
	return wrapErr(err, "store.SetUsageCorrections")
}

// BilledUsageLine is a usage line of a finalized invoice (open, paid or uncollectible) that bills
// a meter of a customer for a period holding a given instant.
type BilledUsageLine struct {
	Invoice remit.Invoice // the header only
	Line    remit.InvoiceLine
	From    time.Time
	To      time.Time
}

// BilledUsageLines are the usage lines of the customer's finalized invoices that bill the meter for
// a period holding ts (the line's period, else its invoice's), oldest invoice first.
func (q Q) BilledUsageLines(ctx context.Context, merchantAccountID, customerID, meterID string, ts time.Time) ([]BilledUsageLine, error) {
	type ref struct{ invoice, line string }
	refs, err := queryAll(ctx, q, "store.BilledUsageLines", func(row scanner) (r ref, err error) {
		return r, row.Scan(&r.invoice, &r.line)
	}, nil, `SELECT i.id, l.id FROM invoices i JOIN invoice_lines l
			ON l.merchant_account_id = i.merchant_account_id AND l.invoice_id = i.id
		WHERE i.merchant_account_id = $1 AND i.customer_id = $2 AND i.status IN ('open', 'paid', 'uncollectible')
		  AND l.meter_id = $3 AND l.line_type = 'usage'
		  AND COALESCE(l.period_start, i.period_start) <= $4 AND $4 < COALESCE(l.period_end, i.period_end)
		ORDER BY i.created_at, i.id, l.position`, merchantAccountID, customerID, meterID, remit.Micros(ts))
	if err != nil {
		return nil, err
	}
	var out []BilledUsageLine
	for _, r := range refs {
		inv, err := q.GetInvoice(ctx, merchantAccountID, r.invoice, Unlocked)
		if err != nil {
			return nil, err
		}
		for _, l := range inv.Lines {
			if l.InvoiceLineID != r.line {
				continue
			}
			b := BilledUsageLine{Invoice: inv, Line: l}
			if l.PeriodStart != nil {
				b.From, b.To = *l.PeriodStart, *l.PeriodEnd
			} else {
				b.From, b.To = *inv.PeriodStart, *inv.PeriodEnd
			}
			out = append(out, b)
		}
	}
	return out, nil
}
