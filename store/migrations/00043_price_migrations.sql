-- +goose Up
-- Price migrations (docs/price-changes.md "Price migrations"): a migration and its counts, and one
-- row per subscription it selected when it was created, whose status (pending until a batch
-- processes it, then migrated, skipped or failed) is written in the transaction that changes the
-- subscription, so a batch run again after a crash never migrates a subscription twice.
CREATE TABLE price_migrations (
    merchant_account_id TEXT NOT NULL,
    id                  TEXT NOT NULL,
    status              TEXT NOT NULL,
    from_price_id       TEXT NOT NULL,
    to_price_id         TEXT NOT NULL,
    effective           TEXT NOT NULL,
    proration_behavior  TEXT NOT NULL,
    customer_ids        TEXT,
    total               BIGINT NOT NULL,
    migrated            BIGINT NOT NULL DEFAULT 0,
    skipped             BIGINT NOT NULL DEFAULT 0,
    failed              BIGINT NOT NULL DEFAULT 0,
    errors              TEXT NOT NULL DEFAULT '[]',
    created_at          BIGINT NOT NULL,
    completed_at        BIGINT,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX price_migrations_list ON price_migrations(merchant_account_id, created_at, id);
CREATE INDEX price_migrations_status_list ON price_migrations(merchant_account_id, status, created_at, id);
CREATE TABLE price_migration_items (
    merchant_account_id TEXT NOT NULL,
    migration_id        TEXT NOT NULL,
    subscription_id     TEXT NOT NULL,
    status              TEXT NOT NULL,
    error_code          TEXT,
    error_message       TEXT,
    processed_at        BIGINT,
    PRIMARY KEY (merchant_account_id, migration_id, subscription_id)
);
CREATE INDEX price_migration_items_status ON price_migration_items(merchant_account_id, migration_id, status, subscription_id);
-- A customer's subscriptions newest first as one index range: the list's customerId filter, and
-- the entitlements of a customer (app/entitlements.go, holdings), which every change of a
-- subscription computes again; without the ID in the key SQLite walked subscriptions_list over
-- every subscription of the account to avoid sorting the ties.
CREATE INDEX subscriptions_customer_list ON subscriptions(merchant_account_id, customer_id, created_at, id);

-- +goose Down
DROP INDEX subscriptions_customer_list;
DROP TABLE price_migration_items;
DROP TABLE price_migrations;
