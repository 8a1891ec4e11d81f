-- +goose Up
-- Refunds outside the store transaction (docs/payments.md "Refunds"): a credit note's refund of a
-- card payment is committed pending, the processor is called after, and the outcome is recorded in
-- a second transaction; the reconciler sends the ones left pending. The sandbox processor keeps
-- its own refund records, as an external processor would.
ALTER TABLE refunds ADD COLUMN processor TEXT;              -- the processor of the payment refunded (NULL: out of band)
ALTER TABLE refunds ADD COLUMN charge_reference TEXT;       -- the payment's processor reference
ALTER TABLE refunds ADD COLUMN failure_code TEXT;
ALTER TABLE refunds ADD COLUMN failure_message TEXT;
ALTER TABLE refunds ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN reconcile_after BIGINT;      -- real time: when the reconciler may send it again
UPDATE refunds SET updated_at = created_at;
CREATE INDEX refunds_pending ON refunds(reconcile_after) WHERE status = 'pending';

CREATE TABLE sandbox_refunds (
    idempotency_ref   TEXT NOT NULL PRIMARY KEY,
    reference         TEXT NOT NULL,
    charge_reference  TEXT NOT NULL,
    amount            BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    created_at        BIGINT NOT NULL
);

-- +goose Down
DROP TABLE sandbox_refunds;
DROP INDEX refunds_pending;
ALTER TABLE refunds DROP COLUMN reconcile_after;
ALTER TABLE refunds DROP COLUMN updated_at;
ALTER TABLE refunds DROP COLUMN failure_message;
ALTER TABLE refunds DROP COLUMN failure_code;
ALTER TABLE refunds DROP COLUMN charge_reference;
ALTER TABLE refunds DROP COLUMN processor;
