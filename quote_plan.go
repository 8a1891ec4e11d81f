package remit

import "fmt"

// PlanQuote decides version 1 of a quote (a draft) from its request and what the request
// references, already read: its customer and billing account, the subscription an amendment names
// (nil for other order types), and the prices and coupons that exist (by ID). The figures are
// subtotal − discounts = total: no tax and no prepaid balance, which belong to the invoice
// (docs/quotes-and-subscriptions.md). It returns not_found for a missing price or coupon (at its
// field), or one validation_failure listing every problem. Times are the caller's to set.
func PlanQuote(in QuoteInput, cust Customer, ba BillingAccount, sub *Subscription, prices map[string]Price, coupons map[string]Coupon) (QuoteVersion, error) {
	var p Problems
	CheckQuoteRequest(in, &p)
	currency := validCurrency(in.Currency)
	BillingAccountProblems(ForQuote, currency, cust, ba, &p)
	if sub != nil {
		amendmentProblems(in, *sub, currency, &p)
	}
	v := QuoteVersion{Version: 1, Status: QuoteDraft, Lines: []QuoteLine{}}
	interval := subscriptionInterval{first: -1}
	for i, li := range in.Lines {
		field := fmt.Sprintf("lines[%d]", i)
		price, ok := prices[li.PriceID]
		if !ok {
			return QuoteVersion{}, NotFound("price", li.PriceID, field+".priceId")
		}
		pl := PriceLine(ForQuote, field, currency, price, li, &p)
		l := QuoteLine{PriceID: price.PriceID, PriceType: price.PriceType, LineType: price.LineType(), Description: pl.Description,
			BillingInterval: price.BillingInterval, BillingIntervalCount: price.BillingIntervalCount, UnitAmount: pl.UnitAmount, Amount: pl.Amount}
		if price.PriceType != PriceUsageMetered {
			l.Quantity = &pl.Units // the quantity agreed; a package price bills it in packages
		}
		orderTypeLineProblems(in.OrderType, field, i, price, &interval, &p)
		if li.TrialDays != nil {
			trialDaysProblems(in.OrderType, field, price, *li.TrialDays, &p)
			d := *li.TrialDays
			l.TrialDays = &d
		}
		v.Lines = append(v.Lines, l)
	}
	if in.OrderType != OrderOneOff && ValidOrderType(in.OrderType) && interval.first < 0 && len(in.Lines) > 0 {
		p.Body("lines", "recurring_line_required", "A subscription quote needs at least one recurring line (a fixed_recurring or usage_metered price).")
	}
	terms, err := CouponsFor(ForQuote, currency, in.CouponIDs, coupons, &p)
	if err != nil {
		return QuoteVersion{}, err
	}
	amounts := make([]int64, len(v.Lines))
	for i, l := range v.Lines {
		amounts[i] = l.Amount
		v.Subtotal += l.Amount
	}
	if v.Subtotal > MaxAmount {
		p.Body("lines", "amount_too_large", fmt.Sprintf("A quote's subtotal may be at most %d minor units.", int64(MaxAmount)))
	}
	if err := p.Err(); err != nil {
		return QuoteVersion{}, err
	}
	for i, d := range DiscountLines(amounts, terms) {
		v.Lines[i].DiscountAmount = d
		v.DiscountTotal += d
	}
	v.Total = v.Subtotal - v.DiscountTotal
	return v, nil
}

// quoteRequestProblems records the problems of a quote request on its own: currency, metadata,
// order type and subscriptionId, lines.
func CheckQuoteRequest(in QuoteInput, p *Problems) {
	CurrencyProblem(p, InBody, "currency", in.Currency)
	MetadataProblems(p, "metadata", in.Metadata)
	if !ValidOrderType(in.OrderType) {
		p.Body("orderType", "invalid_enum", "orderType must be one_off, subscription_creation or subscription_amendment.")
	}
	amendment := in.OrderType == OrderSubscriptionAmendment
	switch {
	case amendment && in.SubscriptionID == nil:
		p.Body("subscriptionId", "required", "subscriptionId is required for a subscription_amendment quote: it names the subscription to amend.")
	case !amendment && in.SubscriptionID != nil && ValidOrderType(in.OrderType):
		p.Body("subscriptionId", "not_allowed", fmt.Sprintf("subscriptionId is given only on subscription_amendment quotes; a %s quote does not amend a subscription.", in.OrderType))
	}
	if len(in.Lines) == 0 {
		p.Body("lines", "required", "A quote needs at least one line.")
	}
}

