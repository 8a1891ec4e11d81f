-- +goose Up
-- Credit notes. Lines (with their allocation over invoice lines) are kept as JSON: a credit note
-- never changes after it is issued.

CREATE TABLE credit_notes (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    number                TEXT NOT NULL,
    invoice_id            TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    currency              TEXT NOT NULL,
    reason                TEXT NOT NULL,
    description           TEXT,
    lines                 TEXT NOT NULL,
    credit_amount         BIGINT NOT NULL,
    refund_amount         BIGINT NOT NULL,
    offset_amount         BIGINT NOT NULL,
    total                 BIGINT NOT NULL,
    tax_total             BIGINT NOT NULL,
    tax_transaction_id    TEXT,
    balance_entry_id      TEXT,
    refund_ids            TEXT NOT NULL DEFAULT '[]',
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE UNIQUE INDEX credit_notes_number ON credit_notes(merchant_account_id, number);
CREATE INDEX credit_notes_invoice ON credit_notes(merchant_account_id, invoice_id, created_at);

-- The tax already reversed of each invoice line, so that crediting a line in full reverses
-- exactly its tax however the credits were split.
ALTER TABLE invoice_lines ADD COLUMN credited_tax BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE invoice_lines DROP COLUMN credited_tax;
DROP TABLE credit_notes;
