-- +goose Up
-- Every collection of the API is a list (docs/api-conventions.md "Pagination"): newest first, a
-- page one range of an index whose last columns are (created_at, id), so that a filtered page, its
-- createdFrom/createdTo range and its keyset position are one range, at any depth and however many
-- rows other filters hold. One index per list and per filter; an index that was a prefix of its
-- list's is replaced by it (prices_meter, billing_accounts_customer, payment_methods_customer,
-- invoices_subscription, credit_notes_invoice), so that what read the prefix reads the new one.
CREATE INDEX customers_email_list ON customers(merchant_account_id, email, created_at, id);

CREATE INDEX prices_list ON prices(merchant_account_id, created_at, id);
CREATE INDEX prices_type_list ON prices(merchant_account_id, price_type, created_at, id);
CREATE INDEX prices_meter_list ON prices(merchant_account_id, meter_id, created_at, id);
DROP INDEX prices_meter;
CREATE INDEX prices_currency_list ON prices(merchant_account_id, currency, created_at, id);
CREATE INDEX prices_product_list ON prices(merchant_account_id, product_id, created_at, id);

CREATE INDEX coupons_list ON coupons(merchant_account_id, created_at, id);

CREATE INDEX billing_accounts_list ON billing_accounts(merchant_account_id, created_at, id);
CREATE INDEX billing_accounts_customer_list ON billing_accounts(merchant_account_id, customer_id, created_at, id);
DROP INDEX billing_accounts_customer;

CREATE INDEX payment_methods_customer_list ON payment_methods(merchant_account_id, customer_id, created_at, id);
DROP INDEX payment_methods_customer;

CREATE INDEX quotes_customer_list ON quotes(merchant_account_id, customer_id, created_at, id);
CREATE INDEX quotes_status_list ON quotes(merchant_account_id, status, created_at, id);

CREATE INDEX invoices_status_list ON invoices(merchant_account_id, status, created_at, id);
CREATE INDEX invoices_billing_account_list ON invoices(merchant_account_id, billing_account_id, created_at, id);
CREATE INDEX invoices_subscription_list ON invoices(merchant_account_id, subscription_id, created_at, id);
DROP INDEX invoices_subscription;

CREATE INDEX credit_notes_list ON credit_notes(merchant_account_id, created_at, id);
CREATE INDEX credit_notes_invoice_list ON credit_notes(merchant_account_id, invoice_id, created_at, id);
DROP INDEX credit_notes_invoice;
CREATE INDEX credit_notes_customer_list ON credit_notes(merchant_account_id, customer_id, created_at, id);

-- Usage events are listed by when the usage happened (ts), the range createdFrom/createdTo bounds.
-- A voided event stays in these indexes: voids are rare, so leaving them out of a page costs little.
CREATE INDEX usage_events_list ON usage_events(merchant_account_id, ts, id);
CREATE INDEX usage_events_customer_list ON usage_events(merchant_account_id, customer_id, ts, id);
CREATE INDEX usage_events_meter_list ON usage_events(merchant_account_id, meter_id, ts, id);

CREATE INDEX usage_thresholds_list ON usage_thresholds(merchant_account_id, created_at, id);
CREATE INDEX usage_thresholds_customer_list ON usage_thresholds(merchant_account_id, customer_id, created_at, id);
CREATE INDEX usage_thresholds_meter_list ON usage_thresholds(merchant_account_id, meter_id, created_at, id);
CREATE INDEX usage_thresholds_status_list ON usage_thresholds(merchant_account_id, status, created_at, id);

CREATE INDEX merchant_accounts_list ON merchant_accounts(organization_id, environment, created_at, id);

-- +goose Down
DROP INDEX merchant_accounts_list;
DROP INDEX usage_thresholds_status_list;
DROP INDEX usage_thresholds_meter_list;
DROP INDEX usage_thresholds_customer_list;
DROP INDEX usage_thresholds_list;
DROP INDEX usage_events_meter_list;
DROP INDEX usage_events_customer_list;
DROP INDEX usage_events_list;
CREATE INDEX credit_notes_invoice ON credit_notes(merchant_account_id, invoice_id, created_at);
DROP INDEX credit_notes_customer_list;
DROP INDEX credit_notes_invoice_list;
DROP INDEX credit_notes_list;
CREATE INDEX invoices_subscription ON invoices(merchant_account_id, subscription_id);
DROP INDEX invoices_subscription_list;
DROP INDEX invoices_billing_account_list;
DROP INDEX invoices_status_list;
DROP INDEX quotes_status_list;
DROP INDEX quotes_customer_list;
CREATE INDEX payment_methods_customer ON payment_methods(merchant_account_id, customer_id);
DROP INDEX payment_methods_customer_list;
CREATE INDEX billing_accounts_customer ON billing_accounts(merchant_account_id, customer_id);
DROP INDEX billing_accounts_customer_list;
DROP INDEX billing_accounts_list;
DROP INDEX coupons_list;
DROP INDEX prices_product_list;
DROP INDEX prices_currency_list;
CREATE INDEX prices_meter ON prices(merchant_account_id, meter_id);
DROP INDEX prices_meter_list;
DROP INDEX prices_type_list;
DROP INDEX prices_list;
DROP INDEX customers_email_list;
