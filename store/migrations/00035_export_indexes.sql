-- +goose Up
-- The exports (docs/exports.md) read a merchant account's refunds, credit notes and balance
-- entries in creation order: each is one range of these indexes, in order, so an export streams
-- its first row at once and sorts nothing (invoices, payments and the usage pre-aggregates have
-- theirs already). IF NOT EXISTS: the lists read the same ranges newest first, and may bring the
-- same index under the same name.
CREATE INDEX IF NOT EXISTS refunds_list ON refunds(merchant_account_id, created_at, id);
CREATE INDEX IF NOT EXISTS credit_notes_list ON credit_notes(merchant_account_id, created_at, id);
CREATE INDEX IF NOT EXISTS balance_entries_list ON balance_entries(merchant_account_id, created_at, seq);

-- +goose Down
DROP INDEX IF EXISTS balance_entries_list;
DROP INDEX IF EXISTS credit_notes_list;
DROP INDEX IF EXISTS refunds_list;
