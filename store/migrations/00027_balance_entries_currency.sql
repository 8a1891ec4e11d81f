-- +goose Up
-- A customer's ledger entries in one currency, newest first, one index range a page
-- (GET /v1/customers/{customerId}/balance/entries?currency=; docs/catalog-and-balance.md). The
-- unfiltered pages read balance_entries_order, which has the same order.
CREATE INDEX balance_entries_currency ON balance_entries(merchant_account_id, customer_id, currency, created_at, seq);

-- +goose Down
DROP INDEX balance_entries_currency;
