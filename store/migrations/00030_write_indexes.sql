-- +goose Up
-- Fewer index entries per write (docs/performance.md, "What PostgreSQL spends a write on"):
--   - events_undispatched holds only the events not yet dispatched, in the order they are claimed.
--     An event is dispatched right after it is chained, so the row version that records it adds
--     nothing to this index, and the index stays as small as the queue it serves.
--   - balance_entries_invoice holds only the entries that name an invoice (applications, top-ups);
--     grants, expiries and credit notes add nothing to it.
--   - balance_entries_lots is gone: a customer's lots in one currency are read from the range of
--     balance_entries_currency, which has the same leading columns, and their spending order (by
--     expiry, an expression) was sorted in the query either way.
DROP INDEX events_undispatched;
CREATE INDEX events_undispatched ON events(created_at, id) WHERE dispatched_at IS NULL;
DROP INDEX balance_entries_invoice;
CREATE INDEX balance_entries_invoice ON balance_entries(merchant_account_id, invoice_id) WHERE invoice_id IS NOT NULL;
DROP INDEX balance_entries_lots;

-- +goose Down
CREATE INDEX balance_entries_lots ON balance_entries(merchant_account_id, customer_id, currency, expires_at);
DROP INDEX balance_entries_invoice;
CREATE INDEX balance_entries_invoice ON balance_entries(merchant_account_id, invoice_id);
DROP INDEX events_undispatched;
CREATE INDEX events_undispatched ON events(dispatched_at, created_at);
