-- +goose Up
-- Webhooks: endpoints, deliveries (one per event and endpoint, or per resend) and their attempts.
-- Delivery times are real time (Unix microseconds), not the merchant clock: receivers check the
-- webhook-timestamp against their own clock.

CREATE TABLE webhook_endpoints (
    merchant_account_id  TEXT NOT NULL,
    id                   TEXT NOT NULL,                 -- caller-chosen or we_...
    environment          TEXT NOT NULL,
    url                  TEXT NOT NULL,
    enabled_events       TEXT NOT NULL,                 -- JSON array of types or "*"
    description          TEXT,
    metadata             TEXT NOT NULL DEFAULT '{}',
    status               TEXT NOT NULL,                 -- enabled | disabled
    disabled_reason      TEXT,                          -- requested | gone (the endpoint answered 410)
    disabled_at          BIGINT,
    secret               TEXT NOT NULL,                 -- the signing secret, AES-GCM encrypted (app/webhooksecret.go)
    created_at           BIGINT NOT NULL,               -- merchant clock
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints(merchant_account_id, created_at, id);

CREATE TABLE webhook_deliveries (
    id                   TEXT PRIMARY KEY,              -- wd_...
    merchant_account_id  TEXT NOT NULL,
    environment          TEXT NOT NULL,
    event_id             TEXT NOT NULL,
    endpoint_id          TEXT NOT NULL,
    trigger              TEXT NOT NULL,                 -- dispatch | resend
    status               TEXT NOT NULL,                 -- pending | succeeded | failed
    attempts             INTEGER NOT NULL DEFAULT 0,
    -- When a worker should next pick the delivery up. While an attempt is in flight it is the end
    -- of the worker's lease: a worker that dies mid-attempt leaves the delivery due again then.
    next_attempt_at      BIGINT,
    lease_owner          TEXT NOT NULL DEFAULT '',
    lease_until          BIGINT NOT NULL DEFAULT 0,
    last_attempt_at      BIGINT,
    response_status      INTEGER,
    last_error           TEXT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(merchant_account_id, event_id, created_at, id);

CREATE TABLE webhook_attempts (
    delivery_id          TEXT NOT NULL,
    attempt              INTEGER NOT NULL,              -- 1, 2, ...
    attempted_at         BIGINT NOT NULL,
    webhook_timestamp    BIGINT NOT NULL,               -- the webhook-timestamp header (Unix seconds)
    finished             BOOLEAN NOT NULL DEFAULT FALSE,
    response_status      INTEGER,
    duration_us          BIGINT,
    error                TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
