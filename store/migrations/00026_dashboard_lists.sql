-- +goose Up
-- The lists of the dashboard (docs/dashboard.md), newest first, one index range a page: the
-- account's customers, and a customer's invoices and payments (also the API's payment list
-- filtered by customer). The customer's invoice index gains the ID, which the keyset orders by; it
-- replaces invoices_customer, a prefix of it.
CREATE INDEX customers_list ON customers(merchant_account_id, created_at, id);
CREATE INDEX invoices_customer_list ON invoices(merchant_account_id, customer_id, created_at, id);
DROP INDEX invoices_customer;
CREATE INDEX payments_customer_list ON payments(merchant_account_id, customer_id, created_at, id);
-- An invoice's payments newest first (its dashboard page; the API's payment list by invoiceId).
CREATE INDEX payments_invoice_list ON payments(merchant_account_id, invoice_id, created_at, id);
-- An account's home (its charts and totals) and the lists filtered by status: revenue by day reads
-- the paid invoices of the period from one partial index that holds what it sums; the open totals
-- read the open invoices from another; the failed payments come newest first from a third.
CREATE INDEX invoices_paid ON invoices(merchant_account_id, paid_at, currency, amount_paid) WHERE paid_at IS NOT NULL;
CREATE INDEX invoices_open ON invoices(merchant_account_id, currency, amount_remaining, dunning_status) WHERE status = 'open';
CREATE INDEX payments_status_list ON payments(merchant_account_id, status, created_at, id);
-- The MRR chart reads the recurring lines whose period ends within or after its span.
CREATE INDEX invoice_lines_recurring ON invoice_lines(merchant_account_id, period_end) WHERE line_type = 'recurring';

-- +goose Down
DROP INDEX payments_invoice_list;
DROP INDEX invoice_lines_recurring;
DROP INDEX payments_status_list;
DROP INDEX invoices_open;
DROP INDEX invoices_paid;
DROP INDEX payments_customer_list;
CREATE INDEX invoices_customer ON invoices(merchant_account_id, customer_id, created_at);
DROP INDEX invoices_customer_list;
DROP INDEX customers_list;
