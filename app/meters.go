package app

import (
	"context"
	"sync"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Meters (docs/usage.md "Meters"). A meter's aggregation decides how its usage events are folded
// into the pre-aggregates, so every usage event needs it. Once a meter has events its aggregation
// never changes (MeterChangeConflict), which makes it safe to keep in memory: meterCache holds the
// meters this process has seen with events committed, and a usage event of such a meter reads
// nothing more. The first event of a meter in a process reads (and marks) the meter's row under its
// lock (store.MeterForUsage), and caches it once that transaction has committed.

// meterCache is the process's meters with events, by merchant account and meter ID.
type meterCache struct{ m sync.Map } // meterKey → remit.Meter

type meterKey struct{ account, meter string }

// meterForUsage is the meter a usage event of m records on: from the cache (cached true), else
// from the store (marking it as having events), cached after the transaction commits.
func (us *Usage) meterForUsage(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, meterID string, now time.Time) (meter remit.Meter, cached bool, err error) {
	key := meterKey{m.ID, meterID}
	if v, ok := us.meters.m.Load(key); ok {
		return v.(remit.Meter), true, nil
	}
	meter, err = tx.MeterForUsage(ctx, m.ID, meterID, now)
	if err != nil {
		return meter, false, err
	}
	tx.AfterCommit(func() { us.meters.m.Store(key, meter) })
	return meter, false, nil
}

// aggregationOf is the aggregation of a meter for reading its usage: a meter nobody created and
// nobody used yet is a sum meter.
func (us *Usage) aggregationOf(ctx context.Context, q store.Q, m remit.MerchantAccount, meterID string) (string, error) {
	if v, ok := us.meters.m.Load(meterKey{m.ID, meterID}); ok {
		return v.(remit.Meter).Aggregation, nil
	}
	meter, err := q.GetMeter(ctx, m.ID, meterID, store.Unlocked, true)
	if remit.ErrorCode(err) == remit.ENotFound {
		return remit.AggSum, nil
	}
	return meter.Aggregation, err
}

// CreateMeter creates a meter, or changes the name and aggregation of one that exists (created, or
// used before it was created). A meter that has usage events keeps its aggregation: changing it is
// a conflict; the same aggregation again just renames it. Emits meter.created or meter.updated.
//
// Errors: validation_failure (aggregation, uniqueProperty), conflict (the aggregation of a meter
// with events).
func (us *Usage) CreateMeter(ctx context.Context, m remit.MerchantAccount, in remit.Meter) (remit.Meter, error) {
	var p remit.Problems
	remit.CheckMeter(in, &p)
	if err := p.Err(); err != nil {
		return remit.Meter{}, err
	}
	now := micro(us.Now(m))
	return inTx(ctx, us.DB, func(ctx context.Context, tx *store.Tx) (remit.Meter, error) {
		was, err := tx.GetMeter(ctx, m.ID, in.MeterID, store.Locked, true)
		exists := err == nil
		if err != nil && remit.ErrorCode(err) != remit.ENotFound {
			return was, err
		}
		if err := remit.MeterChangeConflict(was, in); exists && err != nil {
			return was, err
		}
		out := in
		out.Object, out.Environment, out.MerchantAccountID, out.CreatedAt, out.UpdatedAt = "meter", m.Environment, m.ID, now, now
		event := remit.EventMeterCreated
		if exists {
			out.HasEvents = was.HasEvents
			if !was.Implicit {
				out.CreatedAt, event = was.CreatedAt, remit.EventMeterUpdated
			}
		}
		if err := duplicateAs(tx.PutMeter(ctx, out, exists), "meter", "meterId", in.MeterID); err != nil {
			return out, err
		}
		return out, us.Emit(ctx, tx, scopeOf(m), now, event, out.MeterID, out)
	})
}

// GetMeter returns a created meter.
//
// Errors: not_found.
func (us *Usage) GetMeter(ctx context.Context, m remit.MerchantAccount, meterID string) (remit.Meter, error) {
	return us.DB.Read(ctx).GetMeter(ctx, m.ID, meterID, store.Unlocked, false)
}

// ListMeters pages through the merchant account's created meters, newest first.
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (us *Usage) ListMeters(ctx context.Context, m remit.MerchantAccount, in remit.ListQuery) (remit.List[remit.Meter], error) {
	return listPage(ctx, us.core, scopeOf(m), "meters", in, nil, func(page store.ListPage) ([]remit.Meter, error) {
		return us.DB.Read(ctx).ListMeters(ctx, m.ID, page)
	})
}
