-- +goose Up
-- Indexes of the money checks (docs/verification.md, store/verify_money.go): what was taken from
-- each lot, the credit_note entries of each credit note, and the payments of each settlement, found
-- by index lookups instead of scans. Partial: only the rows that name something are indexed.
CREATE INDEX balance_entries_source ON balance_entries(merchant_account_id, customer_id, source_entry_id)
    WHERE source_entry_id IS NOT NULL;
CREATE INDEX balance_entries_credit_note ON balance_entries(merchant_account_id, credit_note_id)
    WHERE credit_note_id IS NOT NULL;
CREATE INDEX payments_settlement ON payments(merchant_account_id, settlement_id)
    WHERE settlement_id IS NOT NULL;

-- +goose Down
DROP INDEX payments_settlement;
DROP INDEX balance_entries_credit_note;
DROP INDEX balance_entries_source;
