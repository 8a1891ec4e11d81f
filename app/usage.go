package app

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Usage metering and usage thresholds (docs/usage.md).
//
// Every usage event runs, in one transaction: its meter (from memory after the meter's first
// event in this process, meters.go), then store.RecordUsage: the insert (deduplicated by eventId;
// its foreign key checks the customer), the running total's UPSERT (which holds the total's row
// lock until commit, so events of one customer and meter apply one after another across processes,
// gives the event its seq and returns the smallest threshold still to cross), the hourly row, and
// the distinct values for unique_count; and, only when the new total reaches that threshold, one
// UPDATE that marks crossed the active thresholds the total reaches, each with its
// usage_threshold.crossed event. Usage events themselves emit no event: a metering workload would
// flood the outbox and every webhook endpoint. Their void does (usage_event.voided,
// usage_void.go).

// CreateUsageEvent records usage and evaluates the customer's active thresholds on the meter. A
// repeated eventId with the same customer, meter, quantity, timestamp (or no timestamp) and
// properties (or none) answers the first event and counts nothing again.
//
// Errors: validation_failure (timestamp more than remit.UsageFutureTolerance after the merchant
// clock; quantity negative or taking the total past the int64 range; properties over the metadata
// limits), not_found (the customer, details.field "customerId"), conflict (eventId already
// recorded with other values, details.mismatchedFields).
func (us *Usage) CreateUsageEvent(ctx context.Context, m remit.MerchantAccount, in remit.UsageEventInput) (remit.UsageEvent, error) {
	var out remit.UsageEvent
	err := us.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		out, _, _, err = us.recordUsageEvent(ctx, tx, m, in)
		return err
	})
	return out, err
}

// recordUsageEvent is the work of one usage event in tx (CreateUsageEvent's, and each of a
// batch's): created is false for a repeat of a recorded event. On an error the caller rolls back
// what it wrote (the transaction, or the batch's savepoint); wrote is false when the event failed
// before writing anything or sending a statement that can fail (a batch then needs no rollback).
func (us *Usage) recordUsageEvent(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.UsageEventInput) (out remit.UsageEvent, created, wrote bool, err error) {
	now := micro(us.Now(m))
	ts, err := checkUsageEvent(in, now)
	if err != nil {
		return remit.UsageEvent{}, false, false, err
	}
	e := remit.UsageEvent{
		Object: "usage_event", EventID: in.EventID, CustomerID: in.CustomerID, MeterID: in.MeterID, Quantity: in.Quantity,
		Timestamp: ts, Properties: remit.CopyMetadata(in.Properties), Status: remit.UsageRecorded, Corrections: []remit.UsageCorrection{},
		Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now,
	}
	out = e
	meter, cached, err := us.meterForUsage(ctx, tx, m, in.MeterID, now)
	if err != nil {
		return out, false, true, err
	}
	e.UniqueValue = meter.UniqueValue(e.Properties)
	c, err := tx.RecordUsage(ctx, e, meter.Aggregation, now)
	if err != nil {
		return out, false, true, err
	}
	if !c.Recorded {
		first, err := tx.GetUsageEvent(ctx, m.ID, in.EventID, store.Unlocked)
		if err != nil {
			return out, false, true, err
		}
		return first, false, !cached, usageRepeatConflict(first, in) // a repeat writes nothing (but a meter's first use)
	}
	if !c.InRange {
		return out, false, true, remit.Invalid(remit.FieldError{Field: "quantity", Location: remit.InBody, Reason: "total_out_of_range",
			Message: fmt.Sprintf("This quantity would take the total of customer '%s' on meter '%s' past 9223372036854775807, the largest total kept; record usage in a larger unit.", in.CustomerID, in.MeterID)})
	}
	out.Seq = &c.Seq
	us.counts.usage.after(tx, m.Environment)
	if err := us.catalog.usageChangedEntitlements(ctx, tx, m, in.CustomerID, in.MeterID); err != nil {
		return out, true, true, err
	}
	total, next := c.Total, c.Next
	if next == nil || total < *next {
		return out, true, true, nil // below every threshold still to cross: nothing to evaluate
	}
	return out, true, true, us.crossThresholds(ctx, tx, m, in.CustomerID, in.MeterID, total, now)
}

