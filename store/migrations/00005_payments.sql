-- +goose Up
-- Payments: one intent per invoice, one payment per collection attempt, one receipt per successful
-- payment, daily settlements and their payouts.

CREATE TABLE payment_intents (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,          -- requires_payment_method | succeeded
    last_payment_error    TEXT,                   -- JSON remit.PaymentError
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE UNIQUE INDEX payment_intents_invoice ON payment_intents(merchant_account_id, invoice_id);

CREATE TABLE payments (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    payment_intent_id     TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    billing_account_id    TEXT NOT NULL,
    attempt               BIGINT NOT NULL,
    amount                BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,          -- succeeded | failed
    method                TEXT NOT NULL,          -- card | out_of_band
    payment_method_id     TEXT,
    brand                 TEXT,
    last4                 TEXT,
    source                TEXT NOT NULL,          -- finalize | api | portal
    failure_code          TEXT,
    failure_message       TEXT,
    fee_amount            BIGINT NOT NULL DEFAULT 0,
    amount_refunded       BIGINT NOT NULL DEFAULT 0,
    settlement_id         TEXT,
    processor_reference   TEXT,
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (amount > 0 AND fee_amount >= 0 AND amount_refunded >= 0 AND amount_refunded <= amount)
);
-- The attempt number is unique per invoice: two racing attempts cannot both be recorded.
CREATE UNIQUE INDEX payments_attempt ON payments(merchant_account_id, invoice_id, attempt);
-- At most one successful payment per invoice: an invoice is never charged twice.
CREATE UNIQUE INDEX payments_one_success ON payments(merchant_account_id, invoice_id) WHERE status = 'succeeded';

CREATE TABLE payment_receipts (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    number                TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    invoice_number        TEXT,
    customer_id           TEXT NOT NULL,
    customer_external_id  TEXT,
    billing_account_id    TEXT NOT NULL,
    payment_id            TEXT NOT NULL,
    payment_intent_id     TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    amount_refunded       BIGINT NOT NULL DEFAULT 0,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,          -- succeeded | partially_refunded | refunded
    method                TEXT NOT NULL,
    brand                 TEXT,
    last4                 TEXT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (amount_refunded >= 0 AND amount_refunded <= amount)
);
CREATE UNIQUE INDEX payment_receipts_number ON payment_receipts(merchant_account_id, number);
CREATE UNIQUE INDEX payment_receipts_payment ON payment_receipts(merchant_account_id, payment_id);
CREATE INDEX payment_receipts_list ON payment_receipts(merchant_account_id, created_at, id);
CREATE INDEX payment_receipts_customer ON payment_receipts(merchant_account_id, customer_id, created_at, id);
CREATE INDEX payment_receipts_external ON payment_receipts(merchant_account_id, customer_external_id, created_at, id);
CREATE INDEX payment_receipts_billing ON payment_receipts(merchant_account_id, billing_account_id, created_at, id);
CREATE INDEX payment_receipts_invoice ON payment_receipts(merchant_account_id, invoice_id, created_at, id);
CREATE INDEX payment_receipts_intent ON payment_receipts(merchant_account_id, payment_intent_id, created_at, id);
CREATE INDEX payment_receipts_status ON payment_receipts(merchant_account_id, status, created_at, id);

CREATE TABLE settlements (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,          -- open | closed | paid
    period_start          BIGINT NOT NULL,
    period_end            BIGINT NOT NULL,
    gross_amount          BIGINT NOT NULL DEFAULT 0,
    refund_amount         BIGINT NOT NULL DEFAULT 0,
    fee_amount            BIGINT NOT NULL DEFAULT 0,
    payment_count         BIGINT NOT NULL DEFAULT 0,
    refund_count          BIGINT NOT NULL DEFAULT 0,
    closed_at             BIGINT,
    paid_at               BIGINT,
    payout_id             TEXT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (gross_amount >= 0 AND refund_amount >= 0 AND fee_amount >= 0 AND payment_count >= 0 AND refund_count >= 0)
);
-- One settlement per merchant account, currency and day.
CREATE UNIQUE INDEX settlements_day ON settlements(merchant_account_id, currency, period_start);
CREATE INDEX settlements_list ON settlements(merchant_account_id, created_at, id);
CREATE INDEX settlements_status ON settlements(merchant_account_id, status, created_at, id);

CREATE TABLE payouts (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    settlement_id         TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,
    bank_account_last4    TEXT,
    arrival_date          BIGINT NOT NULL,
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE UNIQUE INDEX payouts_settlement ON payouts(merchant_account_id, settlement_id);

-- +goose Down
DROP TABLE payouts;
DROP TABLE settlements;
DROP TABLE payment_receipts;
DROP TABLE payments;
DROP TABLE payment_intents;
