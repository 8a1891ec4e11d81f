-- +goose Up
-- The actions of a resource's whole life (docs/events.md "Rotating the signing secret",
-- docs/payments.md "Detaching a payment method", docs/quotes-and-subscriptions.md "Canceling a
-- quote"):
--   - a webhook endpoint's rotated secret: previous_secret is the secret the last rotation
--     replaced, sealed like secret (app/sealing.go), which signs deliveries beside the new one
--     until previous_secret_expires_at (merchant clock); NULL when there is none;
--   - a payment method detached from its customer (never charged or made a default again);
--   - a quote canceled.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at BIGINT;
ALTER TABLE payment_methods ADD COLUMN detached_at BIGINT;
ALTER TABLE quotes ADD COLUMN canceled_at BIGINT;

-- +goose Down
ALTER TABLE quotes DROP COLUMN canceled_at;
ALTER TABLE payment_methods DROP COLUMN detached_at;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_expires_at;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret;
