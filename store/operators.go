package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"time"

	"github.com/remit-billing/remit"
)

// Dashboard operators, their set-password links and their sessions (docs/dashboard.md).

const operatorColumns = `id, organization_id, email, role, COALESCE(password_hash, ''), disabled_at, created_at`

func scanOperator(r interface{ Scan(...any) error }) (o remit.Operator, err error) {
	var role string
	var disabled sql.NullInt64
	var created int64
	if err := r.Scan(&o.ID, &o.OrganizationID, &o.Email, &role, &o.PasswordHash, &disabled, &created); err != nil {
		return o, err
	}
	o.Role, o.DisabledAt, o.CreatedAt = remit.OperatorRole(role), timePtr(disabled), remit.FromMicros(created)
	return o, nil
}

// CreateOperator inserts an operator. A taken e-mail address is a duplicate ("email").
func (q Q) CreateOperator(ctx context.Context, o remit.Operator) error {
	_, err := q.exec(ctx, `INSERT INTO operators (id, organization_id, email, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		o.ID, o.OrganizationID, o.Email, string(o.Role), remit.Micros(o.CreatedAt))
	if IsUniqueViolation(err) {
		return duplicate("email")
	}
	if isForeignKeyViolation(err) {
		return remit.NotFound("organization", o.OrganizationID, "")
	}
	return wrapErr(err, "store.CreateOperator")
}

// GetOperator returns the operator with id, or not_found.
func (q Q) GetOperator(ctx context.Context, id string) (remit.Operator, error) {
	o, err := scanOperator(q.QueryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE id = $1`, id))
	return o, notFoundOr(err, "operator", id, "store.GetOperator")
}

// GetOperatorByEmail returns the operator with the (lower-case) e-mail address, or not_found.
func (q Q) GetOperatorByEmail(ctx context.Context, email string) (remit.Operator, error) {
	o, err := scanOperator(q.QueryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE email = $1`, email))
	return o, notFoundOr(err, "operator", email, "store.GetOperatorByEmail")
}

// ListOperators lists an organization's operators, oldest first.
func (q Q) ListOperators(ctx context.Context, organizationID string) ([]remit.Operator, error) {
	return queryAll(ctx, q, "store.ListOperators", scanOperator, nil,
		`SELECT `+operatorColumns+` FROM operators WHERE organization_id = $1 ORDER BY created_at, id`, organizationID)
}

// DisableOperator marks an operator disabled (a second time changes nothing).
func (q Q) DisableOperator(ctx context.Context, id string, at time.Time) error {
	n, err := q.exec(ctx, `UPDATE operators SET disabled_at = COALESCE(disabled_at, $2), updated_at = $2 WHERE id = $1`, id, remit.Micros(at))
	if err == nil && n == 0 {
		return remit.NotFound("operator", id, "")
	}
	return wrapErr(err, "store.DisableOperator")
}

// SetOperatorPassword stores an operator's password hash.
func (q Q) SetOperatorPassword(ctx context.Context, id, hash string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE operators SET password_hash = $2, updated_at = $3 WHERE id = $1`, id, hash, remit.Micros(at))
	return wrapErr(err, "store.SetOperatorPassword")
}

