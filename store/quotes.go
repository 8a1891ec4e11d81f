package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/remit-billing/remit"
)

// --- quotes ---

const quoteColumns = `id, status, order_type, customer_id, billing_account_id, subscription_id, currency, coupon_ids, terms,
	current_version, versions, invoice_id, accepted_at, metadata, created_at, updated_at, canceled_at`

// quoteTable is the quotes table's reads.
var quoteTable = accountTable[remit.Quote]{from: "quotes", columns: quoteColumns, kind: "quote",
	scan: owning(scanQuote, func(qt *remit.Quote) *string { return &qt.MerchantAccountID })}

func quoteArgs(qt remit.Quote) []any {
	return []any{qt.MerchantAccountID, qt.QuoteID, qt.Status, qt.OrderType, qt.CustomerID, qt.BillingAccountID,
		optText(qt.SubscriptionID), qt.Currency, jsonList(qt.CouponIDs), optText(qt.Terms), qt.Version, mustJSON(qt.Versions),
		optText(qt.InvoiceID), optMicros(qt.AcceptedAt), metadataText(qt.Metadata), remit.Micros(qt.CreatedAt),
		remit.Micros(qt.UpdatedAt), optMicros(qt.CanceledAt)}
}

// InsertQuote inserts a quote. A duplicate caller-chosen quoteId is a conflict.
func (q Q) InsertQuote(ctx context.Context, qt remit.Quote) error {
	_, err := q.exec(ctx, `INSERT INTO quotes (merchant_account_id, `+quoteColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, quoteArgs(qt)...)
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.InsertQuote")
}

// UpdateQuote writes every field of a quote.
func (q Q) UpdateQuote(ctx context.Context, qt remit.Quote) error {
	_, err := q.exec(ctx, `UPDATE quotes SET status = $3, order_type = $4, customer_id = $5, billing_account_id = $6,
		subscription_id = $7, currency = $8, coupon_ids = $9, terms = $10, current_version = $11, versions = $12,
		invoice_id = $13, accepted_at = $14, metadata = $15, created_at = $16, updated_at = $17, canceled_at = $18
		WHERE merchant_account_id = $1 AND id = $2`, quoteArgs(qt)...)
	return wrapErr(err, "store.UpdateQuote")
}

// GetQuote returns a quote with its versions, or not_found. Locked, the row is locked
// (PostgreSQL) until the transaction ends.
func (q Q) GetQuote(ctx context.Context, merchantAccountID, quoteID string, read Read) (qt remit.Quote, err error) {
	return quoteTable.get(ctx, q, "store.GetQuote", merchantAccountID, quoteID, read)
}

// scanQuote scans a row of quoteColumns.
func scanQuote(row interface{ Scan(...any) error }) (qt remit.Quote, err error) {
	var sub, terms, inv sql.NullString
	var accepted, canceled sql.NullInt64
	var coupons, versions, md string
	var created, updated int64
	err = row.Scan(&qt.QuoteID, &qt.Status, &qt.OrderType, &qt.CustomerID,
		&qt.BillingAccountID, &sub, &qt.Currency, &coupons, &terms, &qt.Version, &versions, &inv, &accepted, &md, &created, &updated, &canceled)
	if err != nil {
		return qt, err
	}
	qt.Object = "quote"
	qt.SubscriptionID, qt.Terms, qt.InvoiceID, qt.AcceptedAt = textPtr(sub), textPtr(terms), textPtr(inv), timePtr(accepted)
	qt.CanceledAt = timePtr(canceled)
	qt.Metadata, qt.CreatedAt, qt.UpdatedAt = metadataOf(md), remit.FromMicros(created), remit.FromMicros(updated)
	if err := json.Unmarshal([]byte(coupons), &qt.CouponIDs); err != nil {
		return qt, fmt.Errorf("coupons: %w", err)
	}
	if err := json.Unmarshal([]byte(versions), &qt.Versions); err != nil {
		return qt, fmt.Errorf("versions: %w", err)
	}
	qt.SyncCurrent()
	return qt, nil
}

// QuoteFilter narrows a list of quotes: equal filters, empty ones left out.
type QuoteFilter struct {
	CustomerID, Status string
	ListPage
}

// ListQuotes lists a merchant account's quotes newest first, with their versions, over
// quotes_list, quotes_customer_list or quotes_status_list.
func (q Q) ListQuotes(ctx context.Context, merchantAccountID string, f QuoteFilter) ([]remit.Quote, error) {
	return quoteTable.list(ctx, q, "store.ListQuotes", merchantAccountID, f.ListPage, Eq{"customer_id", f.CustomerID}, Eq{"status", f.Status})
}

// --- subscriptions ---

const subscriptionColumns = `id, status, customer_id, billing_account_id, currency, items, pending_items, pending_coupon_ids,
	pending_quote_id, billing_interval, billing_interval_count, cycle_anchor, cycle_periods, current_period_start,
	current_period_end, latest_invoice_id, quote_id, coupon_ids, metadata, created_at, updated_at, trial_end, cancel_at,
	canceled_at, paused_at, pending_prorations`

// subscriptionTable is the subscriptions table's reads.
var subscriptionTable = accountTable[remit.Subscription]{from: "subscriptions", columns: subscriptionColumns, kind: "subscription",
	scan: owning(scanSubscription, func(s *remit.Subscription) *string { return &s.MerchantAccountID })}

