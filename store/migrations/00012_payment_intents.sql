-- +goose Up
-- Payments as intents (docs/payments.md): an attempt is committed as processing before the
-- processor is called and settled in a second transaction; the reconciler finds the ones left
-- processing. The sandbox processor keeps its own charge records, as an external processor would.
ALTER TABLE payments ADD COLUMN processor TEXT NOT NULL DEFAULT 'sandbox';  -- sandbox | stripe | out_of_band | a connector's name
ALTER TABLE payments ADD COLUMN idempotency_ref TEXT;                       -- what the processor knows the attempt by
ALTER TABLE payments ADD COLUMN payment_method_token TEXT;                  -- the method charged, for a retried Charge
ALTER TABLE payments ADD COLUMN next_action_url TEXT;                       -- requires_action: where the customer acts
ALTER TABLE payments ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN reconcile_after BIGINT;                     -- real time: when the reconciler may ask the processor
ALTER TABLE invoices ADD COLUMN latest_payment_id TEXT;
ALTER TABLE merchant_accounts ADD COLUMN processor_account_id TEXT;             -- the connected account charged on behalf of (acct_...)
UPDATE payments SET processor = 'out_of_band' WHERE method = 'out_of_band';
UPDATE payments SET updated_at = created_at;
UPDATE invoices SET latest_payment_id = (SELECT p.id FROM payments p WHERE p.merchant_account_id = invoices.merchant_account_id
    AND p.invoice_id = invoices.id ORDER BY p.attempt DESC LIMIT 1);
-- At most one attempt in progress per invoice: a second pay while one is processing is refused.
CREATE UNIQUE INDEX payments_one_open ON payments(merchant_account_id, invoice_id) WHERE status IN ('processing', 'requires_action');
-- The reconciler's work: attempts left processing, the longest waiting first.
CREATE INDEX payments_processing ON payments(reconcile_after) WHERE status = 'processing';
-- A processor's webhook names the attempt by its ID alone.
CREATE INDEX payments_id ON payments(id);
-- The payments list, newest first.
CREATE INDEX payments_list ON payments(merchant_account_id, created_at, id);

CREATE TABLE sandbox_charges (
    idempotency_ref  TEXT NOT NULL PRIMARY KEY,
    reference        TEXT NOT NULL,
    amount           BIGINT NOT NULL,
    currency         TEXT NOT NULL,
    payment_method   TEXT NOT NULL,
    status           TEXT NOT NULL,          -- succeeded | failed | requires_action
    failure_code     TEXT,
    fee              BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);

-- +goose Down
DROP TABLE sandbox_charges;
DROP INDEX payments_list;
DROP INDEX payments_id;
DROP INDEX payments_processing;
DROP INDEX payments_one_open;
