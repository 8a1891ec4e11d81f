package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// Price migrations and the subscriptions each one selected (migration 43, docs/price-changes.md
// "Price migrations").

const priceMigrationColumns = `id, status, from_price_id, to_price_id, effective, proration_behavior, customer_ids, total,
	migrated, skipped, failed, errors, created_at, completed_at`

// priceMigrationTable is the price_migrations table's reads.
var priceMigrationTable = accountTable[remit.PriceMigration]{from: "price_migrations", columns: priceMigrationColumns, kind: "price_migration",
	scan: owning(scanPriceMigration, func(pm *remit.PriceMigration) *string { return &pm.MerchantAccountID })}

// InsertPriceMigration inserts a migration.
func (q Q) InsertPriceMigration(ctx context.Context, pm remit.PriceMigration) error {
	var customers any
	if pm.CustomerIDs != nil {
		customers = mustJSON(pm.CustomerIDs)
	}
	_, err := q.exec(ctx, `INSERT INTO price_migrations (merchant_account_id, `+priceMigrationColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		pm.MerchantAccountID, pm.MigrationID, pm.Status, pm.FromPriceID, pm.ToPriceID, pm.Effective, pm.ProrationBehavior, customers,
		pm.Total, pm.Migrated, pm.Skipped, pm.Failed, jsonList(pm.Errors), remit.Micros(pm.CreatedAt), optMicros(pm.CompletedAt))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.InsertPriceMigration")
}

// UpdatePriceMigration writes a migration's state, counts and errors.
func (q Q) UpdatePriceMigration(ctx context.Context, pm remit.PriceMigration) error {
	_, err := q.exec(ctx, `UPDATE price_migrations SET status = $3, total = $4, migrated = $5, skipped = $6, failed = $7, errors = $8,
		completed_at = $9 WHERE merchant_account_id = $1 AND id = $2`,
		pm.MerchantAccountID, pm.MigrationID, pm.Status, pm.Total, pm.Migrated, pm.Skipped, pm.Failed, jsonList(pm.Errors),
		optMicros(pm.CompletedAt))
	return wrapErr(err, "store.UpdatePriceMigration")
}

// GetPriceMigration returns a migration, or not_found; Locked, it takes the row lock (PostgreSQL).
func (q Q) GetPriceMigration(ctx context.Context, merchantAccountID, id string, read Read) (remit.PriceMigration, error) {
	return priceMigrationTable.get(ctx, q, "store.GetPriceMigration", merchantAccountID, id, read)
}

// PriceMigrationFilter narrows the migrations list.
type PriceMigrationFilter struct {
	Status string
	ListPage
}

// ListPriceMigrations returns a page of migrations, newest first, over price_migrations_list or
// price_migrations_status_list.
func (q Q) ListPriceMigrations(ctx context.Context, merchantAccountID string, f PriceMigrationFilter) ([]remit.PriceMigration, error) {
	return priceMigrationTable.list(ctx, q, "store.ListPriceMigrations", merchantAccountID, f.ListPage, Eq{"status", f.Status})
}

func scanPriceMigration(row interface{ Scan(...any) error }) (pm remit.PriceMigration, err error) {
	var customers sql.NullString
	var errs string
	var created int64
	var completed sql.NullInt64
	if err = row.Scan(&pm.MigrationID, &pm.Status, &pm.FromPriceID, &pm.ToPriceID, &pm.Effective, &pm.ProrationBehavior, &customers,
		&pm.Total, &pm.Migrated, &pm.Skipped, &pm.Failed, &errs, &created, &completed); err != nil {
		return pm, err
	}
	pm.Object, pm.CreatedAt, pm.CompletedAt = "price_migration", remit.FromMicros(created), timePtr(completed)
	if customers.Valid {
		if err := json.Unmarshal([]byte(customers.String), &pm.CustomerIDs); err != nil {
			return pm, fmt.Errorf("customer_ids: %w", err)
		}
	}
	if err := json.Unmarshal([]byte(errs), &pm.Errors); err != nil {
		return pm, fmt.Errorf("errors: %w", err)
	}
	return pm, nil
}

// SelectMigrationSubscriptions records, as the migration's pending rows, every subscription of
// the merchant account in one of statuses with an item on fromPriceID (of customerIDs, when not
// nil), and returns how many. The items' JSON is narrowed with LIKE; the engine checks each
// subscription's items again when it processes it.
func (q Q) SelectMigrationSubscriptions(ctx context.Context, merchantAccountID, migrationID, fromPriceID string,
	statuses []remit.SubscriptionStatus, customerIDs []string) (int64, error) {
	pattern := `%"priceId":` + likeEscape(mustJSON(fromPriceID)) + `%`
	args := []any{merchantAccountID, migrationID, pattern}
	var in []string
	for _, s := range statuses {
		args = append(args, string(s))
		in = append(in, fmt.Sprintf("$%d", len(args)))
	}
	query := `INSERT INTO price_migration_items (merchant_account_id, migration_id, subscription_id, status)
		SELECT merchant_account_id, $2, id, 'pending' FROM subscriptions
		WHERE merchant_account_id = $1 AND items LIKE $3 ESCAPE '!' AND status IN (` + strings.Join(in, ", ") + `)`
	if customerIDs != nil {
		in = in[:0]
		for _, c := range customerIDs {
			args = append(args, c)
			in = append(in, fmt.Sprintf("$%d", len(args)))
		}
		query += ` AND customer_id IN (` + strings.Join(in, ", ") + `)`
	}
	n, err := q.exec(ctx, query, args...)
	return n, wrapErr(err, "store.SelectMigrationSubscriptions")
}

// likeEscape escapes LIKE's wildcards (and the escape character, !) in s.
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// PendingMigrationSubscriptions returns up to limit subscriptions of the migration not processed
// yet, in ID order.
func (q Q) PendingMigrationSubscriptions(ctx context.Context, merchantAccountID, migrationID string, limit int) ([]string, error) {
	return queryStrings(ctx, q, "store.PendingMigrationSubscriptions", `SELECT subscription_id FROM price_migration_items
		WHERE merchant_account_id = $1 AND migration_id = $2 AND status = 'pending' ORDER BY subscription_id LIMIT $3`,
		merchantAccountID, migrationID, limit)
}

// RecordMigrationOutcome writes one subscription's outcome (migrated, skipped or failed, with its
// error) if it is still pending, and reports whether it was: a row already processed is left
// alone.
func (q Q) RecordMigrationOutcome(ctx context.Context, merchantAccountID, migrationID, subscriptionID, outcome, code, message string, at time.Time) (bool, error) {
	var c, m any
	if code != "" {
		c, m = code, message
	}
	n, err := q.exec(ctx, `UPDATE price_migration_items SET status = $4, error_code = $5, error_message = $6, processed_at = $7
		WHERE merchant_account_id = $1 AND migration_id = $2 AND subscription_id = $3 AND status = 'pending'`,
		merchantAccountID, migrationID, subscriptionID, outcome, c, m, remit.Micros(at))
	return n == 1, wrapErr(err, "store.RecordMigrationOutcome")
}
