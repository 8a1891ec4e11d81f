package app

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Quotes (docs/quotes-and-subscriptions.md). A quote is
// priced when it is created (version 1, draft) and accepted once. The figures of a version are
// subtotal − discounts = total: no tax and no prepaid balance, which belong to the invoice.

// CreateQuote validates and prices a quote and stores it with version 1 in draft; it emits
// quote.created.
//
// Errors: validation_failure (every problem: currency, order type and subscriptionId, line
// currencies, amounts and intervals, billing account and customer that do not belong together),
// not_found (customer, billing account, subscription, price, coupon; details.field names where),
// conflict (quoteId taken; an archived price or coupon, details.currentState).
func (qs *Quotes) CreateQuote(ctx context.Context, m remit.MerchantAccount, in remit.QuoteInput) (remit.Quote, error) {
	qt, err := inTx(ctx, qs.DB, func(ctx context.Context, tx *store.Tx) (remit.Quote, error) {
		return qs.createQuote(ctx, tx, m, in, micro(qs.Now(m)))
	})
	return qt, err
}

// createQuote loads what the request names, decides version 1 (remit.PlanQuote), stores the quote
// and emits quote.created.
func (qs *Quotes) createQuote(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.QuoteInput, now time.Time) (remit.Quote, error) {
	cust, ba, err := loadParties(ctx, tx.Q, m, in.CustomerID, in.BillingAccountID)
	if err != nil {
		return remit.Quote{}, err
	}
	var sub *remit.Subscription
	if in.OrderType == remit.OrderSubscriptionAmendment && in.SubscriptionID != nil {
		s, err := tx.GetSubscription(ctx, m.ID, *in.SubscriptionID, store.Unlocked)
		err = remit.AtField(err, "subscriptionId")
		if err != nil {
			return remit.Quote{}, err
		}
		sub = &s
	}
	prices, err := tx.GetPrices(ctx, m.ID, linePriceIDs(in.Lines, func(l remit.InvoiceLineInput) string { return l.PriceID }))
	if err != nil {
		return remit.Quote{}, err
	}
	couponsByID, err := tx.GetCoupons(ctx, m.ID, in.CouponIDs)
	if err != nil {
		return remit.Quote{}, err
	}
	v, err := remit.PlanQuote(in, cust, ba, sub, prices, couponsByID)
	if err != nil {
		return remit.Quote{}, err
	}
	if err := catalogActive(prices, lineRefs(in.Lines), itemPrices(sub), couponsByID, in.CouponIDs); err != nil {
		return remit.Quote{}, err
	}
	v.CreatedAt = now
	qt := remit.Quote{Object: "quote", QuoteID: cmp.Or(in.QuoteID, remit.NewID("qt")), OrderType: in.OrderType, CustomerID: cust.CustomerID,
		BillingAccountID: ba.BillingAccountID, SubscriptionID: in.SubscriptionID, Currency: in.Currency, Version: 1,
		Versions: []remit.QuoteVersion{v}, CouponIDs: append([]string{}, in.CouponIDs...), Terms: in.Terms,
		Metadata: remit.CopyMetadata(in.Metadata), Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	qt.SyncCurrent()
	if err := duplicateAs(tx.InsertQuote(ctx, qt), "quote", "quoteId", qt.QuoteID); err != nil {
		return remit.Quote{}, err
	}
	return qt, qs.Emit(ctx, tx, scopeOf(m), now, remit.EventQuoteCreated, qt.QuoteID, qt)
}

// GetQuote returns a quote of the merchant account with all its versions.
//
// Errors: not_found.
func (qs *Quotes) GetQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error) {
	return qs.DB.Read(ctx).GetQuote(ctx, m.ID, quoteID, store.Unlocked)
}

// ListQuotes lists the merchant account's quotes newest first, by customer and status, each with
// its versions.
//
// Errors: validation_failure (status, limit, cursor, createdFrom, createdTo).
func (qs *Quotes) ListQuotes(ctx context.Context, m remit.MerchantAccount, in remit.QuoteQuery) (remit.List[remit.Quote], error) {
	return listByStatus(ctx, qs.core, m, "quotes", in.ListQuery, in.Status, remit.QuoteStatuses, func(page store.ListPage) ([]remit.Quote, error) {
		return qs.DB.Read(ctx).ListQuotes(ctx, m.ID, store.QuoteFilter{CustomerID: in.CustomerID, Status: in.Status, ListPage: page})
	})
}

// quoteState is what remit.QuoteStates judges of a quote: its ID and status (transition).
func quoteState(qt *remit.Quote) (string, remit.QuoteStatus) { return qt.QuoteID, qt.Status }

