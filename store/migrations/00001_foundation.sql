-- +goose Up
-- Foundation: organizations, API keys, merchant accounts, idempotency, the events outbox,
-- scheduled jobs and gap-free counters. Times are Unix microseconds (BIGINT) in both dialects.

CREATE TABLE organizations (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    created_at        BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id                TEXT PRIMARY KEY,
    organization_id   TEXT NOT NULL REFERENCES organizations(id),
    secret_hash       TEXT NOT NULL,
    environments      TEXT NOT NULL,          -- comma-separated: sandbox,production
    created_at        BIGINT NOT NULL,
    revoked_at        BIGINT
);
CREATE INDEX api_keys_org ON api_keys(organization_id);

CREATE TABLE merchant_accounts (
    id                            TEXT PRIMARY KEY,
    organization_id               TEXT NOT NULL REFERENCES organizations(id),
    environment                   TEXT NOT NULL,
    external_ref                  TEXT NOT NULL,
    display_name                  TEXT NOT NULL,
    legal_entity_type             TEXT NOT NULL,
    country                       TEXT NOT NULL,
    merchant_mode                 TEXT NOT NULL,
    default_currency              TEXT NOT NULL,
    status                        TEXT NOT NULL,
    platform_enabled              BOOLEAN NOT NULL DEFAULT FALSE,
    platform_merchant_account_id  TEXT,
    clock_offset_us               BIGINT NOT NULL DEFAULT 0,
    profile                       TEXT NOT NULL DEFAULT '{}',
    created_at                    BIGINT NOT NULL,
    updated_at                    BIGINT NOT NULL
);
CREATE UNIQUE INDEX merchant_accounts_ref ON merchant_accounts(organization_id, environment, external_ref);
CREATE INDEX merchant_accounts_platform ON merchant_accounts(platform_merchant_account_id);

-- Idempotency: one row per (scope, key). state is in_flight until the request's own transaction
-- marks it done with the response, so the effect and the remembered answer commit together.
CREATE TABLE idempotency_keys (
    scope         TEXT NOT NULL,                -- organization|environment|merchant account
    idem_key      TEXT NOT NULL,
    route         TEXT NOT NULL,                -- METHOD and path
    body_hash     TEXT NOT NULL,
    state         TEXT NOT NULL,                -- in_flight | done
    owner         TEXT NOT NULL,                -- the request that holds it
    lease_until   BIGINT NOT NULL,
    status        INTEGER NOT NULL DEFAULT 0,
    response      TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

-- The events outbox: written in the same transaction as the change it describes.
CREATE TABLE events (
    id                   TEXT PRIMARY KEY,
    merchant_account_id  TEXT NOT NULL,
    environment          TEXT NOT NULL,
    type                 TEXT NOT NULL,
    object_id            TEXT NOT NULL DEFAULT '',
    data                 TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    dispatched_at        BIGINT
);
CREATE INDEX events_merchant ON events(merchant_account_id, created_at, id);
CREATE INDEX events_type ON events(merchant_account_id, type, created_at, id);
CREATE INDEX events_undispatched ON events(dispatched_at, created_at);

-- Scheduled work on the merchant clock: grants becoming effective or expiring, renewals,
-- settlement cutoffs. A job runs in the same transaction that marks it done.
CREATE TABLE jobs (
    id                   TEXT PRIMARY KEY,
    merchant_account_id  TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    due_at               BIGINT NOT NULL,
    payload              TEXT NOT NULL DEFAULT '{}',
    status               TEXT NOT NULL DEFAULT 'pending',   -- pending | done | failed
    attempts             INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT NOT NULL DEFAULT '',
    created_at           BIGINT NOT NULL,
    done_at              BIGINT
);
CREATE INDEX jobs_due ON jobs(status, merchant_account_id, due_at, id);

-- Gap-free numbering (INV-000001, receipts, CN-000001): incremented inside the transaction that
-- uses the number, so a rolled-back transaction leaves no gap.
CREATE TABLE counters (
    scope   TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   BIGINT NOT NULL,
    PRIMARY KEY (scope, name)
);

-- Store-wide settings, such as the key that signs pagination cursors (generated on first start so
-- that every process on one store shares it).
CREATE TABLE settings (
    name    TEXT PRIMARY KEY,
    value   TEXT NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE counters;
DROP TABLE jobs;
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE merchant_accounts;
DROP TABLE api_keys;
DROP TABLE organizations;
