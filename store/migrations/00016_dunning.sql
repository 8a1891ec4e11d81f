-- +goose Up
-- Dunning (docs/dunning.md): a billing account's own schedule and final action (NULL: the
-- deployment's REMIT_DUNNING_SCHEDULE), and each invoice's attempts and place in its schedule.
ALTER TABLE billing_accounts ADD COLUMN dunning TEXT;                          -- {"schedule":["3d",...],"finalAction":...}
ALTER TABLE invoices ADD COLUMN attempt_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN next_payment_attempt_at BIGINT;                -- merchant time of the next retry
ALTER TABLE invoices ADD COLUMN dunning_status TEXT NOT NULL DEFAULT 'none';    -- none | retrying | exhausted
ALTER TABLE invoices ADD COLUMN dunning_started_at BIGINT;                     -- the first failed automatic charge
ALTER TABLE invoices ADD COLUMN dunning_retries BIGINT NOT NULL DEFAULT 0;
UPDATE invoices SET attempt_count = (SELECT COUNT(*) FROM payments p WHERE p.merchant_account_id = invoices.merchant_account_id
    AND p.invoice_id = invoices.id AND p.method = 'card');

-- +goose Down
ALTER TABLE invoices DROP COLUMN dunning_retries;
ALTER TABLE invoices DROP COLUMN dunning_started_at;
ALTER TABLE invoices DROP COLUMN dunning_status;
ALTER TABLE invoices DROP COLUMN next_payment_attempt_at;
ALTER TABLE invoices DROP COLUMN attempt_count;
ALTER TABLE billing_accounts DROP COLUMN dunning;
