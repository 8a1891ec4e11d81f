-- +goose Up
-- Quotes (each with its versions as one JSON document) and the subscriptions accepted quotes create.

CREATE TABLE quotes (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    status                TEXT NOT NULL,
    order_type            TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    billing_account_id    TEXT NOT NULL,
    subscription_id       TEXT,
    currency              TEXT NOT NULL,
    coupon_ids            TEXT NOT NULL DEFAULT '[]',
    terms                 TEXT,
    current_version       BIGINT NOT NULL,
    versions              TEXT NOT NULL,
    invoice_id            TEXT,
    accepted_at           BIGINT,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX quotes_list ON quotes(merchant_account_id, created_at, id);
CREATE INDEX quotes_subscription ON quotes(merchant_account_id, subscription_id);

CREATE TABLE subscriptions (
    merchant_account_id     TEXT NOT NULL,
    id                      TEXT NOT NULL,
    status                  TEXT NOT NULL,
    customer_id             TEXT NOT NULL,
    billing_account_id      TEXT NOT NULL,
    currency                TEXT NOT NULL,
    items                   TEXT NOT NULL,
    pending_items           TEXT,
    pending_coupon_ids      TEXT,
    pending_quote_id        TEXT,
    billing_interval        TEXT NOT NULL,
    billing_interval_count  BIGINT NOT NULL,
    cycle_anchor            BIGINT NOT NULL,
    cycle_periods           BIGINT NOT NULL,
    current_period_start    BIGINT NOT NULL,
    current_period_end      BIGINT NOT NULL,
    latest_invoice_id       TEXT,
    quote_id                TEXT,
    coupon_ids              TEXT NOT NULL DEFAULT '[]',
    metadata                TEXT NOT NULL DEFAULT '{}',
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (current_period_end > current_period_start AND cycle_periods >= 1 AND billing_interval_count >= 1)
);
CREATE INDEX subscriptions_list ON subscriptions(merchant_account_id, created_at, id);
CREATE INDEX subscriptions_customer ON subscriptions(merchant_account_id, customer_id, created_at);

-- +goose Down
DROP TABLE subscriptions;
DROP TABLE quotes;
