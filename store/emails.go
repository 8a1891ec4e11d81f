package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// --- the e-mail log (docs/email.md) ---

// InsertEmail records a message: queued (with its first attempt due at e.NextAttemptAt) or
// skipped. Bodies and subject are stored as rendered.
func (q Q) InsertEmail(ctx context.Context, e remit.Email) error {
	var next any
	if e.NextAttemptAt != nil {
		next = remit.Micros(*e.NextAttemptAt)
	}
	_, err := q.exec(ctx, `INSERT INTO emails (merchant_account_id, id, environment, type, customer_id, invoice_id, to_address,
		from_name, subject, locale, text_body, html_body, attachment, status, status_reason, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		e.MerchantAccountID, e.EmailID, string(e.Environment), string(e.Type), e.CustomerID, optText(e.InvoiceID), optText(e.To),
		e.FromName, e.Subject, e.Locale, e.TextBody, e.HTMLBody, jsonText(e.Attachment), string(e.Status), optText(e.StatusReason),
		next, remit.Micros(e.CreatedAt))
	return wrapErr(err, "store.InsertEmail")
}

const emailColumns = `merchant_account_id, id, environment, type, customer_id, invoice_id, to_address, from_name, subject, locale,
	attachment, status, status_reason, attempts, next_attempt_at, sent_at, created_at`

// emailTable is the emails table's reads of a message without its bodies.
var emailTable = accountTable[remit.Email]{from: "emails", columns: emailColumns, kind: "email",
	scan: scanning(func(row scanner) (remit.Email, error) { return scanEmail(row) })}

func scanEmail(row interface{ Scan(...any) error }, extra ...any) (e remit.Email, err error) {
	var env, typ, status string
	var inv, to, att, reason sql.NullString
	var next, sent sql.NullInt64
	var created int64
	dest := append([]any{&e.MerchantAccountID, &e.EmailID, &env, &typ, &e.CustomerID, &inv, &to, &e.FromName, &e.Subject, &e.Locale,
		&att, &status, &reason, &e.Attempts, &next, &sent, &created}, extra...)
	if err = row.Scan(dest...); err != nil {
		return e, err
	}
	e.Object, e.Environment, e.Type, e.Status = "email", remit.Environment(env), remit.EmailType(typ), remit.EmailStatus(status)
	e.InvoiceID, e.To, e.StatusReason, e.Attachment = textPtr(inv), textPtr(to), textPtr(reason), jsonOf[remit.EmailFile](att)
	e.NextAttemptAt, e.SentAt, e.CreatedAt = timePtr(next), timePtr(sent), remit.FromMicros(created)
	return e, nil
}

// GetEmail returns a merchant account's message with its bodies, or not_found.
func (q Q) GetEmail(ctx context.Context, merchantAccountID, id string) (remit.Email, error) {
	var text, html string
	e, err := scanEmail(q.QueryRow(ctx, `SELECT `+emailColumns+`, text_body, html_body FROM emails
		WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, id), &text, &html)
	e.TextBody, e.HTMLBody = text, html
	return e, notFoundOr(err, "email", id, "store.GetEmail")
}

// EmailFilter narrows the e-mail log; empty fields match everything.
type EmailFilter struct {
	CustomerID, InvoiceID, Type string
	ListPage
}

// ListEmails returns a page of the merchant account's messages newest first (one more than the
// page), filtered, without their bodies.
func (q Q) ListEmails(ctx context.Context, merchantAccountID string, f EmailFilter) ([]remit.Email, error) {
	return emailTable.list(ctx, q, "store.ListEmails", merchantAccountID, f.ListPage,
		Eq{"customer_id", f.CustomerID}, Eq{"invoice_id", f.InvoiceID}, Eq{"type", f.Type})
}

// DueEmail is a message a worker claimed for one send attempt, with what it needs to send it.
type DueEmail struct {
	remit.Email
	ClockOffset time.Duration // the merchant account's sandbox clock offset (sentAt is merchant time)
}

