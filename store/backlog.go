package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/remit-billing/remit"
)

// Backlog reads the work waiting in the store at real time now, over every merchant account
// (remit.Backlog). Each figure is one aggregate over an index (webhook_deliveries_due, emails_due,
// the partial indexes payments_processing and refunds_pending, jobs_due).
func (q Q) Backlog(ctx context.Context, now time.Time) (remit.Backlog, error) {
	var b remit.Backlog
	at := remit.Micros(now)
	queue := func(query string) (remit.Queue, error) {
		var depth int
		var oldest sql.NullInt64
		if err := q.QueryRow(ctx, query).Scan(&depth, &oldest); err != nil {
			return remit.Queue{}, err
		}
		qu := remit.Queue{Depth: depth}
		if oldest.Valid {
			qu.Oldest = max(0, now.Sub(remit.FromMicros(oldest.Int64)))
		}
		return qu, nil
	}
	var err error
	// Delivery times are real time.
	if b.Webhooks, err = queue(`SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries WHERE status = 'pending'`); err != nil {
		return b, wrapErr(err, "store.Backlog: webhooks")
	}
	// An e-mail's created_at is its merchant's time: less the account's clock offset, real time
	// (exact in production; in the sandbox an advance since the message was queued adds to its age).
	if b.Emails, err = queue(`SELECT COUNT(*), MIN(e.created_at - m.clock_offset_us) FROM emails e
		JOIN merchant_accounts m ON m.id = e.merchant_account_id WHERE e.status = 'queued'`); err != nil {
		return b, wrapErr(err, "store.Backlog: emails")
	}
	if err := q.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM payments WHERE status = 'processing'),
		(SELECT COUNT(*) FROM refunds WHERE status = 'pending')`).Scan(&b.ReconcilePayments, &b.ReconcileRefunds); err != nil {
		return b, wrapErr(err, "store.Backlog: reconciler")
	}
	if err := q.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN j.due_at <= $1 + m.clock_offset_us THEN 1 ELSE 0 END), 0)
		FROM jobs j JOIN merchant_accounts m ON m.id = j.merchant_account_id WHERE j.status = 'pending' AND j.kind = $2`,
		at, remit.JobDunningRetry).Scan(&b.DunningScheduled, &b.DunningDue); err != nil {
		return b, wrapErr(err, "store.Backlog: dunning")
	}
	return b, nil
}
