package store

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
)

// The reads of the due_work check (app/verification_checks.go, remit.CheckSubscriptionDue,
// CheckDraftDue, CheckFailedJob): late work only, so each read touches the rows it names.

// OverdueSubscriptions calls fn with every trialing, active or past_due subscription of the
// merchant account whose current period ended before cutoff, by ID.
func (q Q) OverdueSubscriptions(ctx context.Context, account string, cutoff time.Time, fn func(remit.SubscriptionDueFacts) error) error {
	query := `SELECT id, status, current_period_end FROM subscriptions WHERE merchant_account_id = $1 AND current_period_end < $2
		AND status IN ('trialing', 'active', 'past_due') AND id > $3 ORDER BY id LIMIT ` + itoa(verifyPage)
	scan := func(r rowScanner) (remit.SubscriptionDueFacts, error) {
		var f remit.SubscriptionDueFacts
		var end int64
		err := r.Scan(&f.SubscriptionID, &f.Status, &end)
		f.CurrentPeriodEnd = remit.FromMicros(end)
		return f, err
	}
	key := func(f remit.SubscriptionDueFacts) []any { return []any{f.SubscriptionID} }
	return pages(ctx, q, "store.OverdueSubscriptions", query, []any{account, remit.Micros(cutoff)}, []any{""}, scan, key, fn)
}

// OverdueDrafts calls fn with every draft invoice of the merchant account whose autoFinalizeAt is
// before cutoff, by ID.
func (q Q) OverdueDrafts(ctx context.Context, account string, cutoff time.Time, fn func(remit.DraftDueFacts) error) error {
	query := `SELECT id, auto_finalize_at FROM invoices WHERE merchant_account_id = $1 AND status = 'draft'
		AND auto_finalize_at < $2 AND id > $3 ORDER BY id LIMIT ` + itoa(verifyPage)
	scan := func(r rowScanner) (remit.DraftDueFacts, error) {
		var f remit.DraftDueFacts
		var at int64
		err := r.Scan(&f.InvoiceID, &at)
		f.AutoFinalizeAt = remit.FromMicros(at)
		return f, err
	}
	key := func(f remit.DraftDueFacts) []any { return []any{f.InvoiceID} }
	return pages(ctx, q, "store.OverdueDrafts", query, []any{account, remit.Micros(cutoff)}, []any{""}, scan, key, fn)
}

// FailedJobs calls fn with every job of the merchant account failed for good, by ID.
func (q Q) FailedJobs(ctx context.Context, account string, fn func(remit.Job) error) error {
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE merchant_account_id = $1 AND status = 'failed' AND id > $2
		ORDER BY id LIMIT ` + itoa(verifyPage)
	id := func(j remit.Job) string { return j.ID }
	return pagesByID(ctx, q, "store.FailedJobs", query, account, scanJob, id, fn)
}
