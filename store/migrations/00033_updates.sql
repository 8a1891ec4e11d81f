-- +goose Up
-- Updates (PATCH, docs/api-conventions.md "Updates"):
--   - a price's nickname, and whether a price or a coupon is active (false: archived, named by no
--     new quote, invoice or subscription item; existing rows stay active);
--   - an invoice's payment terms (days_until_due; due_date, set at finalization) and memo;
--   - the parties a finalized invoice was issued to, as JSON (remit.CustomerParty,
--     remit.MerchantParty): written at finalization, or, for an invoice finalized before this
--     migration, just before an update of its customer or merchant account changes them. NULL:
--     the documents read the customer and the merchant account as they are.
ALTER TABLE prices ADD COLUMN nickname TEXT;
ALTER TABLE prices ADD COLUMN active BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE coupons ADD COLUMN active BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE invoices ADD COLUMN days_until_due BIGINT;
ALTER TABLE invoices ADD COLUMN due_date BIGINT;
ALTER TABLE invoices ADD COLUMN memo TEXT;
ALTER TABLE invoices ADD COLUMN customer_party TEXT;
ALTER TABLE invoices ADD COLUMN merchant_party TEXT;
-- The finalized invoices without their parties (only those finalized before this migration, until
-- an update freezes them): an update finds them without reading the others.
CREATE INDEX invoices_customer_party_unset ON invoices(merchant_account_id, customer_id) WHERE customer_party IS NULL AND status <> 'draft';
CREATE INDEX invoices_merchant_party_unset ON invoices(merchant_account_id) WHERE merchant_party IS NULL AND status <> 'draft';
-- The lists of active (or archived) prices and coupons, newest first (GET /v1/prices?active=).
CREATE INDEX prices_active_list ON prices(merchant_account_id, active, created_at, id);
CREATE INDEX coupons_active_list ON coupons(merchant_account_id, active, created_at, id);

-- +goose Down
DROP INDEX coupons_active_list;
DROP INDEX prices_active_list;
DROP INDEX invoices_merchant_party_unset;
DROP INDEX invoices_customer_party_unset;
ALTER TABLE invoices DROP COLUMN merchant_party;
ALTER TABLE invoices DROP COLUMN customer_party;
ALTER TABLE invoices DROP COLUMN memo;
ALTER TABLE invoices DROP COLUMN due_date;
ALTER TABLE invoices DROP COLUMN days_until_due;
ALTER TABLE coupons DROP COLUMN active;
ALTER TABLE prices DROP COLUMN active;
ALTER TABLE prices DROP COLUMN nickname;
