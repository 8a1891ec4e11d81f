-- +goose Up
-- The general ledger (docs/ledger.md): one balanced journal entry per money movement, per merchant
-- account and currency, posted in the movement's transaction. A movement posts once:
-- journal_entries_source makes a second posting of the same source (a replay, the backfill) a
-- duplicate. Lines carry the entry's currency and time so balances (GET /v1/ledger/balances) and
-- an account's entries are one index range. revenue_schedules holds each finalized subscription
-- line's revenue still deferred, which the daily recognition job moves to revenue.
CREATE TABLE journal_entries (
    merchant_account_id TEXT NOT NULL,
    id                  TEXT NOT NULL,
    currency            TEXT NOT NULL,
    posted_at           BIGINT NOT NULL,
    source_type         TEXT NOT NULL,
    source_id           TEXT NOT NULL,
    invoice_id          TEXT,
    description         TEXT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE UNIQUE INDEX journal_entries_source ON journal_entries(merchant_account_id, source_type, source_id, currency);
CREATE INDEX journal_entries_posted ON journal_entries(merchant_account_id, posted_at, id);
CREATE INDEX journal_entries_invoice ON journal_entries(merchant_account_id, invoice_id);

CREATE TABLE journal_lines (
    merchant_account_id TEXT NOT NULL,
    entry_id            TEXT NOT NULL,
    line_no             INTEGER NOT NULL,
    account             TEXT NOT NULL,
    currency            TEXT NOT NULL,
    posted_at           BIGINT NOT NULL,
    debit               BIGINT NOT NULL,
    credit              BIGINT NOT NULL,
    price_id            TEXT NOT NULL DEFAULT '',  -- revenue and deferred revenue lines: the price (the revenue report)
    PRIMARY KEY (merchant_account_id, entry_id, line_no)
);
CREATE INDEX journal_lines_account ON journal_lines(merchant_account_id, account, posted_at, entry_id);

CREATE TABLE revenue_schedules (
    merchant_account_id TEXT NOT NULL,
    invoice_line_id     TEXT NOT NULL,
    invoice_id          TEXT NOT NULL,
    price_id            TEXT NOT NULL,
    currency            TEXT NOT NULL,
    period_start        BIGINT NOT NULL,
    period_end          BIGINT NOT NULL,
    amount              BIGINT NOT NULL,
    deferred            BIGINT NOT NULL,
    recognized_through  BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, invoice_line_id)
);
CREATE INDEX revenue_schedules_invoice ON revenue_schedules(merchant_account_id, invoice_id);
CREATE INDEX revenue_schedules_due ON revenue_schedules(merchant_account_id, recognized_through);

-- +goose Down
DROP TABLE revenue_schedules;
DROP TABLE journal_lines;
DROP TABLE journal_entries;