func subscriptionArgs(s remit.Subscription) []any {
	var pending, pendingCoupons any
	if s.PendingItems != nil {
		pending = mustJSON(s.PendingItems)
		pendingCoupons = jsonList(s.PendingCouponIDs)
	}
	return []any{s.MerchantAccountID, s.SubscriptionID, s.Status, s.CustomerID, s.BillingAccountID, s.Currency,
		jsonList(s.Items), pending, pendingCoupons, optText(s.PendingQuoteID), s.BillingInterval, s.BillingIntervalCount,
		remit.Micros(s.BillingCycleAnchor), s.CyclePeriods, remit.Micros(s.CurrentPeriodStart), remit.Micros(s.CurrentPeriodEnd),
		optText(s.LatestInvoiceID), optText(s.QuoteID), jsonList(s.CouponIDs), metadataText(s.Metadata),
		remit.Micros(s.CreatedAt), remit.Micros(s.UpdatedAt), optMicros(s.TrialEnd), optMicros(s.CancelAt),
		optMicros(s.CanceledAt), optMicros(s.PausedAt), jsonList(s.PendingProrations)}
}

// InsertSubscription inserts a subscription.
func (q Q) InsertSubscription(ctx context.Context, s remit.Subscription) error {
	_, err := q.exec(ctx, `INSERT INTO subscriptions (merchant_account_id, `+subscriptionColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23, $24, $25, $26, $27)`,
		subscriptionArgs(s)...)
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.InsertSubscription")
}

// UpdateSubscription writes every field of a subscription.
func (q Q) UpdateSubscription(ctx context.Context, s remit.Subscription) error {
	_, err := q.exec(ctx, `UPDATE subscriptions SET status = $3, customer_id = $4, billing_account_id = $5, currency = $6,
		items = $7, pending_items = $8, pending_coupon_ids = $9, pending_quote_id = $10, billing_interval = $11,
		billing_interval_count = $12, cycle_anchor = $13, cycle_periods = $14, current_period_start = $15,
		current_period_end = $16, latest_invoice_id = $17, quote_id = $18, coupon_ids = $19, metadata = $20,
		created_at = $21, updated_at = $22, trial_end = $23, cancel_at = $24, canceled_at = $25, paused_at = $26, pending_prorations = $27
		WHERE merchant_account_id = $1 AND id = $2`, subscriptionArgs(s)...)
	return wrapErr(err, "store.UpdateSubscription")
}

// GetSubscription returns a subscription, or not_found. Locked, the row is locked (PostgreSQL) until the
// transaction ends: every change to a subscription takes this lock first.
func (q Q) GetSubscription(ctx context.Context, merchantAccountID, subscriptionID string, read Read) (remit.Subscription, error) {
	return subscriptionTable.get(ctx, q, "store.GetSubscription", merchantAccountID, subscriptionID, read)
}

// SubscriptionFilter narrows the subscriptions list; After* is the keyset cursor.
type SubscriptionFilter struct {
	CustomerID, Status string
	ListPage
}

// ListSubscriptions returns a page of subscriptions, newest first (Limit+1 rows, to tell whether
// there are more).
func (q Q) ListSubscriptions(ctx context.Context, merchantAccountID string, f SubscriptionFilter) ([]remit.Subscription, error) {
	return subscriptionTable.list(ctx, q, "store.ListSubscriptions", merchantAccountID, f.ListPage,
		Eq{"customer_id", f.CustomerID}, Eq{"status", f.Status})
}

func scanSubscription(row interface{ Scan(...any) error }) (s remit.Subscription, err error) {
	var pending, pendingCoupons, pendingQuote, latest, quote sql.NullString
	var items, coupons, md, prorations string
	var anchor, start, end, created, updated int64
	var trialEnd, cancelAt, canceledAt, pausedAt sql.NullInt64
	if err = row.Scan(&s.SubscriptionID, &s.Status, &s.CustomerID,
		&s.BillingAccountID, &s.Currency, &items, &pending, &pendingCoupons, &pendingQuote, &s.BillingInterval,
		&s.BillingIntervalCount, &anchor, &s.CyclePeriods, &start, &end, &latest, &quote, &coupons, &md, &created, &updated,
		&trialEnd, &cancelAt, &canceledAt, &pausedAt, &prorations); err != nil {
		return s, err
	}
	s.Object = "subscription"
	s.PendingQuoteID, s.LatestInvoiceID, s.QuoteID = textPtr(pendingQuote), textPtr(latest), textPtr(quote)
	s.BillingCycleAnchor, s.CurrentPeriodStart, s.CurrentPeriodEnd = remit.FromMicros(anchor), remit.FromMicros(start), remit.FromMicros(end)
	s.Metadata, s.CreatedAt, s.UpdatedAt = metadataOf(md), remit.FromMicros(created), remit.FromMicros(updated)
	s.TrialEnd, s.CancelAt, s.CanceledAt, s.PausedAt = timePtr(trialEnd), timePtr(cancelAt), timePtr(canceledAt), timePtr(pausedAt)
	if err := json.Unmarshal([]byte(items), &s.Items); err != nil {
		return s, fmt.Errorf("items: %w", err)
	}
	if err := json.Unmarshal([]byte(coupons), &s.CouponIDs); err != nil {
		return s, fmt.Errorf("coupons: %w", err)
	}
	if err := json.Unmarshal([]byte(prorations), &s.PendingProrations); err != nil {
		return s, fmt.Errorf("pending prorations: %w", err)
	}
	if pending.Valid {
		s.PendingItems = []remit.SubscriptionItem{}
		if err := json.Unmarshal([]byte(pending.String), &s.PendingItems); err != nil {
			return s, fmt.Errorf("pending items: %w", err)
		}
		s.PendingCouponIDs = []string{}
		if pendingCoupons.Valid {
			if err := json.Unmarshal([]byte(pendingCoupons.String), &s.PendingCouponIDs); err != nil {
				return s, fmt.Errorf("pending coupons: %w", err)
			}
		}
	}
	return s, nil
}