// checkUsageEvent applies the rules of a usage event and returns its timestamp (now when omitted),
// to the microsecond.
func checkUsageEvent(in remit.UsageEventInput, now time.Time) (time.Time, error) {
	ts := now
	var probs remit.Problems
	if in.Timestamp != nil {
		ts = micro(*in.Timestamp)
		if limit := now.Add(remit.UsageFutureTolerance); ts.After(limit) {
			probs.Body("timestamp", "in_future", fmt.Sprintf(
				"timestamp may be at most %d minutes after the merchant clock (now %s); record usage once it has happened, or omit timestamp to use the current time.",
				int(remit.UsageFutureTolerance/time.Minute), now.Format(time.RFC3339Nano)))
		}
	}
	if in.Quantity < 0 {
		probs.Body("quantity", "out_of_range", "quantity must be an integer of at least 0.")
	}
	remit.MetadataProblems(&probs, "properties", in.Properties)
	return ts, probs.Err()
}

// GetUsageEvent returns a usage event, voided or not, with the corrections its void made.
//
// Errors: not_found.
func (us *Usage) GetUsageEvent(ctx context.Context, m remit.MerchantAccount, eventID string) (remit.UsageEvent, error) {
	return us.DB.Read(ctx).GetUsageEvent(ctx, m.ID, eventID, store.Unlocked)
}

// ListUsageEvents lists the merchant account's usage events newest first by when the usage
// happened (their timestamp, which createdFrom and createdTo bound), by customer and meter,
// without the voided ones unless in.IncludeVoided is true.
//
// Errors: validation_failure (includeVoided, limit, cursor, createdFrom, createdTo).
func (us *Usage) ListUsageEvents(ctx context.Context, m remit.MerchantAccount, in remit.UsageEventQuery) (remit.List[remit.UsageEvent], error) {
	var voided bool
	return listPage(ctx, us.core, scopeOf(m), "usage_events", in.ListQuery,
		func(p *remit.Problems) { voided = boolParam(p, "includeVoided", in.IncludeVoided) },
		func(page store.ListPage) ([]remit.UsageEvent, error) {
			return us.DB.Read(ctx).ListUsageEvents(ctx, m.ID, store.UsageEventFilter{CustomerID: in.CustomerID, MeterID: in.MeterID,
				IncludeVoided: voided, ListPage: page})
		})
}

// crossThresholds marks crossed every active threshold of the customer and meter that total
// reaches and emits usage_threshold.crossed for each. The caller holds the running total's lock.
func (us *Usage) crossThresholds(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, customerID, meterID string, total int64, now time.Time) error {
	crossed, err := tx.CrossUsageThresholds(ctx, m.ID, customerID, meterID, total, now)
	if err != nil {
		return err
	}
	for _, t := range crossed {
		if err := us.Emit(ctx, tx, scopeOf(m), now, remit.EventUsageThresholdCrossed, t.ThresholdID, t); err != nil {
			return err
		}
	}
	return nil
}

// usageRepeatConflict compares a repeated eventId with the event first recorded under it: nil when
// it is the same usage (a retry), else a conflict naming what differs.
func usageRepeatConflict(first remit.UsageEvent, in remit.UsageEventInput) error {
	var diff []string
	if in.CustomerID != first.CustomerID {
		diff = append(diff, "customerId")
	}
	if in.MeterID != first.MeterID {
		diff = append(diff, "meterId")
	}
	if in.Quantity != first.Quantity {
		diff = append(diff, "quantity")
	}
	if in.Timestamp != nil && !micro(*in.Timestamp).Equal(first.Timestamp) {
		diff = append(diff, "timestamp")
	}
	if !maps.Equal(in.Properties, first.Properties) {
		diff = append(diff, "properties")
	}
	if len(diff) == 0 {
		return nil
	}
	return remit.Errorf(remit.EConflict,
		"A usage event with eventId '%s' was already recorded with a different %s. Recorded usage cannot change: retry with the original values, or send new usage under a new eventId.",
		first.EventID, joinFields(diff)).
		With("reason", "duplicate_id").With("field", "eventId").With("mismatchedFields", diff).
		With("recorded", map[string]any{
			"customerId": first.CustomerID, "meterId": first.MeterID, "quantity": first.Quantity,
			"timestamp": first.Timestamp.Format(time.RFC3339Nano), "properties": first.Properties,
		})
}

// joinFields lists fields in prose: "a", "a and b", "a, b and c".
func joinFields(f []string) string {
	if len(f) == 1 {
		return f[0]
	}
	return strings.Join(f[:len(f)-1], ", ") + " and " + f[len(f)-1]
}

