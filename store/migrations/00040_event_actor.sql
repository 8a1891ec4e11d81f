-- +goose Up
-- Who made each change (docs/events.md "Who acted"): the event's actor as JSON,
-- {"type":"api_key"|"operator"|"customer_portal"|"system","id":...}. Events written before have
-- none (NULL): their hash covers what they were, and the API shows them without an actor.
ALTER TABLE events ADD COLUMN actor TEXT;

-- +goose Down
ALTER TABLE events DROP COLUMN actor;
