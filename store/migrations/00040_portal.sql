-- +goose Up
-- The customer portal (docs/customer-portal.md) and who acted (docs/events.md "Who acted").
--
-- An event's actor as JSON, {"type":"api_key"|"operator"|"customer_portal"|"system","id":...}.
-- Events written before have none (NULL): their hash covers what they were, and the API shows
-- them without an actor.
ALTER TABLE events ADD COLUMN actor TEXT;

-- A portal session made by the API: its one-time URL's token (hash), usable once before
-- expires_at; used_at is set when the browser opened it. data is the session as the API answers
-- it (returnUrl, locale, flow).
CREATE TABLE customer_portal_sessions (
    id TEXT PRIMARY KEY,
    merchant_account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    data TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT,
    created_at BIGINT NOT NULL
);

-- A merchant account's portal configuration (data: the configuration as the API answers it);
-- an account without a row has the defaults.
CREATE TABLE customer_portal_configurations (
    merchant_account_id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE customer_portal_configurations;
DROP TABLE customer_portal_sessions;
ALTER TABLE events DROP COLUMN actor;