// CreateUsageThreshold adds an active threshold (thresholdId generated as thr_... when omitted) and
// emits usage_threshold.created. When the customer's total for the meter already reaches it, it is
// crossed at once, in the same transaction: crossedAt is the creation time and
// usage_threshold.crossed follows usage_threshold.created.
//
// Errors: validation_failure (threshold below 1, metadata), not_found (the customer, details.field
// "customerId"), conflict (thresholdId taken).
func (us *Usage) CreateUsageThreshold(ctx context.Context, m remit.MerchantAccount, t remit.UsageThreshold) (remit.UsageThreshold, error) {
	var probs remit.Problems
	if t.Threshold < 1 {
		probs.Body("threshold", "out_of_range", "threshold must be an integer of at least 1.")
	}
	remit.MetadataProblems(&probs, "metadata", t.Metadata)
	if err := probs.Err(); err != nil {
		return remit.UsageThreshold{}, err
	}
	t.ThresholdID = remit.IDOr(t.ThresholdID, "thr")
	now := micro(us.Now(m))
	t.Object, t.Status, t.CrossedAt, t.ArchivedAt = "usage_threshold", remit.ThresholdActive, nil, nil
	t.Environment, t.MerchantAccountID, t.CreatedAt = m.Environment, m.ID, now
	t.Metadata = remit.CopyMetadata(t.Metadata)
	out := t
	err := us.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := remit.AtField(tx.RequireCustomer(ctx, m.ID, t.CustomerID), "customerId"); err != nil {
			return err
		}
		// Lock the running total first: no usage event of this customer and meter can commit
		// between reading it and the threshold becoming visible to the next event.
		total, _, err := tx.LockUsageTotal(ctx, m.ID, t.CustomerID, t.MeterID, now)
		if err != nil {
			return err
		}
		if err := duplicateAs(tx.CreateUsageThreshold(ctx, t), "usage threshold", "thresholdId", t.ThresholdID); err != nil {
			return err
		}
		if err := us.Emit(ctx, tx, scopeOf(m), now, remit.EventUsageThresholdCreated, t.ThresholdID, t); err != nil {
			return err
		}
		if total >= t.Threshold {
			if err := us.crossThresholds(ctx, tx, m, t.CustomerID, t.MeterID, total, now); err != nil {
				return err
			}
			out.CrossedAt = &now
		}
		return nil
	})
	return out, err
}

// GetUsageThreshold returns a threshold of the merchant account.
//
// Errors: not_found.
func (us *Usage) GetUsageThreshold(ctx context.Context, m remit.MerchantAccount, thresholdID string) (remit.UsageThreshold, error) {
	return us.DB.Read(ctx).GetUsageThreshold(ctx, m.ID, thresholdID, store.Unlocked)
}

// ListUsageThresholds lists the merchant account's usage thresholds newest first, by customer,
// meter and status.
//
// Errors: validation_failure (status, limit, cursor, createdFrom, createdTo).
func (us *Usage) ListUsageThresholds(ctx context.Context, m remit.MerchantAccount, in remit.UsageThresholdQuery) (remit.List[remit.UsageThreshold], error) {
	return listByStatus(ctx, us.core, m, "usage_thresholds", in.ListQuery, in.Status, remit.ThresholdStatuses, func(page store.ListPage) ([]remit.UsageThreshold, error) {
		return us.DB.Read(ctx).ListUsageThresholds(ctx, m.ID, store.ThresholdFilter{CustomerID: in.CustomerID, MeterID: in.MeterID,
			Status: in.Status, ListPage: page})
	})
}

// ArchiveUsageThreshold archives an active threshold, crossed or not, and emits
// usage_threshold.archived. From then on no usage event evaluates it.
//
// Errors: not_found, conflict (not active: details.currentState).
func (us *Usage) ArchiveUsageThreshold(ctx context.Context, m remit.MerchantAccount, thresholdID string) (remit.UsageThreshold, error) {
	var out remit.UsageThreshold
	err := us.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		t, err := tx.GetUsageThreshold(ctx, m.ID, thresholdID, store.Locked)
		if err != nil {
			return err
		}
		if err := remit.ThresholdStates.Check(thresholdID, t.Status, remit.ActionArchive); err != nil {
			return err
		}
		now := micro(us.Now(m))
		if ok, err := tx.ArchiveUsageThreshold(ctx, m.ID, thresholdID, now); err != nil {
			return err
		} else if !ok {
			return remit.StateConflict("usage threshold", thresholdID, remit.ThresholdArchived, "archived")
		}
		t.Status, t.ArchivedAt = remit.ThresholdArchived, &now
		out = t
		return us.Emit(ctx, tx, scopeOf(m), now, remit.EventUsageThresholdArchived, t.ThresholdID, t)
	})
	return out, err
}
