package app

import (
	"context"
	"sort"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Revenue recognition (docs/ledger.md "Recognition"): a subscription line's revenue is deferred
// at finalization for the days of its period still to come (revenue_schedules) and recognized
// day by day by a daily job on the merchant clock, one job per day (its ID names the day, so it is
// scheduled once however many invoices ask for it). Each run recognizes the whole days passed up
// to its day and schedules the next day's run while revenue remains deferred: after a clock jump,
// the runner runs the missed days' jobs one after another, each posting its own day.

const jobRecognizeRevenue = remit.JobRecognizeRevenue

// recognitionRunAt is the first midnight (UTC, merchant clock) after at.
func recognitionRunAt(at time.Time) time.Time {
	return at.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// scheduleRecognition makes sure the daily recognition job runs at the first midnight after at.
func (j *Journal) scheduleRecognition(ctx context.Context, tx *store.Tx, scope remit.Scope, at time.Time) error {
	due := recognitionRunAt(at)
	id := "job_recognize_" + scope.MerchantAccountID + "_" + due.Format("20060102")
	inserted, err := tx.InsertJobOnce(ctx, remit.Job{ID: id, MerchantAccountID: scope.MerchantAccountID, Kind: jobRecognizeRevenue,
		DueAt: due, ScheduledFor: due}, j.Clock.Now())
	if err != nil || !inserted || scope.Environment != remit.Sandbox {
		return err
	}
	return j.dueAfterAdvance(ctx, tx, scope.MerchantAccountID, due)
}

// runRecognition is the daily job: what is due up to its day is recognized, and tomorrow's run
// scheduled while anything remains deferred.
func (j *Journal) runRecognition(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	schedules, err := tx.DueRevenueSchedules(ctx, scope.MerchantAccountID, at)
	if err != nil {
		return err
	}
	if err := j.recognize(ctx, tx, scope, schedules, at, job.ID); err != nil {
		return err
	}
	remaining, err := tx.DeferredRevenueTotals(ctx, scope.MerchantAccountID)
	if err != nil {
		return err
	}
	for _, v := range remaining {
		if v > 0 {
			return j.scheduleRecognition(ctx, tx, scope, at)
		}
	}
	return nil
}

// recognizedSchedules loads an invoice's revenue schedules and recognizes what they earned up to
// now, so that a credit note or a void (key) takes its share of what is still deferred today.
func (j *Journal) recognizedSchedules(ctx context.Context, tx *store.Tx, scope remit.Scope, invoiceID string, now time.Time, key string) ([]remit.RevenueSchedule, error) {
	schedules, err := tx.InvoiceRevenueSchedules(ctx, scope.MerchantAccountID, invoiceID)
	if err != nil || len(schedules) == 0 {
		return schedules, err
	}
	return schedules, j.recognize(ctx, tx, scope, schedules, now, key)
}

// RecognizeRevenue recognizes, in a transaction of its own, what every schedule of the merchant
// account earned up to upTo (what the daily job does; the backfill ends with it). Running it again
// recognizes nothing more: schedules only move forward.
func (j *Journal) RecognizeRevenue(ctx context.Context, m remit.MerchantAccount, upTo time.Time) error {
	return j.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.LockJobRunner(ctx, m.ID); err != nil {
			return err
		}
		schedules, err := tx.DueRevenueSchedules(ctx, m.ID, upTo)
		if err != nil {
			return err
		}
		return j.recognize(ctx, tx, scopeOf(m), schedules, upTo, remit.NewID("run"))
	})
}

// dayKey is one currency's recognition of one UTC day.
type dayKey struct {
	currency string
	day      string // YYYY-MM-DD, UTC
}

// recognize steps each schedule a day at a time up to upTo, stores it, and posts one entry per
// currency and day (source id: the day and key, what ran it).
func (j *Journal) recognize(ctx context.Context, tx *store.Tx, scope remit.Scope, schedules []remit.RevenueSchedule, upTo time.Time, key string) error {
	sums := map[dayKey]map[string]int64{}
	at := map[dayKey]time.Time{} // when each day's entry is posted: the latest moment it recognizes
	for i := range schedules {
		s := schedules[i]
		moved := false
		for s.Deferred > 0 {
			from := s.RecognizedThrough
			step := from.Add(24 * time.Hour)
			if step.After(upTo) {
				if upTo.Before(s.PeriodEnd) {
					break
				}
				step = upTo
			}
			amt, next := s.Recognize(step)
			if !next.RecognizedThrough.After(from) {
				break
			}
			s, moved = next, true
			last := s.RecognizedThrough.Add(-time.Microsecond) // the last instant of the day recognized
			k := dayKey{s.Currency, last.UTC().Format("2006-01-02")}
			if sums[k] == nil {
				sums[k] = map[string]int64{}
			}
			sums[k][s.PriceID] += amt
			if last.After(at[k]) {
				at[k] = last
			}
		}
		if !moved {
			continue
		}
		schedules[i] = s
		if err := tx.UpsertRevenueSchedule(ctx, scope.MerchantAccountID, s); err != nil {
			return err
		}
	}
	keys := make([]dayKey, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].day != keys[b].day {
			return keys[a].day < keys[b].day
		}
		return keys[a].currency < keys[b].currency
	})
	for _, k := range keys {
		e, ok := remit.PostRevenueRecognized(k.currency, k.day+":"+key, sums[k], at[k])
		if err := j.post(ctx, tx, scope, e, ok); err != nil {
			return err
		}
	}
	return nil
}
