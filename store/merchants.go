package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
)

// --- merchant accounts: onboarding, secrets, claims ---

// SetMerchantStatus stores a merchant account's status and onboarding record.
func (q Q) SetMerchantStatus(ctx context.Context, id string, status remit.MerchantStatus, onboarding remit.Onboarding, now time.Time) error {
	raw, err := json.Marshal(onboarding)
	if err != nil {
		return wrapErr(err, "store.SetMerchantStatus")
	}
	q.authChanged(ctx)
	n, err := q.exec(ctx, `UPDATE merchant_accounts SET status = $2, onboarding = $3, updated_at = $4 WHERE id = $1`,
		id, status, string(raw), remit.Micros(now))
	if err != nil {
		return wrapErr(err, "store.SetMerchantStatus")
	}
	if n == 0 {
		return remit.NotFound("merchant account", id, "")
	}
	return nil
}

// SetMerchantSecrets stores a merchant account's sealed secrets (see package app). The store never
// sees them in the clear.
func (q Q) SetMerchantSecrets(ctx context.Context, id, sealed string) error {
	q.authChanged(ctx)
	_, err := q.exec(ctx, `UPDATE merchant_accounts SET secrets = $2 WHERE id = $1`, id, sealed)
	return wrapErr(err, "store.SetMerchantSecrets")
}

// GetMerchantSecrets returns a merchant account's sealed secrets ("" when it has none).
func (q Q) GetMerchantSecrets(ctx context.Context, id string) (string, error) {
	var sealed string
	err := q.QueryRow(ctx, `SELECT secrets FROM merchant_accounts WHERE id = $1`, id).Scan(&sealed)
	return sealed, notFoundOr(err, "merchant account", id, "store.GetMerchantSecrets")
}

// SubMerchantRefTaken reports whether the platform account already has a sub-merchant with the
// external reference ref.
func (q Q) SubMerchantRefTaken(ctx context.Context, platformID, ref string) (bool, error) {
	return q.exists(ctx, "store.SubMerchantRefTaken", `SELECT 1 FROM merchant_accounts WHERE platform_merchant_account_id = $1 AND external_ref = $2 LIMIT 1`,
		platformID, ref)
}

