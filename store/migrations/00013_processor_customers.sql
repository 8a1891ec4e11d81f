-- +goose Up
-- Production payment methods live at the processor (docs/payments.md "Stripe"): a Remit customer
-- has a customer there, per merchant account and connected account; a setup session is a setup
-- started there (a Stripe SetupIntent), confirmed in the browser; a payment method keeps the
-- processor's customer it was saved for, which its charges name.
CREATE TABLE processor_customers (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    processor             TEXT NOT NULL,
    account               TEXT NOT NULL,         -- the connected account ('' for the platform's own)
    reference             TEXT NOT NULL,         -- the processor's customer (cus_...)
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, processor, account)
);
ALTER TABLE payment_method_setup_sessions ADD COLUMN processor_setup_ref TEXT;      -- seti_...
ALTER TABLE payment_method_setup_sessions ADD COLUMN processor_client_secret TEXT;  -- sealed at rest
ALTER TABLE payment_method_setup_sessions ADD COLUMN processor_customer TEXT;       -- the setup's processor customer
-- payment_methods.test_card holds the token the processor charges: a sandbox test token or the
-- processor's own (pm_...).
ALTER TABLE payment_methods ADD COLUMN processor_customer TEXT;

-- +goose Down
ALTER TABLE payment_methods DROP COLUMN processor_customer;
ALTER TABLE payment_method_setup_sessions DROP COLUMN processor_customer;
ALTER TABLE payment_method_setup_sessions DROP COLUMN processor_client_secret;
ALTER TABLE payment_method_setup_sessions DROP COLUMN processor_setup_ref;
DROP TABLE processor_customers;
