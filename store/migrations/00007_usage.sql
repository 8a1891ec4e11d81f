-- +goose Up
-- Usage metering: usage events (append-only, deduplicated by eventId within the merchant account),
-- a running total per (merchant account, customer, meter) updated with every event so that
-- threshold evaluation reads one row, hourly sums so that a period sum reads one row per hour
-- plus the raw events of at most two partial edge hours, and usage thresholds.

CREATE TABLE usage_events (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,           -- the caller's eventId
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    quantity              BIGINT NOT NULL,
    ts                    BIGINT NOT NULL,         -- when the usage happened (merchant clock)
    created_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id),
    CHECK (quantity >= 0)
);
-- Covering index of the edge-hour sums (quantity is the last column, so no table lookup).
CREATE INDEX usage_events_period ON usage_events(merchant_account_id, customer_id, meter_id, ts, quantity);

-- Derived from usage_events, in the same transaction as each event. The row is the lock that
-- serializes concurrent events and threshold creation for one customer and meter.
-- next_threshold is a lower bound of the smallest threshold still to cross (active, not crossed)
-- of this customer and meter, NULL when there is none: an event whose new total stays below it
-- evaluates nothing more. Creating a threshold lowers it, crossing recomputes it, archiving leaves
-- it (a bound that is too low only costs one needless evaluation, which recomputes it).
CREATE TABLE usage_totals (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    total                 BIGINT NOT NULL,
    event_count           BIGINT NOT NULL,
    next_threshold        BIGINT,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, meter_id),
    CHECK (total >= 0)
);

-- Derived from usage_events: the sum of quantity per UTC hour of ts (hour_start in Unix
-- microseconds, a multiple of 3,600,000,000).
CREATE TABLE usage_hourly (
    merchant_account_id   TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    hour_start            BIGINT NOT NULL,
    quantity              BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, customer_id, meter_id, hour_start)
);

CREATE TABLE usage_thresholds (
    merchant_account_id   TEXT NOT NULL,
    id                    TEXT NOT NULL,
    customer_id           TEXT NOT NULL,
    meter_id              TEXT NOT NULL,
    threshold             BIGINT NOT NULL,
    status                TEXT NOT NULL,           -- active | archived
    crossed_at            BIGINT,                  -- set once, when the total first reached threshold
    archived_at           BIGINT,
    metadata              TEXT NOT NULL DEFAULT '{}',
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (merchant_account_id, id),
    FOREIGN KEY (merchant_account_id, customer_id) REFERENCES customers(merchant_account_id, id),
    CHECK (threshold >= 1)
);
-- The thresholds still to be evaluated: an event reads only those, lowest first.
CREATE INDEX usage_thresholds_pending ON usage_thresholds(merchant_account_id, customer_id, meter_id, threshold)
    WHERE status = 'active' AND crossed_at IS NULL;

-- +goose Down
DROP TABLE usage_thresholds;
DROP TABLE usage_hourly;
DROP TABLE usage_totals;
DROP TABLE usage_events;
