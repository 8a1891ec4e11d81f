package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	_, err := q.exec(ctx, `UPDATE merchant_accounts SET secrets = $2 WHERE id = $1`, id, sealed)
	return wrapErr(err, "store.SetMerchantSecrets")
}

// GetMerchantSecrets returns a merchant account's sealed secrets ("" when it has none).
func (q Q) GetMerchantSecrets(ctx context.Context, id string) (string, error) {
	var sealed string
	err := q.QueryRow(ctx, `SELECT secrets FROM merchant_accounts WHERE id = $1`, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", remit.NotFound("merchant account", id, "")
	}
	return sealed, wrapErr(err, "store.GetMerchantSecrets")
}

// SubMerchantRefTaken reports whether the platform account already has a sub-merchant with the
// external reference ref.
func (q Q) SubMerchantRefTaken(ctx context.Context, platformID, ref string) (bool, error) {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM merchant_accounts WHERE platform_merchant_account_id = $1 AND external_ref = $2 LIMIT 1`,
		platformID, ref).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrapErr(err, "store.SubMerchantRefTaken")
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
	c.ExpiresAt, c.CreatedAt, c.ClaimedAt, c.APIKeyID = remit.FromMicros(expires), remit.FromMicros(created), nullTime(claimed), keyID.String
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
	_, err = q.exec(ctx, `UPDATE merchant_accounts SET claimed_at = $2, updated_at = $2 WHERE id = $1`, merchantAccountID, remit.Micros(at))
	return wrapErr(err, "store.MarkMerchantClaimed")
}
