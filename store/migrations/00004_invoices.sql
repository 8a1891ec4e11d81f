-- +goose Up
-- Invoices, their lines, and tax transactions.

CREATE TABLE invoices (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    number                TEXT,
    customer_id           TEXT NOT NULL,
    billing_account_id    TEXT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,
    collection_method     TEXT NOT NULL,
    subscription_id       TEXT,
    quote_id              TEXT,
    period_start          BIGINT,
    period_end            BIGINT,
    coupon_ids            TEXT NOT NULL DEFAULT '[]',
    subtotal              BIGINT NOT NULL DEFAULT 0,
    discount_total        BIGINT NOT NULL DEFAULT 0,
    prepaid_applied       BIGINT NOT NULL DEFAULT 0,
    tax_total             BIGINT NOT NULL DEFAULT 0,
    total                 BIGINT NOT NULL DEFAULT 0,
    amount_due            BIGINT NOT NULL DEFAULT 0,
    amount_paid           BIGINT NOT NULL DEFAULT 0,
    amount_remaining      BIGINT NOT NULL DEFAULT 0,
    credited_total        BIGINT NOT NULL DEFAULT 0,
    offset_total          BIGINT NOT NULL DEFAULT 0,
    refunded_total        BIGINT NOT NULL DEFAULT 0,
    tax_transaction_id    TEXT,
    payment_url           TEXT,
    auto_finalize_at      BIGINT,
    last_payment_error    TEXT,
    finalized_by_ref      TEXT,
    finalized_at          BIGINT,
    paid_at               BIGINT,
    voided_at             BIGINT,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (amount_remaining >= 0 AND amount_paid >= 0 AND credited_total >= 0)
);
CREATE UNIQUE INDEX invoices_number ON invoices(merchant_account_id, number);
CREATE INDEX invoices_list ON invoices(merchant_account_id, created_at, id);
CREATE INDEX invoices_customer ON invoices(merchant_account_id, customer_id, created_at);
CREATE INDEX invoices_subscription ON invoices(merchant_account_id, subscription_id);

CREATE TABLE invoice_lines (
    merchant_account_id   TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    id                    TEXT NOT NULL,
    position              INTEGER NOT NULL,
    line_type             TEXT NOT NULL,
    price_id              TEXT NOT NULL,
    price_type            TEXT NOT NULL,
    meter_id              TEXT,
    description           TEXT NOT NULL,
    quantity              BIGINT NOT NULL,
    unit_amount           BIGINT NOT NULL,
    unit_override         BOOLEAN NOT NULL DEFAULT FALSE,
    amount                BIGINT NOT NULL,
    discount_amount       BIGINT NOT NULL DEFAULT 0,
    prepaid_applied       BIGINT NOT NULL DEFAULT 0,
    tax_amount            BIGINT NOT NULL DEFAULT 0,
    credited_amount       BIGINT NOT NULL DEFAULT 0,
    taxes                 TEXT NOT NULL DEFAULT '[]',
    period_start          BIGINT,
    period_end            BIGINT,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, invoice_id) REFERENCES invoices(merchant_account_id, id),
    CHECK (credited_amount >= 0)
);
CREATE INDEX invoice_lines_invoice ON invoice_lines(merchant_account_id, invoice_id, position);

CREATE TABLE tax_transactions (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    status                TEXT NOT NULL,
    type                  TEXT NOT NULL,
    source_document_id    TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    currency              TEXT NOT NULL,
    lines                 TEXT NOT NULL DEFAULT '[]',
    total_tax             BIGINT NOT NULL,
    tax_exempt            BOOLEAN NOT NULL DEFAULT FALSE,
    committed_at          BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX tax_transactions_list ON tax_transactions(merchant_account_id, created_at, id);
CREATE INDEX tax_transactions_status ON tax_transactions(merchant_account_id, status, created_at, id);
CREATE INDEX tax_transactions_source ON tax_transactions(merchant_account_id, source_document_id, created_at, id);

-- +goose Down
DROP TABLE tax_transactions;
DROP TABLE invoice_lines;
DROP TABLE invoices;
