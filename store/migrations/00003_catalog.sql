-- +goose Up
-- Catalog (products, prices, coupons), customers and billing accounts, payment methods and their
-- hosted setup sessions, the shared hosted tokens of the customer portal, and the prepaid balance
-- ledger. Every resource belongs to one merchant account and its IDs are unique within it.

CREATE TABLE products (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);

CREATE TABLE prices (
    merchant_account_id     TEXT NOT NULL,
    id                      TEXT NOT NULL,
    product_id              TEXT NOT NULL,
    name                    TEXT NOT NULL,
    price_type              TEXT NOT NULL,
    currency                TEXT NOT NULL,
    billing_interval        TEXT,
    billing_interval_count  BIGINT,
    unit_amount             BIGINT,
    meter_id                TEXT,
    metadata                TEXT NOT NULL DEFAULT '{}',
    created_at              BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, product_id) REFERENCES products(merchant_account_id, id)
);
CREATE INDEX prices_meter ON prices(merchant_account_id, meter_id);

CREATE TABLE coupons (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    name                  TEXT NOT NULL,
    percent_off           BIGINT,
    amount_off            BIGINT,
    currency              TEXT,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);

CREATE TABLE customers (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    external_id           TEXT,
    name                  TEXT NOT NULL,
    email                 TEXT,
    address               TEXT,                  -- JSON remit.Address, or NULL
    tax_exempt            BOOLEAN NOT NULL DEFAULT FALSE,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
-- NULLs are distinct in both dialects: many customers may have no externalId.
CREATE UNIQUE INDEX customers_external_id ON customers(merchant_account_id, external_id);

CREATE TABLE billing_accounts (
    merchant_account_id        TEXT NOT NULL,
    id                         TEXT NOT NULL,
    customer_id                TEXT NOT NULL,
    currency                   TEXT NOT NULL,
    collection_method          TEXT NOT NULL,
    tax_address                TEXT,             -- JSON remit.Address, or NULL
    default_payment_method_id  TEXT,
    metadata                   TEXT NOT NULL DEFAULT '{}',
    created_at                 BIGINT NOT NULL,
    updated_at                 BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id)
);
CREATE INDEX billing_accounts_customer ON billing_accounts(merchant_account_id, customer_id);

-- Payment methods come only from sandbox test tokens; no card number is ever stored.
CREATE TABLE payment_methods (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    billing_account_id    TEXT,
    type                  TEXT NOT NULL,
    brand                 TEXT NOT NULL,
    last4                 TEXT NOT NULL,
    test_card             TEXT NOT NULL,         -- the test token: the sandbox processor's outcome
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id)
);
CREATE INDEX payment_methods_customer ON payment_methods(merchant_account_id, customer_id);

CREATE TABLE payment_method_setup_sessions (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    billing_account_id    TEXT,
    method_type           TEXT NOT NULL,
    set_as_default        BOOLEAN NOT NULL DEFAULT FALSE,
    status                TEXT NOT NULL,         -- open | completed ("expired" is derived from expires_at)
    expires_at            BIGINT NOT NULL,
    payment_method_id     TEXT,
    completed_at          BIGINT,
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id)
);

-- Hosted tokens of the customer portal, shared by setup sessions and invoices. Only the SHA-256 of
-- a token is stored. A token is scoped to one resource of one merchant account.
CREATE TABLE hosted_tokens (
    token_hash            TEXT PRIMARY KEY,
    kind                  TEXT NOT NULL,         -- setup_session | invoice
    resource_id           TEXT NOT NULL,
    merchant_account_id   TEXT NOT NULL,
    expires_at            BIGINT NOT NULL,       -- merchant clock
    created_at            BIGINT NOT NULL
);
CREATE INDEX hosted_tokens_resource ON hosted_tokens(merchant_account_id, kind, resource_id);

-- The prepaid balance ledger: append-only; only a lot's remaining ever changes, and never below 0.
CREATE TABLE balance_entries (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    id                    TEXT NOT NULL,
    seq                   TEXT NOT NULL,         -- monotonic ULID: append order within equal created_at
    type                  TEXT NOT NULL,         -- grant | expiry | application | credit_note | top_up
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,       -- signed
    remaining             BIGINT,                -- lots (grant, credit_note, top_up) only
    source_entry_id       TEXT,                  -- expiry, application: the lot taken from
    invoice_id            TEXT,
    credit_note_id        TEXT,
    targets               TEXT,                  -- JSON remit.BalanceTargets (grants), or NULL
    description           TEXT,
    effective_at          BIGINT NOT NULL,
    expires_at            BIGINT,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id),
    CHECK (remaining IS NULL OR (remaining >= 0 AND remaining <= amount))
);
CREATE INDEX balance_entries_order ON balance_entries(merchant_account_id, customer_id, created_at, seq);
CREATE INDEX balance_entries_lots ON balance_entries(merchant_account_id, customer_id, currency, expires_at);
CREATE INDEX balance_entries_invoice ON balance_entries(merchant_account_id, invoice_id);

-- +goose Down
DROP TABLE balance_entries;
DROP TABLE hosted_tokens;
DROP TABLE payment_method_setup_sessions;
DROP TABLE payment_methods;
DROP TABLE billing_accounts;
DROP TABLE customers;
DROP TABLE coupons;
DROP TABLE prices;
DROP TABLE products;
