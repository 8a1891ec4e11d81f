package app

import (
	"context"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Quotes (product.md "Quotes and subscriptions"; docs/quotes-and-subscriptions.md). A quote is
// priced when it is created (version 1, draft) and accepted once. The figures of a version are
// subtotal − discounts = total: no tax and no prepaid balance, which belong to the invoice.

// recurringPrice reports whether a price bills every period of a subscription.
func recurringPrice(priceType string) bool {
	return priceType == remit.PriceFixedRecurring || priceType == remit.PriceUsageMetered
}

// CreateQuote validates and prices a quote and stores it with version 1 in draft; it emits
// quote.created.
//
// Errors: validation_failure (every problem: currency, order type and subscriptionId, line
// currencies, amounts and intervals, billing account and customer that do not belong together),
// not_found (customer, billing account, subscription, price, coupon; details.field names where),
// conflict (quoteId taken).
func (qs *Quotes) CreateQuote(ctx context.Context, m remit.MerchantAccount, in remit.QuoteInput) (remit.Quote, error) {
	var qt remit.Quote
	err := qs.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		qt, err = qs.createQuote(ctx, tx, m, in, micro(qs.Now(m)))
		return err
	})
	qt.Environment = m.Environment
	return qt, err
}

func (qs *Quotes) createQuote(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.QuoteInput, now time.Time) (remit.Quote, error) {
	var p remit.Problems
	currencyOK := remit.CheckCurrency(in.Currency) == ""
	remit.CurrencyProblem(&p, remit.InBody, "currency", in.Currency)
	remit.MetadataProblems(&p, "metadata", in.Metadata)
	if !remit.ValidOrderType(in.OrderType) {
		p.Body("orderType", "invalid_enum", "orderType must be one_off, subscription_creation or subscription_amendment.")
	}
	amendment := in.OrderType == remit.OrderSubscriptionAmendment
	subscriptionQuote := amendment || in.OrderType == remit.OrderSubscriptionCreation
	switch {
	case amendment && in.SubscriptionID == nil:
		p.Body("subscriptionId", "required", "subscriptionId is required for a subscription_amendment quote: it names the subscription to amend.")
	case !amendment && in.SubscriptionID != nil && remit.ValidOrderType(in.OrderType):
		p.Body("subscriptionId", "not_allowed", fmt.Sprintf("subscriptionId is given only on subscription_amendment quotes; a %s quote does not amend a subscription.", in.OrderType))
	}
	if len(in.Lines) == 0 {
		p.Body("lines", "required", "A quote needs at least one line.")
	}

	cust, err := tx.GetCustomer(ctx, m.ID, in.CustomerID, "customerId")
	if err != nil {
		return remit.Quote{}, err
	}
	ba, err := tx.GetBillingAccount(ctx, m.ID, in.BillingAccountID, "billingAccountId", false)
	if err != nil {
		return remit.Quote{}, err
	}
	if ba.CustomerID != cust.CustomerID {
		p.Body("billingAccountId", "customer_mismatch", fmt.Sprintf("Billing account '%s' belongs to another customer than '%s'.", ba.BillingAccountID, cust.CustomerID))
	}
	if currencyOK && ba.Currency != in.Currency {
		p.Body("currency", "currency_mismatch", fmt.Sprintf("The quote's currency must be its billing account's currency, %s.", ba.Currency))
	}
	if amendment && in.SubscriptionID != nil {
		sub, err := tx.GetSubscription(ctx, m.ID, *in.SubscriptionID, "subscriptionId", false)
		if err != nil {
			return remit.Quote{}, err
		}
		if sub.CustomerID != in.CustomerID {
			p.Body("customerId", "subscription_mismatch", fmt.Sprintf("Subscription '%s' belongs to customer '%s'; an amendment keeps the customer.", sub.SubscriptionID, sub.CustomerID))
		}
		if sub.BillingAccountID != in.BillingAccountID {
			p.Body("billingAccountId", "subscription_mismatch", fmt.Sprintf("Subscription '%s' bills billing account '%s'; an amendment keeps the billing account.", sub.SubscriptionID, sub.BillingAccountID))
		}
		if currencyOK && sub.Currency != in.Currency {
			p.Body("currency", "subscription_mismatch", fmt.Sprintf("Subscription '%s' is in %s; an amendment keeps the currency.", sub.SubscriptionID, sub.Currency))
		}
	}

	v := remit.QuoteVersion{Version: 1, Status: remit.QuoteDraft, CreatedAt: now, Lines: []remit.QuoteLine{}}
	var interval string
	var intervalCount int64
	firstRecurring := -1
	priceIDs := make([]string, len(in.Lines))
	for i, li := range in.Lines {
		priceIDs[i] = li.PriceID
	}
	prices, err := tx.GetPrices(ctx, m.ID, priceIDs)
	if err != nil {
		return remit.Quote{}, err
	}
	for i, li := range in.Lines {
		field := fmt.Sprintf("lines[%d]", i)
		price, ok := prices[li.PriceID]
		if !ok {
			return remit.Quote{}, remit.NotFound("price", li.PriceID, field+".priceId")
		}
		l := remit.QuoteLine{PriceID: price.PriceID, PriceType: price.PriceType, LineType: lineTypeOf(price), Description: price.Name,
			BillingInterval: price.BillingInterval, BillingIntervalCount: price.BillingIntervalCount}
		if li.Description != nil {
			l.Description = *li.Description
		}
		if currencyOK && price.Currency != in.Currency {
			p.Body(field+".priceId", "currency_mismatch", fmt.Sprintf("Price '%s' is in %s; every line's price must be in the quote's currency %s.", price.PriceID, price.Currency, in.Currency))
		}
		qty := int64(1)
		switch {
		case price.PriceType == remit.PriceUsageMetered:
			if li.Quantity != nil {
				p.Body(field+".quantity", "not_allowed", "quantity is measured for usage_metered prices: the usage recorded in each period is billed in arrears.")
			}
			qty = 0
		case li.Quantity != nil && *li.Quantity < 1:
			p.Body(field+".quantity", "out_of_range", "quantity must be at least 1.")
		case li.Quantity != nil:
			qty = *li.Quantity
		}
		if price.PriceType != remit.PriceUsageMetered {
			l.Quantity = &qty
		}
		switch {
		case li.UnitAmount != nil && (*li.UnitAmount < 0 || *li.UnitAmount > maxAmount):
			p.Body(field+".unitAmount", "out_of_range", fmt.Sprintf("unitAmount must be between 0 and %d minor units.", int64(maxAmount)))
		case li.UnitAmount != nil:
			if price.PriceType == remit.PriceFree && *li.UnitAmount != 0 {
				p.Body(field+".unitAmount", "not_allowed", "A free price's unit amount is 0.")
			}
			l.UnitAmount = *li.UnitAmount
		case price.UnitAmount != nil:
			l.UnitAmount = *price.UnitAmount
		default:
			p.Body(field+".unitAmount", "required", fmt.Sprintf("unitAmount is required on the line for priceType %s: the amount is chosen per quote.", price.PriceType))
		}
		if qty > 0 && l.UnitAmount > maxAmount/qty {
			p.Body(field+".quantity", "amount_too_large", fmt.Sprintf("quantity × unitAmount may be at most %d minor units per line.", int64(maxAmount)))
		} else {
			l.Amount = qty * l.UnitAmount
		}
		switch {
		case in.OrderType == remit.OrderOneOff && price.PriceType == remit.PriceUsageMetered:
			p.Body(field+".priceId", "not_allowed", fmt.Sprintf("Price '%s' is usage_metered: usage is billed by a subscription, not by a one_off quote.", price.PriceID))
		case amendment && !recurringPrice(price.PriceType):
			p.Body(field+".priceId", "not_allowed", fmt.Sprintf("Price '%s' is %s: an amendment replaces the subscription's recurring items (fixed_recurring or usage_metered); bill a one-time charge with a one_off quote.", price.PriceID, price.PriceType))
		case subscriptionQuote && recurringPrice(price.PriceType):
			count := int64(1)
			if price.BillingIntervalCount != nil {
				count = *price.BillingIntervalCount
			}
			pi := ""
			if price.BillingInterval != nil {
				pi = *price.BillingInterval
			}
			if firstRecurring < 0 {
				firstRecurring, interval, intervalCount = i, pi, count
			} else if pi != interval || count != intervalCount {
				p.Body(field+".priceId", "interval_mismatch", fmt.Sprintf("Price '%s' bills every %d %s; every recurring line of a subscription must bill on the same interval as lines[%d] (every %d %s).", price.PriceID, count, pi, firstRecurring, intervalCount, interval))
			}
		}
		v.Lines = append(v.Lines, l)
	}
	if subscriptionQuote && firstRecurring < 0 && len(in.Lines) > 0 {
		p.Body("lines", "recurring_line_required", "A subscription quote needs at least one recurring line (a fixed_recurring or usage_metered price).")
	}

	var coupons []remit.CouponTerms
	seen := map[string]bool{}
	couponsByID, err := tx.GetCoupons(ctx, m.ID, in.CouponIDs)
	if err != nil {
		return remit.Quote{}, err
	}
	for i, id := range in.CouponIDs {
		field := fmt.Sprintf("couponIds[%d]", i)
		c, ok := couponsByID[id]
		if !ok {
			return remit.Quote{}, remit.NotFound("coupon", id, field)
		}
		if seen[id] {
			p.Body(field, "duplicate", fmt.Sprintf("Coupon '%s' is listed twice; each coupon applies once.", id))
			continue
		}
		seen[id] = true
		t := remit.CouponTerms{ID: c.CouponID}
		if c.PercentOff != nil {
			t.PercentOff = *c.PercentOff
		}
		if c.AmountOff != nil {
			t.AmountOff = *c.AmountOff
			if currencyOK && c.Currency != nil && *c.Currency != in.Currency {
				p.Body(field, "currency_mismatch", fmt.Sprintf("Coupon '%s' takes an amount off in %s, not in the quote's currency %s.", c.CouponID, *c.Currency, in.Currency))
			}
		}
		coupons = append(coupons, t)
	}
	amounts := make([]int64, len(v.Lines))
	for i, l := range v.Lines {
		amounts[i] = l.Amount
		v.Subtotal += l.Amount
	}
	if v.Subtotal > maxAmount {
		p.Body("lines", "amount_too_large", fmt.Sprintf("A quote's subtotal may be at most %d minor units.", int64(maxAmount)))
	}
	if err := p.Err(); err != nil {
		return remit.Quote{}, err
	}
	for i, d := range remit.DiscountLines(amounts, coupons) {
		v.Lines[i].DiscountAmount = d
		v.DiscountTotal += d
	}
	v.Total = v.Subtotal - v.DiscountTotal

	qt := remit.Quote{Object: "quote", QuoteID: in.QuoteID, OrderType: in.OrderType, CustomerID: cust.CustomerID,
		BillingAccountID: ba.BillingAccountID, SubscriptionID: in.SubscriptionID, Currency: in.Currency, Version: 1,
		Versions: []remit.QuoteVersion{v}, CouponIDs: append([]string{}, in.CouponIDs...), Terms: in.Terms,
		Metadata: remit.CopyMetadata(in.Metadata), Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	if qt.QuoteID == "" {
		qt.QuoteID = remit.NewID("qt")
	}
	qt.SyncCurrent()
	if err := tx.InsertQuote(ctx, qt); err != nil {
		return remit.Quote{}, err
	}
	return qt, qs.Emit(ctx, tx, scopeOf(m), now, "quote.created", qt.QuoteID, qt)
}

// GetQuote returns a quote of the merchant account with all its versions.
//
// Errors: not_found.
func (qs *Quotes) GetQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error) {
	qt, err := qs.DB.Read(ctx).GetQuote(ctx, m.ID, quoteID, false)
	qt.Environment = m.Environment
	return qt, err
}

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
// Errors: not_found, conflict (not a draft; details.currentState).
func (qs *Quotes) AcceptQuote(ctx context.Context, m remit.MerchantAccount, quoteID string) (remit.Quote, error) {
	var qt remit.Quote
	err := qs.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		qt, err = tx.GetQuote(ctx, m.ID, quoteID, true)
		if err != nil {
			return err
		}
		if qt.Status != remit.QuoteDraft {
			return remit.Errorf(remit.EConflict, "Quote '%s' is %s: a quote is accepted once. Create a new quote for other terms.", qt.QuoteID, qt.Status).
				With("currentState", qt.Status).With("reason", "invalid_state")
		}
		now := micro(qs.Now(m))
		v := qt.Current()
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
			sub, err := qs.startSubscription(ctx, tx, m, qt, now)
			if err != nil {
				return err
			}
			qt.SubscriptionID, qt.InvoiceID = &sub.SubscriptionID, sub.LatestInvoiceID
		case remit.OrderSubscriptionAmendment:
			if err := qs.amendSubscription(ctx, tx, m, qt, now); err != nil {
				return err
			}
		default:
			return remit.Internal(fmt.Errorf("quote %s has unknown order type %q", qt.QuoteID, qt.OrderType))
		}
		v.Status = remit.QuoteAccepted
		qt.AcceptedAt, qt.UpdatedAt = &now, now
		qt.SyncCurrent()
		if err := tx.UpdateQuote(ctx, qt); err != nil {
			return err
		}
		qt.Environment = m.Environment
		return qs.Emit(ctx, tx, scopeOf(m), now, "quote.accepted", qt.QuoteID, qt)
	})
	qt.Environment = m.Environment
	return qt, err
}

// quoteInvoiceLines turns quote lines into invoice lines at the quoted unit amounts (overrides, so
// the invoice bills what was agreed). With period, fixed_recurring lines bill that period.
func quoteInvoiceLines(lines []remit.QuoteLine, period *[2]time.Time) ([]remit.InvoiceLineInput, []*[2]time.Time) {
	var out []remit.InvoiceLineInput
	var periods []*[2]time.Time
	for _, l := range lines {
		unit, desc := l.UnitAmount, l.Description
		in := remit.InvoiceLineInput{PriceID: l.PriceID, UnitAmount: &unit, Description: &desc}
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
