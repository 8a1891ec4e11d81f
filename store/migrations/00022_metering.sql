-- +goose Up
-- Metering in depth (docs/usage.md): meters with an aggregation, usage event properties, voided
-- usage events, the pre-aggregates every aggregation answers from, tiered and package prices, and
-- the trail of usage corrections on invoice lines and credit notes.

-- A meter. A meter used before it is created has a row too, written by its first usage event
-- (implicit = TRUE, aggregation sum), so that creating or changing it later and recording usage
-- lock the same row. has_events is set by the first event: from then on the aggregation is fixed.
CREATE TABLE meters (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    name                  TEXT,
    aggregation           TEXT NOT NULL,           -- sum | count | max | unique_count | latest
    unique_property       TEXT,                    -- unique_count only
    implicit              BOOLEAN NOT NULL,        -- created by usage, not by POST /v1/meters
    has_events            BOOLEAN NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id)
);
CREATE INDEX meters_list ON meters(merchant_account_id, created_at, id) WHERE implicit = FALSE;

-- Every meter that has usage already is a sum meter that has events.
INSERT INTO meters (merchant_account_id, id, name, aggregation, unique_property, implicit, has_events, created_at, updated_at)
SELECT merchant_account_id, meter_id, NULL, 'sum', NULL, TRUE, TRUE, MIN(updated_at), MIN(updated_at)
FROM usage_totals GROUP BY merchant_account_id, meter_id;

-- Properties (JSON object, string to string), the value of the meter's unique property, and the
-- void. A voided event leaves every total; its row stays, as the record.
ALTER TABLE usage_events ADD COLUMN properties TEXT;
ALTER TABLE usage_events ADD COLUMN unique_value TEXT;
ALTER TABLE usage_events ADD COLUMN voided_at BIGINT;
ALTER TABLE usage_events ADD COLUMN corrections TEXT;
-- The order in which events of one customer and meter were counted: the running total's seq
-- (below) as the event left it. A finalized usage line records the seq it read (invoice_lines.
-- usage_seq): it billed exactly the events with a seq up to it.
ALTER TABLE usage_events ADD COLUMN seq BIGINT;
-- The period reads see live events only: the covering index holds only those.
DROP INDEX usage_events_period;
CREATE INDEX usage_events_period ON usage_events(merchant_account_id, customer_id, meter_id, ts, quantity) WHERE voided_at IS NULL;

-- The hourly pre-aggregate keeps what every aggregation needs: the sum (quantity; kept for sum
-- meters only, so that another meter's quantities never overflow it), the number of events, the
-- largest quantity, and the latest event (by timestamp, then seq: the one counted last) with its
-- quantity. (The backfill's subqueries name voided_at IS NULL, true of every existing event, so
-- that they read the period index, which holds live events only, instead of scanning the table.)
ALTER TABLE usage_hourly ADD COLUMN event_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN max_quantity BIGINT;
ALTER TABLE usage_hourly ADD COLUMN latest_ts BIGINT;
ALTER TABLE usage_hourly ADD COLUMN latest_seq BIGINT;
ALTER TABLE usage_hourly ADD COLUMN latest_quantity BIGINT;
UPDATE usage_hourly SET
    event_count = (SELECT COUNT(*) FROM usage_events e WHERE e.merchant_account_id = usage_hourly.merchant_account_id
        AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL
        AND e.ts >= usage_hourly.hour_start AND e.ts < usage_hourly.hour_start + 3600000000),
    max_quantity = (SELECT MAX(quantity) FROM usage_events e WHERE e.merchant_account_id = usage_hourly.merchant_account_id
        AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL
        AND e.ts >= usage_hourly.hour_start AND e.ts < usage_hourly.hour_start + 3600000000),
    latest_ts = (SELECT MAX(e.ts) FROM usage_events e WHERE e.merchant_account_id = usage_hourly.merchant_account_id
        AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL
        AND e.ts >= usage_hourly.hour_start AND e.ts < usage_hourly.hour_start + 3600000000);
UPDATE usage_hourly SET
    latest_quantity = (SELECT MAX(e.quantity) FROM usage_events e WHERE e.merchant_account_id = usage_hourly.merchant_account_id
        AND e.customer_id = usage_hourly.customer_id AND e.meter_id = usage_hourly.meter_id AND e.voided_at IS NULL AND e.ts = usage_hourly.latest_ts);

-- The running total (thresholds compare it) is the meter's aggregation over the whole history; a
-- latest meter's total is the quantity of its latest event, which these name. seq counts the
-- events of the customer and meter (usage_events.seq above).
ALTER TABLE usage_totals ADD COLUMN latest_ts BIGINT;
ALTER TABLE usage_totals ADD COLUMN latest_seq BIGINT;
ALTER TABLE usage_totals ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;

-- unique_count: the distinct values of each hour (with how many live events carry each, so that a
-- void knows when a value leaves the hour), and of the customer's whole history (for the total).
CREATE TABLE usage_unique_hourly (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    hour_start            BIGINT NOT NULL,
    value                 TEXT NOT NULL,
    events                BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, meter_id, hour_start, value)
);
CREATE TABLE usage_unique_values (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    value                 TEXT NOT NULL,
    events                BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, meter_id, value)
);
-- The edge hours of a unique_count period read the raw events' values through the period index
-- (at most two hours of events); no index of their own, which would cost every such event a write.

