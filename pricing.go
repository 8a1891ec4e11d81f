package remit

import "fmt"

// Pricing a requested line, the one rule for invoices and quotes (docs/invoices-and-tax.md and
// docs/quotes-and-subscriptions.md "Lines"): the line takes its price's type and description, a
// quantity (1 by default; a usage_metered line's quantity is measured, not given), and a unit
// amount (the line's own, else the price's; pay-what-you-want and top-up prices have none, so
// the line must give one). Quantity × unit amount is at most MaxAmount.

// MaxAmount is the largest amount of money Remit accepts in one figure, in minor units.
const MaxAmount = 999_999_999_999

// LineDocument names the document a line is priced for, in the words of its problems.
type LineDocument string

const (
	ForInvoice LineDocument = "invoice"
	ForQuote   LineDocument = "quote"
)

// usageQuantityNote says why a usage_metered line takes no quantity, per document.
var usageQuantityNote = map[LineDocument]string{
	ForInvoice: "it is the usage recorded in the period.",
	ForQuote:   "the usage recorded in each period is billed in arrears.",
}

// LineType is the kind of line a price bills: recurring, usage or one_time.
func (p Price) LineType() string {
	switch p.PriceType {
	case PriceFixedRecurring:
		return LineRecurring
	case PriceUsageMetered:
		return LineUsage
	}
	return LineOneTime
}

// BillsEveryPeriod reports whether a price bills every period of a subscription (fixed_recurring
// or usage_metered).
func BillsEveryPeriod(priceType string) bool {
	return priceType == PriceFixedRecurring || priceType == PriceUsageMetered
}

// PricedRequest is a requested line priced against its catalog price.
type PricedRequest struct {
	Price        Price
	Description  string
	Quantity     int64 // billed: packages for a package price; 0 for a usage_metered line (measured for the period)
	Units        int64 // the quantity asked for, before packages
	UnitAmount   int64 // 0 for a tiered price (its tiers give the amounts)
	UnitOverride bool  // the unit amount is the line's own, not the price's
	Amount       int64 // the priced amount (LineAmount); 0 when it is too large (a problem is recorded)
	Breakdown    []TierBreakdown
}

// PricedByTiersOrPackages reports whether the price's amounts come from tiers or packages rather
// than a plain unit amount × quantity.
func (p Price) PricedByTiersOrPackages() bool { return p.Tiered() || p.TransformQuantity != nil }

// LineAmount prices units of a line of price: a line with its own unit amount (override) is units ×
// that amount; else the price's pricing (packages, then tiers or its unit amount). It returns the
// billed quantity (packages for a package price), the amount and a tiered line's breakdown. An
// amount above MaxAmount is ErrAmountTooLarge.
func LineAmount(price Price, unit int64, override bool, units int64) (quantity, amount int64, breakdown []TierBreakdown, err error) {
	if override || !price.PricedByTiersOrPackages() {
		amount, err = mulAmount(units, unit)
		return units, amount, nil, err
	}
	amount, breakdown, err = price.Pricing(unit).Amount(units)
	return PackageQuantity(units, price.TransformQuantity), amount, breakdown, err
}