// AcceptQuote accepts a draft quote (draft → accepted) and does what its order type says:
//   - one_off: a draft invoice of the quote's lines at the quoted unit amounts, with its coupons;
//   - subscription_creation: an active subscription whose items are the recurring lines, its first
//     period starting now on the merchant clock, and its first draft invoice (fixed_recurring lines
//     in advance for that period plus every one-time line; usage has nothing to bill yet), which
//     finalizes itself an hour later; the renewal is scheduled at the period's end;
//   - subscription_amendment: the subscription's items and coupons are replaced from its next
//     period (stored as pending until the renewal applies them).
//
// The accepted quote names the invoice and subscription it produced. Emits quote.accepted and,
// by order type, invoice.created, subscription.created or subscription.updated.
//
// Errors: not_found, conflict (not a draft; a price or coupon archived since the quote was made;
// details.currentState).
func (qs *Quotes) AcceptQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error) {
	qt, err := transition(ctx, qs.DB, remit.QuoteStates, remit.ActionAccept, quoteState, lockedRow(m.ID, quoteID, store.Q.GetQuote), func(ctx context.Context, tx *store.Tx, qt *remit.Quote) error {
		now := micro(qs.Now(m))
		v := qt.Current()
		if err := qs.quoteCatalogActive(ctx, tx, m, *qt, v); err != nil {
			return err
		}
		switch qt.OrderType {
		case remit.OrderOneOff:
			lines, periods := quoteInvoiceLines(v.Lines, nil)
			inv, err := qs.invoicing.CreateDraftInvoice(ctx, tx, m, remit.InvoiceDraftInput{CustomerID: qt.CustomerID, BillingAccountID: qt.BillingAccountID,
				Currency: qt.Currency, Lines: lines, LinePeriods: periods, CouponIDs: qt.CouponIDs, QuoteID: &qt.QuoteID}, now)
			if err != nil {
				return err
			}
			qt.InvoiceID = &inv.InvoiceID
		case remit.OrderSubscriptionCreation:
			sub, err := qs.startSubscription(ctx, tx, m, *qt, now)
			if err != nil {
				return err
			}
			qt.SubscriptionID, qt.InvoiceID = &sub.SubscriptionID, sub.LatestInvoiceID
		case remit.OrderSubscriptionAmendment:
			if err := qs.amendSubscription(ctx, tx, m, *qt, now); err != nil {
				return err
			}
		default:
			return remit.Internal(fmt.Errorf("quote %s has unknown order type %q", qt.QuoteID, qt.OrderType))
		}
		v.Status = remit.QuoteAccepted
		qt.AcceptedAt, qt.UpdatedAt = &now, now
		qt.SyncCurrent()
		if err := tx.UpdateQuote(ctx, *qt); err != nil {
			return err
		}
		return qs.Emit(ctx, tx, scopeOf(m), now, remit.EventQuoteAccepted, qt.QuoteID, *qt)
	})
	return qt, err
}

// CancelQuote cancels a draft quote (draft → canceled): it can no longer be accepted, and nothing
// it would have produced is made. Emits quote.canceled.
//
// Errors: not_found, conflict (accepted or already canceled; details.currentState).
func (qs *Quotes) CancelQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error) {
	return transition(ctx, qs.DB, remit.QuoteStates, remit.ActionCancel, quoteState, lockedRow(m.ID, quoteID, store.Q.GetQuote), func(ctx context.Context, tx *store.Tx, qt *remit.Quote) error {
		now := micro(qs.Now(m))
		qt.Current().Status = remit.QuoteCanceled
		qt.CanceledAt, qt.UpdatedAt = &now, now
		qt.SyncCurrent()
		if err := tx.UpdateQuote(ctx, *qt); err != nil {
			return err
		}
		return qs.Emit(ctx, tx, scopeOf(m), now, remit.EventQuoteCanceled, qt.QuoteID, *qt)
	})
}

// quoteInvoiceLines turns quote lines into invoice lines at the quoted unit amounts (overrides, so
// the invoice bills what was agreed). With period, fixed_recurring lines bill that period.
func quoteInvoiceLines(lines []remit.QuoteLine, period *[2]time.Time) ([]remit.InvoiceLineInput, []*[2]time.Time) {
	var out []remit.InvoiceLineInput
	var periods []*[2]time.Time
	for _, l := range lines {
		unit, desc := l.UnitAmount, l.Description
		in := remit.InvoiceLineInput{PriceID: l.PriceID, UnitAmount: &unit, Description: &desc, Agreed: true}
		if l.Quantity != nil {
			q := *l.Quantity
			in.Quantity = &q
		}
		out = append(out, in)
		if l.PriceType == remit.PriceFixedRecurring {
			periods = append(periods, period)
		} else {
			periods = append(periods, nil)
		}
	}
	return out, periods
}
