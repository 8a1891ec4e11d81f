-- +goose Up
-- The dashboard's list of customers, newest first, one index range a page (docs/dashboard.md).
CREATE INDEX customers_list ON customers(merchant_account_id, created_at, id);

-- +goose Down
DROP INDEX customers_list;