// PriceLine prices the requested line in of a doc in currency against its price, recording every
// problem under field ("lines[2]"). currency is "" when the document's own currency is invalid:
// the line's currency is then not compared (the currency's problem is reported once, by itself).
func PriceLine(doc LineDocument, field, currency string, price Price, in InvoiceLineInput, p *Problems) PricedRequest {
	l := PricedRequest{Price: price, Description: price.Name, Quantity: 1}
	if in.Description != nil {
		l.Description = *in.Description
	}
	if currency != "" && price.Currency != currency {
		p.Body(field+".priceId", "currency_mismatch", fmt.Sprintf("Price '%s' is in %s; every line's price must be in the %s's currency %s.", price.PriceID, price.Currency, doc, currency))
	}
	switch {
	case price.PriceType == PriceUsageMetered:
		if in.Quantity != nil {
			p.Body(field+".quantity", "not_allowed", "quantity is measured for usage_metered prices: "+usageQuantityNote[doc])
		}
		l.Quantity = 0
	case in.Quantity != nil && *in.Quantity < 1:
		p.Body(field+".quantity", "out_of_range", "quantity must be at least 1.")
	case in.Quantity != nil:
		l.Quantity = *in.Quantity
	}
	if in.Agreed && price.PricedByTiersOrPackages() {
		in.UnitAmount = nil // the price's tiers or packages bill what was agreed
	}
	switch {
	case price.PricedByTiersOrPackages() && in.UnitAmount != nil && !in.Trial && !in.Prorated:
		p.Body(field+".unitAmount", "not_allowed", fmt.Sprintf("Price '%s' is priced by tiers or packages; leave unitAmount out.", price.PriceID))
	case price.Tiered() && in.UnitAmount == nil:
	default:
		priceUnitAmount(doc, field, price, in, &l, p)
	}
	l.Units = l.Quantity
	q, amount, bd, err := LineAmount(price, l.UnitAmount, l.UnitOverride, l.Quantity)
	if err != nil {
		p.Body(field+".quantity", "amount_too_large", AmountTooLargeMessage(price, l.UnitOverride))
		return l
	}
	l.Quantity, l.Amount, l.Breakdown = q, amount, bd
	return l
}

// priceUnitAmount sets the line's unit amount: its own, else its price's.
func priceUnitAmount(doc LineDocument, field string, price Price, in InvoiceLineInput, l *PricedRequest, p *Problems) {
	switch {
	case in.UnitAmount != nil && (*in.UnitAmount < 0 || *in.UnitAmount > MaxAmount):
		p.Body(field+".unitAmount", "out_of_range", fmt.Sprintf("unitAmount must be between 0 and %d minor units.", int64(MaxAmount)))
	case in.UnitAmount != nil:
		if price.PriceType == PriceFree && *in.UnitAmount != 0 {
			p.Body(field+".unitAmount", "not_allowed", "A free price's unit amount is 0.")
		}
		l.UnitAmount, l.UnitOverride = *in.UnitAmount, true
	case price.UnitAmount != nil:
		l.UnitAmount = *price.UnitAmount
	default:
		p.Body(field+".unitAmount", "required", fmt.Sprintf("unitAmount is required on the line for priceType %s: the amount is chosen per %s.", price.PriceType, doc))
	}
}

// CouponsFor resolves the coupons a document lists (ids, in order) from byID, the ones that exist:
// a missing one is not_found at its field; one listed twice, or taking an amount off in another
// currency than the document's (currency "" skips that comparison), is a problem recorded in p.
func CouponsFor(doc LineDocument, currency string, ids []string, byID map[string]Coupon, p *Problems) ([]CouponTerms, error) {
	var out []CouponTerms
	seen := map[string]bool{}
	for i, id := range ids {
		field := fmt.Sprintf("couponIds[%d]", i)
		c, ok := byID[id]
		if !ok {
			return nil, NotFound("coupon", id, field)
		}
		if seen[id] {
			p.Body(field, "duplicate", fmt.Sprintf("Coupon '%s' is listed twice; each coupon applies once.", id))
			continue
		}
		seen[id] = true
		t := CouponTerms{ID: c.CouponID}
		if c.PercentOff != nil {
			t.PercentOff = *c.PercentOff
		}
		if c.AmountOff != nil {
			t.AmountOff = *c.AmountOff
			if currency != "" && c.Currency != nil && *c.Currency != currency {
				p.Body(field, "currency_mismatch", fmt.Sprintf("Coupon '%s' takes an amount off in %s, not in the %s's currency %s.", c.CouponID, *c.Currency, doc, currency))
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// AmountTooLargeMessage says why a line's amount is refused as too large.
func AmountTooLargeMessage(price Price, override bool) string {
	if override || !price.PricedByTiersOrPackages() {
		return fmt.Sprintf("quantity × unitAmount may be at most %d minor units per line.", int64(MaxAmount))
	}
	return fmt.Sprintf("The amount price '%s' gives this quantity may be at most %d minor units per line.", price.PriceID, int64(MaxAmount))
}
