-- +goose Up
-- Merchant accounts: onboarding, secrets kept apart from the profile, and claims of sub-merchants
-- provisioned by a platform into a fresh organization.

-- onboarding: {"submittedAt","submittedByType","decidedAt","agreement":{...}} as JSON.
ALTER TABLE merchant_accounts ADD COLUMN onboarding TEXT NOT NULL DEFAULT '{}';
-- secrets: the full settlement account number and tax IDs, sealed (AES-GCM) by package app. Never
-- rendered; the profile carries only last4 and "provided" flags.
ALTER TABLE merchant_accounts ADD COLUMN secrets TEXT NOT NULL DEFAULT '';
-- Sub-merchants only: when the claim link expires, and when the organization was claimed (from then
-- on the platform no longer reaches the account).
ALTER TABLE merchant_accounts ADD COLUMN claim_expires_at BIGINT;
ALTER TABLE merchant_accounts ADD COLUMN claimed_at BIGINT;

-- One claim per provisioned organization. The token itself is never stored, only its SHA-256.
CREATE TABLE merchant_claims (
    token_hash                    TEXT PRIMARY KEY,
    organization_id               TEXT NOT NULL REFERENCES organizations(id),
    merchant_account_id           TEXT NOT NULL REFERENCES merchant_accounts(id),
    platform_merchant_account_id  TEXT NOT NULL,
    expires_at                    BIGINT NOT NULL,
    claimed_at                    BIGINT,
    api_key_id                    TEXT,
    created_at                    BIGINT NOT NULL
);
CREATE INDEX merchant_claims_account ON merchant_claims(merchant_account_id);

-- +goose Down
DROP TABLE merchant_claims;
ALTER TABLE merchant_accounts DROP COLUMN claimed_at;
ALTER TABLE merchant_accounts DROP COLUMN claim_expires_at;
ALTER TABLE merchant_accounts DROP COLUMN secrets;
ALTER TABLE merchant_accounts DROP COLUMN onboarding;
