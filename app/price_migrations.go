package app

import (
	"context"
	"errors"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Price migrations (docs/price-changes.md "Price migrations"): POST /v1/price-migrations checks
// the two prices, selects the live subscriptions on the old one (a pending row each, in the
// creation's transaction: total) and schedules the first batch. A batch is one job
// (price_migration.batch) and one transaction: it locks the migration, takes up to
// migrationBatch pending subscriptions, decides each with remit.PlanSubscriptionMigration, changes
// it through the change's own path (applyChange), records its outcome on its row and the counts on
// the migration, and schedules the next batch. A batch that dies with its process is rolled back
// whole and run again; a row already recorded is never processed again, so no subscription is
// migrated twice. The last batch completes the migration (price_migration.completed).

// migrationBatch is how many subscriptions one batch (one transaction) migrates.
const migrationBatch = 500

const jobPriceMigrationBatch = remit.JobPriceMigrationBatch

// migrationJob is a batch job's payload.
type migrationJob struct {
	MigrationID string `json:"migrationId"`
}

// CreatePriceMigration starts moving every trialing, active, past_due and paused subscription item
// on in.FromPriceID (of in.CustomerIDs, when given) to in.ToPriceID, in the background. It answers
// the migration running, with its total (completed at once when nothing is on the price) and
// emits price_migration.created.
//
// Errors: validation_failure (every problem of the body; a price not recurring; the two prices'
// currencies or intervals differ: both fields), not_found (a price, details.field), conflict (the
// new price archived; details.currentState).
func (qs *Quotes) CreatePriceMigration(ctx context.Context, m remit.MerchantAccount, in remit.PriceMigrationInput) (remit.PriceMigration, error) {
	var p remit.Problems
	remit.CheckPriceMigrationRequest(in, &p)
	if err := p.Err(); err != nil {
		return remit.PriceMigration{}, err
	}
	if in.ProrationBehavior == "" {
		in.ProrationBehavior = remit.ProrationCreate
	}
	return inTx(ctx, qs.DB, func(ctx context.Context, tx *store.Tx) (remit.PriceMigration, error) {
		if err := checkMigrationPrices(ctx, tx, m, in); err != nil {
			return remit.PriceMigration{}, err
		}
		now := micro(qs.Now(m))
		pm := remit.PriceMigration{Object: "price_migration", MigrationID: remit.NewID("pmig"), Status: remit.PriceMigrationRunning,
			FromPriceID: in.FromPriceID, ToPriceID: in.ToPriceID, Effective: in.Effective, ProrationBehavior: in.ProrationBehavior,
			Errors: []remit.PriceMigrationError{}, Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now}
		if in.CustomerIDs != nil {
			pm.CustomerIDs = append([]string{}, in.CustomerIDs...)
		}
		total, err := tx.SelectMigrationSubscriptions(ctx, m.ID, pm.MigrationID, pm.FromPriceID, remit.MigrationStatuses, pm.CustomerIDs)
		if err != nil {
			return pm, err
		}
		pm.Total = total
		completed := pm.Complete(now)
		if err := duplicateAs(tx.InsertPriceMigration(ctx, pm), "price_migration", "migrationId", pm.MigrationID); err != nil {
			return pm, err
		}
		if err := qs.Emit(ctx, tx, scopeOf(m), now, remit.EventPriceMigrationCreated, pm.MigrationID, pm); err != nil {
			return pm, err
		}
		if completed {
			return pm, qs.Emit(ctx, tx, scopeOf(m), now, remit.EventPriceMigrationCompleted, pm.MigrationID, pm)
		}
		return pm, qs.ScheduleBackground(ctx, tx, scopeOf(m), jobPriceMigrationBatch, now, migrationJob{MigrationID: pm.MigrationID})
	})
}

// checkMigrationPrices loads a migration's two prices: each must exist (404 naming its field),
// both recurring in one currency and interval (422), the new one active (409).
func checkMigrationPrices(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.PriceMigrationInput) error {
	prices, err := tx.GetPrices(ctx, m.ID, []string{in.FromPriceID, in.ToPriceID})
	if err != nil {
		return err
	}
	from, ok := prices[in.FromPriceID]
	if !ok {
		return remit.NotFound("price", in.FromPriceID, "fromPriceId")
	}
	to, ok := prices[in.ToPriceID]
	if !ok {
		return remit.NotFound("price", in.ToPriceID, "toPriceId")
	}
	var p remit.Problems
	remit.CheckMigrationPrices(from, to, &p)
	if err := p.Err(); err != nil {
		return err
	}
	return remit.CheckPricesNamed(prices, []remit.PriceRef{{PriceID: to.PriceID, Field: "toPriceId"}}, nil)
}

// GetPriceMigration returns a price migration with its counts.
//
// Errors: not_found.
func (qs *Quotes) GetPriceMigration(ctx context.Context, m remit.MerchantAccount, migrationID string) (remit.PriceMigration, error) {
	return qs.DB.Read(ctx).GetPriceMigration(ctx, m.ID, migrationID, store.Unlocked)
}

// ListPriceMigrations lists the merchant account's price migrations, newest first, by status.
//
// Errors: validation_failure (status, limit, cursor, createdFrom, createdTo).
func (qs *Quotes) ListPriceMigrations(ctx context.Context, m remit.MerchantAccount, in remit.PriceMigrationQuery) (remit.List[remit.PriceMigration], error) {
	return listByStatus(ctx, qs.core, m, "price_migrations", in.ListQuery, in.Status, remit.PriceMigrationStatuses, func(page store.ListPage) ([]remit.PriceMigration, error) {
		return qs.DB.Read(ctx).ListPriceMigrations(ctx, m.ID, store.PriceMigrationFilter{Status: in.Status, ListPage: page})
	})
}

// runMigrationBatch is the job of one batch: it migrates up to migrationBatch pending
// subscriptions in the job's transaction (the job runner commits after it: store.Tx.EndJobBatch)
// and schedules the next batch at the same due time, or completes the migration. A batch that
// failed its last attempt fails the migration (price_migration.completed, status failed).
func (qs *Quotes) runMigrationBatch(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, _, pm, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p migrationJob) (remit.PriceMigration, error) {
		return tx.GetPriceMigration(ctx, m.ID, p.MigrationID, store.Locked)
	})
	if !found || !pm.Status.Allows(remit.ActionMigrate) {
		return err
	}
	tx.EndJobBatch()
	at = micro(at)
	before := pm
	berr := tx.Savepoint(ctx, func() error { return qs.migrateBatch(ctx, tx, m, &pm, at) })
	if berr == nil {
		return nil
	}
	if store.IsRetryable(berr) || store.IsUnavailable(berr) || ctx.Err() != nil || job.Attempts+1 < remit.MaxJobAttempts {
		return berr
	}
	qs.Log.ErrorContext(ctx, "price migration failed", "migrationId", pm.MigrationID, "err", berr.Error())
	pm = before
	now := micro(qs.Now(m))
	pm.Status, pm.CompletedAt = remit.PriceMigrationFailed, &now
	if err := tx.UpdatePriceMigration(ctx, pm); err != nil {
		return err
	}
	return qs.Emit(ctx, tx, scope, now, remit.EventPriceMigrationCompleted, pm.MigrationID, pm)
}