// ClaimDueEmails takes up to limit queued messages due at now for one attempt each: the attempt
// number is incremented and the message is leased to owner until leaseUntil (its next_attempt_at
// becomes leaseUntil, so that if the attempt never reports back the message is due again then).
// Several processes never claim the same message (SKIP LOCKED on PostgreSQL; the single writer on
// SQLite). Call it in its own transaction and commit before sending.
func (q Q) ClaimDueEmails(ctx context.Context, now, leaseUntil time.Time, owner string, limit int) ([]DueEmail, error) {
	rows, err := q.Query(ctx, `SELECT `+emailColumns+`, text_body, html_body FROM emails
		WHERE status = 'queued' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT `+itoa(limit)+q.SkipLocked(), remit.Micros(now))
	if err != nil {
		return nil, wrapErr(err, "store.ClaimDueEmails")
	}
	var out []DueEmail
	for rows.Next() {
		var d DueEmail
		var text, html string
		if d.Email, err = scanEmail(rows, &text, &html); err != nil {
			rows.Close()
			return nil, wrapErr(err, "store.ClaimDueEmails")
		}
		d.TextBody, d.HTMLBody = text, html
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapErr(err, "store.ClaimDueEmails")
	}
	for i := range out {
		d := &out[i]
		var offset int64
		if err := q.QueryRow(ctx, `SELECT clock_offset_us FROM merchant_accounts WHERE id = $1`, d.MerchantAccountID).Scan(&offset); err != nil {
			return nil, wrapErr(err, "store.ClaimDueEmails")
		}
		d.ClockOffset = time.Duration(offset) * time.Microsecond
		d.Attempts++
		if _, err := q.exec(ctx, `UPDATE emails SET attempts = $3, lease_owner = $4, next_attempt_at = $5
			WHERE merchant_account_id = $1 AND id = $2`, d.MerchantAccountID, d.EmailID, d.Attempts, owner, remit.Micros(leaseUntil)); err != nil {
			return nil, wrapErr(err, "store.ClaimDueEmails")
		}
	}
	return out, nil
}

// EmailOutcome is the result of one send attempt.
type EmailOutcome struct {
	Status        remit.EmailStatus // sent, failed, or queued again (NextAttemptAt set)
	NextAttemptAt *time.Time
	Reason        string     // the SMTP server's answer or the connection error, when not sent
	SentAt        *time.Time // merchant time, when sent
}

// FinishEmail records the outcome of an attempt a worker claimed. It reports false, changing
// nothing, when the worker no longer holds the message (its lease expired and another took it).
func (q Q) FinishEmail(ctx context.Context, d DueEmail, owner string, o EmailOutcome) (bool, error) {
	var next, sent, reason any
	if o.NextAttemptAt != nil {
		next = remit.Micros(*o.NextAttemptAt)
	}
	if o.SentAt != nil {
		sent = remit.Micros(*o.SentAt)
	}
	if o.Reason != "" {
		reason = o.Reason
	}
	n, err := q.exec(ctx, `UPDATE emails SET status = $5, next_attempt_at = $6, status_reason = $7, sent_at = $8, lease_owner = ''
		WHERE merchant_account_id = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4`,
		d.MerchantAccountID, d.EmailID, owner, d.Attempts, string(o.Status), next, reason, sent)
	return n > 0, wrapErr(err, "store.FinishEmail")
}

// ReleaseEmail gives back a message a worker claimed and did not try: it is due at next, and its
// attempt is not counted. It changes nothing when the worker no longer holds the message.
func (q Q) ReleaseEmail(ctx context.Context, d DueEmail, owner string, next time.Time) error {
	_, err := q.exec(ctx, `UPDATE emails SET attempts = attempts - 1, next_attempt_at = $5, lease_owner = ''
		WHERE merchant_account_id = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4`,
		d.MerchantAccountID, d.EmailID, owner, d.Attempts, remit.Micros(next))
	return wrapErr(err, "store.ReleaseEmail")
}

// NextEmailDue returns when the earliest queued message falls due, or ok=false when none is.
func (q Q) NextEmailDue(ctx context.Context) (t time.Time, ok bool, err error) {
	return q.earliest(ctx, "store.NextEmailDue", `SELECT MIN(next_attempt_at) FROM emails WHERE status = 'queued'`)
}
