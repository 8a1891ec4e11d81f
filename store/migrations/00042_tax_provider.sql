-- +goose Up
-- The tax provider (REMIT_TAX_PROVIDER, docs/invoices-and-tax.md "Tax providers"): each tax
-- transaction says where its tax came from and, with Stripe Tax, the calculation it was made from
-- and Stripe's own transaction (a committed sale, or a reversal); a draft whose last pricing the
-- provider did not answer keeps its previous tax and says so (tax_stale). Rows before this
-- migration are the built-in table's.
ALTER TABLE tax_transactions ADD COLUMN provider TEXT NOT NULL DEFAULT 'builtin';
ALTER TABLE tax_transactions ADD COLUMN provider_calculation_id TEXT;
ALTER TABLE tax_transactions ADD COLUMN provider_transaction_id TEXT;
ALTER TABLE invoices ADD COLUMN tax_stale BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE invoices DROP COLUMN tax_stale;
ALTER TABLE tax_transactions DROP COLUMN provider_transaction_id;
ALTER TABLE tax_transactions DROP COLUMN provider_calculation_id;
ALTER TABLE tax_transactions DROP COLUMN provider;
