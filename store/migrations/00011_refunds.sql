-- +goose Up
-- Refunds made by credit notes' refund buckets, one per payment refunded.
CREATE TABLE refunds (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    payment_id            TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    credit_note_id        TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,
    processor_reference   TEXT,
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    CHECK (amount > 0)
);
CREATE INDEX refunds_payment ON refunds(merchant_account_id, payment_id);
CREATE INDEX refunds_credit_note ON refunds(merchant_account_id, credit_note_id);

-- +goose Down
DROP TABLE refunds;
