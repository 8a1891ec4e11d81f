package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/remit-billing/remit"
)

// The customer portal's sessions and configurations (docs/customer-portal.md).

// InsertPortalSession stores a new portal session with the hash of its URL's token.
func (q Q) InsertPortalSession(ctx context.Context, s remit.PortalSession, tokenHash string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return wrapErr(err, "store.InsertPortalSession")
	}
	_, err = q.exec(ctx, `INSERT INTO customer_portal_sessions (id, merchant_account_id, customer_id, token_hash, data, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, s.SessionID, s.MerchantAccountID, s.CustomerID, tokenHash, string(data),
		remit.Micros(s.ExpiresAt), remit.Micros(s.CreatedAt))
	return wrapErr(err, "store.InsertPortalSession")
}

// PortalSessionByToken returns the portal session whose URL's token has this hash (locked with
// Locked), whether its URL was used, or not_found.
func (q Q) PortalSessionByToken(ctx context.Context, tokenHash string, r Read) (remit.PortalSession, bool, error) {
	return q.portalSession(ctx, `token_hash = $1`, tokenHash, r)
}

// GetPortalSession returns a portal session by ID, whether its URL was used, or not_found.
func (q Q) GetPortalSession(ctx context.Context, sessionID string) (remit.PortalSession, bool, error) {
	return q.portalSession(ctx, `id = $1`, sessionID, Unlocked)
}

func (q Q) portalSession(ctx context.Context, where, arg string, r Read) (s remit.PortalSession, used bool, err error) {
	query := `SELECT data, used_at FROM customer_portal_sessions WHERE ` + where
	if r.ForUpdate {
		query += q.ForUpdate()
	}
	var data string
	var usedAt sql.NullInt64
	err = q.QueryRow(ctx, query, arg).Scan(&data, &usedAt)
	if err = notFoundOr(err, "customer portal session", "", "store.GetPortalSession"); err != nil {
		return s, false, err
	}
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		return s, false, wrapErr(err, "store.GetPortalSession")
	}
	return s, usedAt.Valid, nil
}

// MarkPortalSessionUsed records that the session's URL was opened (at).
func (q Q) MarkPortalSessionUsed(ctx context.Context, sessionID string, at int64) error {
	_, err := q.exec(ctx, `UPDATE customer_portal_sessions SET used_at = $2 WHERE id = $1`, sessionID, at)
	return wrapErr(err, "store.MarkPortalSessionUsed")
}

// GetPortalConfiguration returns the merchant account's portal configuration; found is false
// when it has none (the defaults apply).
func (q Q) GetPortalConfiguration(ctx context.Context, merchantAccountID string) (c remit.PortalConfiguration, found bool, err error) {
	var data string
	err = q.QueryRow(ctx, `SELECT data FROM customer_portal_configurations WHERE merchant_account_id = $1`, merchantAccountID).Scan(&data)
	if found, err = foundOr(err, "store.GetPortalConfiguration"); !found {
		return c, false, err
	}
	return c, true, wrapErr(json.Unmarshal([]byte(data), &c), "store.GetPortalConfiguration")
}

// PutPortalConfiguration stores the merchant account's portal configuration.
func (q Q) PutPortalConfiguration(ctx context.Context, c remit.PortalConfiguration) error {
	data, err := json.Marshal(c)
	if err != nil {
		return wrapErr(err, "store.PutPortalConfiguration")
	}
	_, err = q.exec(ctx, `INSERT INTO customer_portal_configurations (merchant_account_id, data, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (merchant_account_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
		c.MerchantAccountID, string(data), remit.Micros(*c.UpdatedAt))
	return wrapErr(err, "store.PutPortalConfiguration")
}
