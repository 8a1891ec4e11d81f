-- +goose Up
-- A finalized invoice's hosted page (hostedInvoiceUrl, docs/documents.md): set at finalization
-- for every invoice, paid at once included, and kept when it is paid or voided (payment_url, the
-- pay route, is cleared then). Invoices finalized before take it from the payment URL they still
-- hold: the same token, without the trailing /pay. One already paid kept no URL, so has none.
ALTER TABLE invoices ADD COLUMN hosted_invoice_url TEXT;
UPDATE invoices SET hosted_invoice_url = REPLACE(payment_url, '/pay?token=', '?token=') WHERE payment_url IS NOT NULL;

-- +goose Down
ALTER TABLE invoices DROP COLUMN hosted_invoice_url;