// migrateBatch migrates the migration's next pending subscriptions, records each outcome and the
// counts, then schedules the next batch (due at `at`, the job's own due time, so the runner that
// runs this one runs it next) or completes the migration.
func (qs *Quotes) migrateBatch(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, pm *remit.PriceMigration, at time.Time) error {
	ids, err := tx.PendingMigrationSubscriptions(ctx, m.ID, pm.MigrationID, migrationBatch)
	if err != nil {
		return err
	}
	to, err := tx.GetPrice(ctx, m.ID, pm.ToPriceID)
	if err != nil {
		return err
	}
	now := micro(qs.Now(m))
	for _, id := range ids {
		outcome, code, msg, err := qs.migrateOne(ctx, tx, m, *pm, to, id, now)
		if err != nil {
			return err
		}
		recorded, err := tx.RecordMigrationOutcome(ctx, m.ID, pm.MigrationID, id, outcome, code, msg, now)
		if err != nil {
			return err
		}
		if recorded {
			pm.Record(id, outcome, code, msg)
		}
	}
	if len(ids) < migrationBatch && !pm.Done() {
		pm.Total = pm.Migrated + pm.Skipped + pm.Failed // no row left pending: what was recorded is the whole
	}
	completed := pm.Complete(now)
	if err := tx.UpdatePriceMigration(ctx, *pm); err != nil {
		return err
	}
	if completed {
		return qs.Emit(ctx, tx, scopeOf(m), now, remit.EventPriceMigrationCompleted, pm.MigrationID, *pm)
	}
	return qs.ScheduleBackground(ctx, tx, scopeOf(m), jobPriceMigrationBatch, at, migrationJob{MigrationID: pm.MigrationID})
}

