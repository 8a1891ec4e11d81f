-- +goose Up
-- The subscription lifecycle (docs/quotes-and-subscriptions.md): trials, cancel at period end or
-- now, pause and resume. Status is trialing | active | past_due | paused | canceled.
ALTER TABLE subscriptions ADD COLUMN trial_end BIGINT;      -- merchant time the trial ends (trialing)
ALTER TABLE subscriptions ADD COLUMN cancel_at BIGINT;      -- cancel at period end: when it ends
ALTER TABLE subscriptions ADD COLUMN canceled_at BIGINT;
ALTER TABLE subscriptions ADD COLUMN paused_at BIGINT;
ALTER TABLE subscriptions ADD COLUMN pending_prorations TEXT NOT NULL DEFAULT '[]';  -- charges for the next renewal invoice
CREATE INDEX subscriptions_status ON subscriptions(merchant_account_id, status, created_at, id);

-- +goose Down
DROP INDEX subscriptions_status;
ALTER TABLE subscriptions DROP COLUMN pending_prorations;
ALTER TABLE subscriptions DROP COLUMN paused_at;
ALTER TABLE subscriptions DROP COLUMN canceled_at;
ALTER TABLE subscriptions DROP COLUMN cancel_at;
ALTER TABLE subscriptions DROP COLUMN trial_end;
