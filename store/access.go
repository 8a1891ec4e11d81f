package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// Organizations and API keys.

// CreateOrganization inserts an organization.
func (q Q) CreateOrganization(ctx context.Context, o remit.Organization) error {
	_, err := q.exec(ctx, `INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)`,
		o.ID, o.Name, remit.Micros(o.CreatedAt))
	return wrapErr(err, "store.CreateOrganization")
}

// CreateAPIKey inserts an API key (its hash only).
func (q Q) CreateAPIKey(ctx context.Context, k remit.APIKey) error {
	envs := make([]string, len(k.Environments))
	for i, e := range k.Environments {
		envs[i] = string(e)
	}
	_, err := q.exec(ctx, `INSERT INTO api_keys (id, organization_id, secret_hash, environments, created_at) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.OrganizationID, k.SecretHash, strings.Join(envs, ","), remit.Micros(k.CreatedAt))
	return wrapErr(err, "store.CreateAPIKey")
}

// GetAPIKey returns the key with id, or a not_found error.
func (q Q) GetAPIKey(ctx context.Context, id string) (k remit.APIKey, err error) {
	var envs string
	var created int64
	var revoked sql.NullInt64
	err = q.QueryRow(ctx, `SELECT id, organization_id, secret_hash, environments, created_at, revoked_at FROM api_keys WHERE id = $1`, id).
		Scan(&k.ID, &k.OrganizationID, &k.SecretHash, &envs, &created, &revoked)
	if err = notFoundOr(err, "api key", id, "store.GetAPIKey"); err != nil {
		return k, err
	}
	finishAPIKey(&k, envs, created, revoked)
	return k, nil
}

func finishAPIKey(k *remit.APIKey, envs string, created int64, revoked sql.NullInt64) {
	for _, e := range strings.Split(envs, ",") {
		if e != "" {
			k.Environments = append(k.Environments, remit.Environment(e))
		}
	}
	k.CreatedAt = remit.FromMicros(created)
	if revoked.Valid {
		t := remit.FromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
}

// merchantColumnsM is merchantColumns qualified by the alias m, for joins.
var merchantColumnsM = qualify(merchantColumns, "m")

// qualify prefixes every column name of a select list with alias: "a, COALESCE(b, c)" becomes
// "m.a, COALESCE(m.b, c)".
func qualify(columns, alias string) string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(columns); i++ {
		if i < len(columns) {
			switch columns[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		c := strings.TrimSpace(columns[start:i])
		if rest, ok := strings.CutPrefix(c, "COALESCE("); ok {
			c = "COALESCE(" + alias + "." + rest
		} else {
			c = alias + "." + c
		}
		out = append(out, c)
		start = i + 1
	}
	return strings.Join(out, ", ")
}

// GetAPIKeyAndMerchant reads the key with keyID and the merchant account with merchantID in one
// statement: the authenticated, scoped request's two lookups (app.AuthenticateScoped). m is nil
// when the key exists but the merchant account does not. A missing key is not_found.
func (q Q) GetAPIKeyAndMerchant(ctx context.Context, keyID, merchantID string) (k remit.APIKey, m *remit.MerchantAccount, err error) {
	var envs string
	var created int64
	var revoked sql.NullInt64
	dest := []any{&k.ID, &k.OrganizationID, &k.SecretHash, &envs, &created, &revoked}
	var ma remit.MerchantAccount
	row := q.QueryRow(ctx, `SELECT k.id, k.organization_id, k.secret_hash, k.environments, k.created_at, k.revoked_at, `+merchantColumnsM+`
		FROM api_keys k CROSS JOIN merchant_accounts m WHERE k.id = $1 AND m.id = $2`, keyID, merchantID)
	ma, err = scanMerchant(prefixScanner{row: row, prefix: dest})
	if errors.Is(err, sql.ErrNoRows) {
		// Either is missing: the key alone tells which (the rare, failing path).
		k, err = q.GetAPIKey(ctx, keyID)
		return k, nil, err
	}
	if err != nil {
		return k, nil, wrapErr(err, "store.GetAPIKeyAndMerchant")
	}
	finishAPIKey(&k, envs, created, revoked)
	return k, &ma, nil
}

// prefixScanner scans a row whose first columns go to prefix and the rest to the caller's
// destinations.
type prefixScanner struct {
	row    *sql.Row
	prefix []any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.row.Scan(append(append(make([]any, 0, len(p.prefix)+len(dest)), p.prefix...), dest...)...)
}

// RevokeAPIKey marks a key revoked. Revoking an unknown key is not_found; revoking twice is a no-op.
func (q Q) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	q.authChanged(ctx)
	n, err := q.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, remit.Micros(at))
	if err != nil {
		return wrapErr(err, "store.RevokeAPIKey")
	}
	if n == 0 {
		return remit.NotFound("api key", id, "")
	}
	return nil
}
