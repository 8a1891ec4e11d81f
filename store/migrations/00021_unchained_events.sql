-- +goose Up
-- Events not chained yet (store/chain.go: PostgreSQL chains an account's events just after their
-- transaction commits), found without a scan. Partial: a chained event leaves the index.
CREATE INDEX events_unchained ON events(merchant_account_id, created_at, id) WHERE sequence IS NULL;

-- +goose Down
DROP INDEX events_unchained;