// CreateOperatorLink stores a set-password link by its token's hash.
func (q Q) CreateOperatorLink(ctx context.Context, tokenHash, operatorID string, expires time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO operator_links (token_hash, operator_id, expires_at) VALUES ($1, $2, $3)`,
		tokenHash, operatorID, remit.Micros(expires))
	return wrapErr(err, "store.CreateOperatorLink")
}

// OperatorLink returns the operator a set-password link is for, if it is unused and unexpired at
// now (ok false otherwise, or for an unknown link).
func (q Q) OperatorLink(ctx context.Context, tokenHash string, now time.Time) (operatorID string, ok bool, err error) {
	err = q.QueryRow(ctx, `SELECT operator_id FROM operator_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2`,
		tokenHash, remit.Micros(now)).Scan(&operatorID)
	ok, err = foundOr(err, "store.OperatorLink")
	return operatorID, ok, err
}

// UseOperatorLink marks a set-password link used, once: false when it was used, expired or unknown.
func (q Q) UseOperatorLink(ctx context.Context, tokenHash string, now time.Time) (operatorID string, ok bool, err error) {
	err = q.QueryRow(ctx, `UPDATE operator_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
		RETURNING operator_id`, tokenHash, remit.Micros(now)).Scan(&operatorID)
	ok, err = foundOr(err, "store.UseOperatorLink")
	return operatorID, ok, err
}

// FindOperatorSession returns a session's data unless it is missing or expired at now.
func (q Q) FindOperatorSession(ctx context.Context, tokenHash string, now time.Time) ([]byte, bool, error) {
	var data string
	err := q.QueryRow(ctx, `SELECT data FROM operator_sessions WHERE token_hash = $1 AND expires_at > $2`, tokenHash, remit.Micros(now)).Scan(&data)
	if ok, err := foundOr(err, "store.FindOperatorSession"); !ok {
		return nil, false, err
	}
	b, err := base64.StdEncoding.DecodeString(data)
	return b, err == nil, wrapErr(err, "store.FindOperatorSession")
}

// SaveOperatorSession writes a session (insert or replace).
func (q Q) SaveOperatorSession(ctx context.Context, tokenHash string, data []byte, expires time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO operator_sessions (token_hash, data, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (token_hash) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
		tokenHash, base64.StdEncoding.EncodeToString(data), remit.Micros(expires))
	return wrapErr(err, "store.SaveOperatorSession")
}

// DeleteOperatorSession removes a session, and every session expired at now.
func (q Q) DeleteOperatorSession(ctx context.Context, tokenHash string, now time.Time) error {
	_, err := q.exec(ctx, `DELETE FROM operator_sessions WHERE token_hash = $1 OR expires_at <= $2`, tokenHash, remit.Micros(now))
	return wrapErr(err, "store.DeleteOperatorSession")
}

// ListOrganizationMerchantAccounts lists an organization's merchant accounts in one environment,
// newest first (the dashboard's account switch).
func (q Q) ListOrganizationMerchantAccounts(ctx context.Context, organizationID string, env remit.Environment) ([]remit.MerchantAccount, error) {
	return queryAll(ctx, q, "store.ListOrganizationMerchantAccounts", func(r interface{ Scan(...any) error }) (remit.MerchantAccount, error) {
		return scanMerchant(r)
	}, nil, `SELECT `+merchantColumns+` FROM merchant_accounts WHERE organization_id = $1 AND environment = $2 ORDER BY created_at DESC, id DESC LIMIT 100`,
		organizationID, string(env))
}

// GetOrganization returns an organization, or not_found.
func (q Q) GetOrganization(ctx context.Context, id string) (remit.Organization, error) {
	var o remit.Organization
	var created int64
	err := q.QueryRow(ctx, `SELECT id, name, created_at FROM organizations WHERE id = $1`, id).Scan(&o.ID, &o.Name, &created)
	o.CreatedAt = remit.FromMicros(created)
	return o, notFoundOr(err, "organization", id, "store.GetOrganization")
}

// RevenueByDay sums what the account's invoices were paid per UTC day and currency since from
// (Unix µs), oldest first, from invoices_paid.
func (q Q) RevenueByDay(ctx context.Context, merchantAccountID string, from time.Time) ([]remit.DayRevenue, error) {
	return queryAll(ctx, q, "store.RevenueByDay", func(r interface{ Scan(...any) error }) (d remit.DayRevenue, err error) {
		return d, r.Scan(&d.Day, &d.Currency, &d.Amount)
	}, nil, `SELECT paid_at / 86400000000 AS day, currency, SUM(amount_paid) FROM invoices
		WHERE merchant_account_id = $1 AND paid_at IS NOT NULL AND paid_at >= $2
		GROUP BY paid_at / 86400000000, currency ORDER BY day, currency`, merchantAccountID, remit.Micros(from))
}

// OpenTotals sums the account's open invoices per currency, from invoices_open.
func (q Q) OpenTotals(ctx context.Context, merchantAccountID string) ([]remit.OpenTotal, error) {
	return queryAll(ctx, q, "store.OpenTotals", func(r interface{ Scan(...any) error }) (o remit.OpenTotal, err error) {
		return o, r.Scan(&o.Currency, &o.Open, &o.OpenCount, &o.InDunning, &o.DunningCount)
	}, nil, `SELECT currency, SUM(amount_remaining), COUNT(*),
		SUM(CASE WHEN dunning_status IN ('retrying', 'exhausted') THEN amount_remaining ELSE 0 END),
		SUM(CASE WHEN dunning_status IN ('retrying', 'exhausted') THEN 1 ELSE 0 END)
		FROM invoices WHERE merchant_account_id = $1 AND status = 'open' GROUP BY currency ORDER BY currency`, merchantAccountID)
}

// RecurringLines returns the recurring lines of the account's draft, open and paid invoices (not
// void or uncollectible) whose period ends after from (the MRR chart), from invoice_lines_recurring.
func (q Q) RecurringLines(ctx context.Context, merchantAccountID string, from time.Time) ([]remit.BilledRecurring, error) {
	return queryAll(ctx, q, "store.RecurringLines", func(r interface{ Scan(...any) error }) (l remit.BilledRecurring, err error) {
		var start, end int64
		if err := r.Scan(&start, &end, &l.Currency, &l.Amount); err != nil {
			return l, err
		}
		l.Start, l.End = remit.FromMicros(start), remit.FromMicros(end)
		return l, nil
	}, nil, `SELECT l.period_start, l.period_end, i.currency, l.amount - l.discount_amount
		FROM invoice_lines l JOIN invoices i ON i.merchant_account_id = l.merchant_account_id AND i.id = l.invoice_id
		WHERE l.merchant_account_id = $1 AND l.line_type = 'recurring' AND l.period_end > $2 AND l.period_start IS NOT NULL
			AND i.status IN ('draft', 'open', 'paid')`, merchantAccountID, remit.Micros(from))
}
