-- +goose Up
-- The event chain (docs/verification.md): each event's place in its merchant account's chain and
-- its hash. Migration 00019 (store/chain_migration.go, Go) computes them for the events already
-- stored and adds the index that keeps a sequence unique within an account.
ALTER TABLE events ADD COLUMN sequence BIGINT;
ALTER TABLE events ADD COLUMN hash TEXT;

-- +goose Down
ALTER TABLE events DROP COLUMN hash;
ALTER TABLE events DROP COLUMN sequence;