// CreateMerchantClaim inserts the claim of a provisioned organization.
func (q Q) CreateMerchantClaim(ctx context.Context, c remit.MerchantClaim) error {
	_, err := q.exec(ctx, `INSERT INTO merchant_claims (token_hash, organization_id, merchant_account_id,
		platform_merchant_account_id, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.TokenHash, c.OrganizationID, c.MerchantAccountID, c.PlatformMerchantAccountID, remit.Micros(c.ExpiresAt), remit.Micros(c.CreatedAt))
	return wrapErr(err, "store.CreateMerchantClaim")
}

// GetMerchantClaim returns the claim whose token hashes to tokenHash, locked for update (PostgreSQL),
// or not_found.
func (q Q) GetMerchantClaim(ctx context.Context, tokenHash string) (c remit.MerchantClaim, err error) {
	var expires, created int64
	var claimed sql.NullInt64
	var keyID sql.NullString
	err = q.QueryRow(ctx, `SELECT token_hash, organization_id, merchant_account_id, platform_merchant_account_id, expires_at,
		claimed_at, api_key_id, created_at FROM merchant_claims WHERE token_hash = $1`+q.ForUpdate(), tokenHash).
		Scan(&c.TokenHash, &c.OrganizationID, &c.MerchantAccountID, &c.PlatformMerchantAccountID, &expires, &claimed, &keyID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, wrapErr(err, "store.GetMerchantClaim")
	}
	c.ExpiresAt, c.CreatedAt, c.ClaimedAt, c.APIKeyID = remit.FromMicros(expires), remit.FromMicros(created), timePtr(claimed), keyID.String
	return c, nil
}

// MarkMerchantClaimed records that a claim was used: on the claim (with the API key it issued) and
// on the merchant account, which its platform no longer reaches from then on.
func (q Q) MarkMerchantClaimed(ctx context.Context, tokenHash, merchantAccountID, apiKeyID string, at time.Time) error {
	n, err := q.exec(ctx, `UPDATE merchant_claims SET claimed_at = $2, api_key_id = $3 WHERE token_hash = $1 AND claimed_at IS NULL`,
		tokenHash, remit.Micros(at), apiKeyID)
	if err != nil {
		return wrapErr(err, "store.MarkMerchantClaimed")
	}
	if n == 0 {
		return ErrConflict
	}
	q.authChanged(ctx)
	_, err = q.exec(ctx, `UPDATE merchant_accounts SET claimed_at = $2, updated_at = $2 WHERE id = $1`, merchantAccountID, remit.Micros(at))
	return wrapErr(err, "store.MarkMerchantClaimed")
}

const merchantColumns = `id, organization_id, environment, external_ref, display_name, legal_entity_type, country,
	merchant_mode, default_currency, status, platform_enabled, COALESCE(platform_merchant_account_id, ''), clock_offset_us,
	profile, created_at, updated_at, onboarding, claim_expires_at, claimed_at, COALESCE(processor_account_id, '')`

func scanMerchant(row interface{ Scan(...any) error }) (m remit.MerchantAccount, err error) {
	var env, profile, onboarding string
	var offset, created, updated int64
	var claimExpires, claimed sql.NullInt64
	err = row.Scan(&m.ID, &m.OrganizationID, &env, &m.ExternalRef, &m.DisplayName, &m.LegalEntityType, &m.Country,
		&m.MerchantMode, &m.DefaultCurrency, &m.Status, &m.PlatformEnabled, &m.PlatformMerchantAccountID, &offset,
		&profile, &created, &updated, &onboarding, &claimExpires, &claimed, &m.ProcessorAccountID)
	if err != nil {
		return m, err
	}
	m.Environment = remit.Environment(env)
	m.ClockOffset = time.Duration(offset) * time.Microsecond
	m.Profile = json.RawMessage(profile)
	m.CreatedAt, m.UpdatedAt = remit.FromMicros(created), remit.FromMicros(updated)
	if onboarding != "" {
		if err := json.Unmarshal([]byte(onboarding), &m.Onboarding); err != nil {
			return m, fmt.Errorf("merchant account %s: onboarding: %w", m.ID, err)
		}
	}
	m.ClaimExpiresAt, m.ClaimedAt = timePtr(claimExpires), timePtr(claimed)
	return m, nil
}

// CreateMerchantAccount inserts a merchant account. A duplicate external reference within the
// organization and environment is a conflict.
func (q Q) CreateMerchantAccount(ctx context.Context, m remit.MerchantAccount) error {
	if len(m.Profile) == 0 {
		m.Profile = json.RawMessage("{}")
	}
	var platform any
	if m.PlatformMerchantAccountID != "" {
		platform = m.PlatformMerchantAccountID
	}
	_, err := q.exec(ctx, `INSERT INTO merchant_accounts (id, organization_id, environment, external_ref, display_name,
		legal_entity_type, country, merchant_mode, default_currency, status, platform_enabled, platform_merchant_account_id,
		clock_offset_us, profile, created_at, updated_at, claim_expires_at, processor_account_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		m.ID, m.OrganizationID, string(m.Environment), m.ExternalRef, m.DisplayName, m.LegalEntityType, m.Country,
		m.MerchantMode, m.DefaultCurrency, m.Status, m.PlatformEnabled, platform, int64(m.ClockOffset/time.Microsecond),
		string(m.Profile), remit.Micros(m.CreatedAt), remit.Micros(m.UpdatedAt), optMicros(m.ClaimExpiresAt), nullIfEmpty(m.ProcessorAccountID))
	if IsUniqueViolation(err) {
		return duplicate("external_ref")
	}
	return wrapErr(err, "store.CreateMerchantAccount")
}

// GetMerchantAccount returns the merchant account with id, or not_found. Locked, it takes the
// row lock (PostgreSQL), serializing changes to the account (its clock, its state).
func (q Q) GetMerchantAccount(ctx context.Context, id string, read Read) (remit.MerchantAccount, error) {
	query := `SELECT ` + merchantColumns + ` FROM merchant_accounts WHERE id = $1` + q.lockFor(read)
	m, err := scanMerchant(q.QueryRow(ctx, query, id))
	return m, notFoundOr(err, "merchant account", id, "store.GetMerchantAccount")
}

// UpdateMerchantAccount writes what an update changes of a merchant account: its display name and
// its profile (the support e-mail and metadata are in it).
func (q Q) UpdateMerchantAccount(ctx context.Context, id, displayName string, profile json.RawMessage, now time.Time) error {
	q.authChanged(ctx)
	_, err := q.exec(ctx, `UPDATE merchant_accounts SET display_name = $2, profile = $3, updated_at = $4 WHERE id = $1`,
		id, displayName, string(profile), remit.Micros(now))
	return wrapErr(err, "store.UpdateMerchantAccount")
}

// ListMerchantAccounts lists an organization's merchant accounts in one environment newest first,
// over merchant_accounts_list.
func (q Q) ListMerchantAccounts(ctx context.Context, organizationID string, env remit.Environment, p ListPage) ([]remit.MerchantAccount, error) {
	query, args := pageQuery(`SELECT `+merchantColumns+` FROM merchant_accounts WHERE organization_id = $1 AND environment = $2`,
		[]any{organizationID, string(env)}, p)
	return queryAll(ctx, q, "store.ListMerchantAccounts", scanMerchant, nil, query, args...)
}

// SetMerchantClockOffset stores the sandbox clock offset of a merchant account.
func (q Q) SetMerchantClockOffset(ctx context.Context, id string, offset time.Duration, now time.Time) error {
	q.authChanged(ctx)
	_, err := q.exec(ctx, `UPDATE merchant_accounts SET clock_offset_us = $2, updated_at = $3 WHERE id = $1`,
		id, int64(offset/time.Microsecond), remit.Micros(now))
	return wrapErr(err, "store.SetMerchantClockOffset")
}
