-- +goose Up
-- Customer e-mail (docs/email.md): the customer's language, and the e-mail log. A message is
-- recorded in the transaction of the change that causes it (queued, or skipped with the reason),
-- then sent by the e-mail worker, which claims due messages with a lease like webhook deliveries.
ALTER TABLE customers ADD COLUMN preferred_locale TEXT NOT NULL DEFAULT 'en';

CREATE TABLE emails (
    merchant_account_id  TEXT NOT NULL,
    id                   TEXT NOT NULL,                 -- em_...
    environment          TEXT NOT NULL,
    type                 TEXT NOT NULL,
    customer_id          TEXT NOT NULL,
    invoice_id           TEXT,
    to_address           TEXT,
    from_name            TEXT NOT NULL,
    subject              TEXT NOT NULL,
    locale               TEXT NOT NULL,
    text_body            TEXT NOT NULL,
    html_body            TEXT NOT NULL,
    attachment           TEXT,                          -- {"kind","documentId","fileName"}
    status               TEXT NOT NULL,                 -- queued | sent | failed | skipped
    status_reason        TEXT,
    attempts             INTEGER NOT NULL DEFAULT 0,
    -- Real time of the next send attempt while queued; while an attempt is in flight, the end of
    -- the worker's lease (a worker that dies mid-attempt leaves the message due again then).
    next_attempt_at      BIGINT,
    lease_owner          TEXT NOT NULL DEFAULT '',
    sent_at              BIGINT,                        -- merchant time the SMTP server accepted it
    created_at           BIGINT NOT NULL,               -- merchant time
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX emails_list ON emails(merchant_account_id, created_at, id);
CREATE INDEX emails_customer ON emails(merchant_account_id, customer_id, created_at, id);
CREATE INDEX emails_invoice ON emails(merchant_account_id, invoice_id, created_at, id);
CREATE INDEX emails_due ON emails(status, next_attempt_at);

-- +goose Down
DROP TABLE emails;
ALTER TABLE customers DROP COLUMN preferred_locale;
