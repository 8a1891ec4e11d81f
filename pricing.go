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
	Quantity     int64 // 0 for a usage_metered line: its usage is measured for the period
	UnitAmount   int64
	UnitOverride bool  // the unit amount is the line's own, not the price's
	Amount       int64 // Quantity × UnitAmount; 0 when that is too large (a problem is recorded)
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
	priceUnitAmount(doc, field, price, in, &l, p)
	if l.Quantity > 0 && l.UnitAmount > MaxAmount/l.Quantity {
		p.Body(field+".quantity", "amount_too_large", fmt.Sprintf("quantity × unitAmount may be at most %d minor units per line.", int64(MaxAmount)))
	} else {
		l.Amount = l.Quantity * l.UnitAmount
	}
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