// migrateOne migrates one subscription in a savepoint: its outcome, and for a failure the code and
// message of the refusal (a rule of the engine: a domain error). Another error (the store) fails
// the batch.
func (qs *Quotes) migrateOne(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, pm remit.PriceMigration, to remit.Price,
	id string, now time.Time) (outcome, code, msg string, err error) {
	err = tx.Savepoint(ctx, func() error {
		sub, err := tx.GetSubscription(ctx, m.ID, id, store.Locked)
		if remit.ErrorCode(err) == remit.ENotFound {
			outcome = remit.MigrationSkipped
			return nil
		} else if err != nil {
			return err
		}
		step := remit.PlanSubscriptionMigration(sub, pm.FromPriceID, to, pm.Effective)
		outcome, code, msg = step.Outcome, step.Code, step.Message
		if step.Outcome != remit.MigrationMigrated {
			return nil
		}
		return qs.applyMigration(ctx, tx, m, &sub, step, pm, now)
	})
	var e *remit.Error
	if err != nil && errors.As(err, &e) && e.Code != remit.EInternal {
		return remit.MigrationFailed, string(e.Code), remit.ErrorMessage(err), nil
	}
	return outcome, code, msg, err
}

// applyMigration changes sub as step says and emits subscription.updated: a paused
// subscription's items replaced as they are; a change through applyChange, keeping (migrated)
// what was pending when it applies now; pending items migrated.
func (qs *Quotes) applyMigration(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, sub *remit.Subscription, step remit.MigrationStep,
	pm remit.PriceMigration, now time.Time) error {
	pending, coupons, quote := sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID
	if step.Pending != nil {
		pending = step.Pending
	}
	switch {
	case step.Direct:
		sub.Items, sub.PendingItems = step.Items, pending
	case step.Change:
		if err := qs.applyChange(ctx, tx, m, sub, step.Items, pm.Effective, pm.ProrationBehavior, now); err != nil {
			return err
		}
		if pm.Effective == remit.ChangeNow {
			sub.PendingItems, sub.PendingCouponIDs, sub.PendingQuoteID = pending, coupons, quote
		}
	default:
		sub.PendingItems = pending
	}
	sub.UpdatedAt = now
	if err := tx.UpdateSubscription(ctx, *sub); err != nil {
		return err
	}
	return qs.Emit(ctx, tx, scopeOf(m), now, remit.EventSubscriptionUpdated, sub.SubscriptionID, *sub)
}

// registerMigrationJobs installs the price migrations' batch job.
func (qs *Quotes) registerMigrationJobs() {
	qs.RegisterJob(jobPriceMigrationBatch, qs.runMigrationBatch)
}