// amendmentProblems records what an amendment may not change of its subscription: the customer,
// the billing account, the currency (currency "" when the quote's own is invalid).
func amendmentProblems(in QuoteInput, sub Subscription, currency string, p *Problems) {
	if sub.CustomerID != in.CustomerID {
		p.Body("customerId", "subscription_mismatch", fmt.Sprintf("Subscription '%s' belongs to customer '%s'; an amendment keeps the customer.", sub.SubscriptionID, sub.CustomerID))
	}
	if sub.BillingAccountID != in.BillingAccountID {
		p.Body("billingAccountId", "subscription_mismatch", fmt.Sprintf("Subscription '%s' bills billing account '%s'; an amendment keeps the billing account.", sub.SubscriptionID, sub.BillingAccountID))
	}
	if currency != "" && sub.Currency != currency {
		p.Body("currency", "subscription_mismatch", fmt.Sprintf("Subscription '%s' is in %s; an amendment keeps the currency.", sub.SubscriptionID, sub.Currency))
	}
}

// subscriptionInterval is the billing interval of a subscription quote's first recurring line,
// which every other recurring line must share.
type subscriptionInterval struct {
	first int // index of the first recurring line, -1 before one is seen
	unit  string
	count int64
}

// orderTypeLineProblems records what the quote's order type does not allow of line i with price:
// usage in a one_off quote, one-time prices in an amendment, recurring lines on different
// intervals in a subscription quote.
func orderTypeLineProblems(orderType, field string, i int, price Price, iv *subscriptionInterval, p *Problems) {
	amendment := orderType == OrderSubscriptionAmendment
	subscriptionQuote := amendment || orderType == OrderSubscriptionCreation
	switch {
	case orderType == OrderOneOff && price.PriceType == PriceUsageMetered:
		p.Body(field+".priceId", "not_allowed", fmt.Sprintf("Price '%s' is usage_metered: usage is billed by a subscription, not by a one_off quote.", price.PriceID))
	case amendment && !BillsEveryPeriod(price.PriceType):
		p.Body(field+".priceId", "not_allowed", fmt.Sprintf("Price '%s' is %s: an amendment replaces the subscription's recurring items (fixed_recurring or usage_metered); bill a one-time charge with a one_off quote.", price.PriceID, price.PriceType))
	case subscriptionQuote && BillsEveryPeriod(price.PriceType):
		count := int64(1)
		if price.BillingIntervalCount != nil {
			count = *price.BillingIntervalCount
		}
		unit := ""
		if price.BillingInterval != nil {
			unit = *price.BillingInterval
		}
		if iv.first < 0 {
			*iv = subscriptionInterval{first: i, unit: unit, count: count}
		} else if unit != iv.unit || count != iv.count {
			p.Body(field+".priceId", "interval_mismatch", fmt.Sprintf("Price '%s' bills every %d %s; every recurring line of a subscription must bill on the same interval as lines[%d] (every %d %s).", price.PriceID, count, unit, iv.first, iv.count, iv.unit))
		}
	}
}

// MaxTrialDays bounds a quote line's trialDays.
const MaxTrialDays = 730

// trialDaysProblems records what is wrong with a line's trialDays: only a subscription_creation
// quote's recurring lines start a trial, of 1 to MaxTrialDays days.
func trialDaysProblems(orderType, field string, price Price, days int64, p *Problems) {
	switch {
	case orderType != OrderSubscriptionCreation:
		p.Body(field+".trialDays", "not_allowed", "trialDays starts a subscription's trial: only a subscription_creation quote's lines take it.")
	case !BillsEveryPeriod(price.PriceType):
		p.Body(field+".trialDays", "not_allowed", fmt.Sprintf("Price '%s' is %s: only a recurring line (fixed_recurring or usage_metered) starts a trial.", price.PriceID, price.PriceType))
	case days < 1 || days > MaxTrialDays:
		p.Body(field+".trialDays", "out_of_range", fmt.Sprintf("trialDays must be between 1 and %d.", MaxTrialDays))
	}
}