-- Tiered and package prices (JSON: tiers [{upTo, unitAmount, flatAmount}], transform {divideBy, round}).
ALTER TABLE prices ADD COLUMN tiers TEXT;
ALTER TABLE prices ADD COLUMN tiers_mode TEXT;
ALTER TABLE prices ADD COLUMN transform_quantity TEXT;

-- Invoice lines: how a tiered line was priced, the usage it billed (before packages), and the
-- corrections made to it since it was finalized.
ALTER TABLE invoice_lines ADD COLUMN tier_breakdown TEXT;
ALTER TABLE invoice_lines ADD COLUMN usage_quantity BIGINT;
ALTER TABLE invoice_lines ADD COLUMN usage_corrections TEXT;
ALTER TABLE invoice_lines ADD COLUMN usage_seq BIGINT;

-- A credit note issued for a usage correction names the voided usage event.
ALTER TABLE credit_notes ADD COLUMN usage_event_id TEXT;

-- +goose Down
ALTER TABLE credit_notes DROP COLUMN usage_event_id;
ALTER TABLE invoice_lines DROP COLUMN usage_seq;
ALTER TABLE invoice_lines DROP COLUMN usage_corrections;
ALTER TABLE invoice_lines DROP COLUMN usage_quantity;
ALTER TABLE invoice_lines DROP COLUMN tier_breakdown;
ALTER TABLE prices DROP COLUMN transform_quantity;
ALTER TABLE prices DROP COLUMN tiers_mode;
ALTER TABLE prices DROP COLUMN tiers;
DROP TABLE usage_unique_values;
DROP TABLE usage_unique_hourly;
ALTER TABLE usage_totals DROP COLUMN seq;
ALTER TABLE usage_totals DROP COLUMN latest_seq;
ALTER TABLE usage_totals DROP COLUMN latest_ts;
ALTER TABLE usage_hourly DROP COLUMN latest_quantity;
ALTER TABLE usage_hourly DROP COLUMN latest_seq;
ALTER TABLE usage_hourly DROP COLUMN latest_ts;
ALTER TABLE usage_hourly DROP COLUMN max_quantity;
ALTER TABLE usage_hourly DROP COLUMN event_count;
DROP INDEX usage_events_period;
CREATE INDEX usage_events_period ON usage_events(merchant_account_id, customer_id, meter_id, ts, quantity);
ALTER TABLE usage_events DROP COLUMN seq;
ALTER TABLE usage_events DROP COLUMN corrections;
ALTER TABLE usage_events DROP COLUMN voided_at;
ALTER TABLE usage_events DROP COLUMN unique_value;
ALTER TABLE usage_events DROP COLUMN properties;
DROP TABLE meters;
