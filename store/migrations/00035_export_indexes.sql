-- +goose Up
-- The exports (docs/exports.md) read a merchant account's refunds, credit notes and balance
-- entries in creation order: each is one range of these indexes, in order, so an export streams
-- its first row at once and sorts nothing (invoices, payments and the usage pre-aggregates have
-- theirs already). IF NOT EXISTS: the lists read the same ranges newest first, and may bring the
-- same index under the same name. balance_entries_list carries the customer and the currency too:
-- the export's filters are then read in the index, and a customer's own pages (which
-- balance_entries_order and balance_entries_currency serve) never find it the narrower index to walk.
CREATE INDEX IF NOT EXISTS refunds_list ON refunds(merchant_account_id, created_at, id);
CREATE INDEX IF NOT EXISTS credit_notes_list ON credit_notes(merchant_account_id, created_at, id);
CREATE INDEX IF NOT EXISTS balance_entries_list ON balance_entries(merchant_account_id, created_at, seq, customer_id, currency);

-- +goose Down
DROP INDEX IF EXISTS balance_entries_list;
DROP INDEX IF EXISTS credit_notes_list;
DROP INDEX IF EXISTS refunds_list;
