package remit

import (
	"fmt"
	"slices"
	"time"
)

// Price types (docs/catalog-and-balance.md).
const (
	PriceFixedRecurring  = "fixed_recurring"
	PriceFixedOneTime    = "fixed_one_time"
	PriceUsageMetered    = "usage_metered"
	PricePayWhatYouWant  = "pay_what_you_want"
	PriceFree            = "free"
	PriceCreditGrant     = "credit_grant"
	PriceCreditTopUp     = "credit_top_up"
	defaultIntervalCount = 1
)

// Billing intervals and the largest count of each: one bill covers at most three years.
var maxIntervalCount = map[string]int64{"day": 1095, "week": 156, "month": 36, "year": 3}

// Price is a catalog price. UnitAmount is nil for prices whose amount is given on the quote or
// invoice line (pay_what_you_want, credit_top_up); BillingInterval and BillingIntervalCount are nil
// for one-time prices.
type Price struct {
	Object               string             `json:"object"` // "price"
	PriceID              string             `json:"priceId"`
	ProductID            string             `json:"productId"`
	Name                 string             `json:"name"`
	PriceType            string             `json:"priceType"`
	Currency             string             `json:"currency"`
	BillingInterval      *string            `json:"billingInterval"`
	BillingIntervalCount *int64             `json:"billingIntervalCount"`
	UnitAmount           *int64             `json:"unitAmount"`
	MeterID              *string            `json:"meterId"`
	Tiers                []Tier             `json:"tiers"`
	TiersMode            *string            `json:"tiersMode"`
	TransformQuantity    *TransformQuantity `json:"transformQuantity"`
	Nickname             *string            `json:"nickname"` // the merchant's own label, never shown to customers
	Active               bool               `json:"active"`   // false: archived (PriceStates)
	Metadata             map[string]string  `json:"metadata"`
	Environment          Environment        `json:"environment"`
	MerchantAccountID    string             `json:"merchantAccountId"`
	CreatedAt            time.Time          `json:"createdAt"`
}

// Recurring reports whether the price bills on an interval.
func (p Price) Recurring() bool { return p.BillingInterval != nil }

// CheckPrice applies the rules of a price about to be created (docs/catalog-and-balance.md
// "Prices": the fields each priceType takes, the interval bounds, a supported currency, the
// metadata rule) and fills the defaults (billingIntervalCount 1 for recurring prices, unitAmount
// 0 for free). It records every problem in probs; the schema's own bounds (unitAmount >= 0,
// count >= 1, enums) are checked by the contract, and both lists are answered together.
func CheckPrice(p *Price, probs *Problems) {
	checkPriceType(p, probs)
	checkTiered(p, probs)
	CurrencyProblem(probs, InBody, "currency", p.Currency)
	MetadataProblems(probs, "metadata", p.Metadata)
}

func checkPriceType(p *Price, probs *Problems) {
	t := p.PriceType
	need := func(field string, present bool) {
		if !present {
			probs.Body(field, "required", fmt.Sprintf("%s is required for priceType %s.", field, t))
		}
	}
	forbid := func(field string, present bool, why string) {
		if present {
			probs.Body(field, "not_allowed", fmt.Sprintf("%s is not allowed for priceType %s: %s", field, t, why))
		}
	}
	hasInterval, hasAmount, hasMeter := p.BillingInterval != nil, p.UnitAmount != nil, p.MeterID != nil
	switch t {
	case PriceFixedRecurring:
		need("billingInterval", hasInterval)
		need("unitAmount", hasAmount || p.Tiers != nil)
		forbid("meterId", hasMeter, "only usage_metered prices bill a meter.")
	case PriceFixedOneTime, PriceCreditGrant:
		need("unitAmount", hasAmount)
		forbid("billingInterval", hasInterval, "the price bills once; use fixed_recurring for a recurring charge.")
		forbid("meterId", hasMeter, "only usage_metered prices bill a meter.")
	case PriceUsageMetered:
		need("meterId", hasMeter)
		need("unitAmount", hasAmount || p.Tiers != nil)
		need("billingInterval", hasInterval)
	case PriceFree:
		if hasAmount && *p.UnitAmount != 0 {
			probs.Body("unitAmount", "not_allowed", "unitAmount must be 0 or omitted for priceType free.")
		}
		forbid("meterId", hasMeter, "only usage_metered prices bill a meter.")
		zero := int64(0)
		p.UnitAmount = &zero
	case PricePayWhatYouWant, PriceCreditTopUp:
		forbid("unitAmount", hasAmount, "the amount is given on the quote or invoice line (its unitAmount).")
		forbid("billingInterval", hasInterval, "the price bills once, for the amount given on the line.")
		forbid("meterId", hasMeter, "only usage_metered prices bill a meter.")
	}
	intervalForbidden := t == PriceFixedOneTime || t == PriceCreditGrant || t == PricePayWhatYouWant || t == PriceCreditTopUp
	if p.BillingIntervalCount != nil && (!hasInterval || intervalForbidden) {
		probs.Body("billingIntervalCount", "not_allowed", fmt.Sprintf("billingIntervalCount is allowed only with billingInterval, which a priceType %s price does not have.", t))
	}
	if hasInterval && !intervalForbidden {
		if p.BillingIntervalCount == nil {
			n := int64(defaultIntervalCount)
			p.BillingIntervalCount = &n
		} else if max, ok := maxIntervalCount[*p.BillingInterval]; ok && *p.BillingIntervalCount > max {
			probs.Body("billingIntervalCount", "out_of_range", fmt.Sprintf("billingIntervalCount may be at most %d for billingInterval %s (one bill covers at most three years).", max, *p.BillingInterval))
		}
	}
}

// checkTiered applies the rules of tiers and packages (docs/usage.md "Pricing"): only
// fixed_recurring and usage_metered prices take them; a tiered price has no unitAmount of its own
// (TieredPriceProblems, ValidateTiers); a transformQuantity divides by at least 1 and rounds up or
// down (ValidateTransform).
func checkTiered(p *Price, probs *Problems) {
	mode := ""
	if p.TiersMode != nil {
		mode = *p.TiersMode
	}
	if p.PriceType != PriceFixedRecurring && p.PriceType != PriceUsageMetered {
		why := "only fixed_recurring and usage_metered prices are priced by tiers or packages."
		for _, f := range []struct {
			field   string
			present bool
		}{{"tiers", p.Tiers != nil}, {"tiersMode", p.TiersMode != nil}, {"transformQuantity", p.TransformQuantity != nil}} {
			if f.present {
				probs.Body(f.field, "not_allowed", fmt.Sprintf("%s is not allowed for priceType %s: %s", f.field, p.PriceType, why))
			}
		}
		return
	}
	TieredPriceProblems(probs, "", p.UnitAmount, mode, p.Tiers)
	ValidateTransform(probs, "", p.TransformQuantity)
}

// Pricing is how the price turns a quantity into an amount: its tiers, else its unit amount (or
// unit, a line's own), after its package transform.
func (p Price) Pricing(unit int64) UsagePricing {
	u := UsagePricing{UnitAmount: unit, Tiers: p.Tiers, Transform: p.TransformQuantity}
	if p.TiersMode != nil {
		u.Mode = *p.TiersMode
	}
	return u
}

// Tiered reports whether the price is priced by tiers.
func (p Price) Tiered() bool { return len(p.Tiers) > 0 }

// Coupon is a discount: PercentOff, or AmountOff in Currency.
type Coupon struct {
	Object            string            `json:"object"` // "coupon"
	CouponID          string            `json:"couponId"`
	Name              string            `json:"name"`
	PercentOff        *int64            `json:"percentOff"`
	AmountOff         *int64            `json:"amountOff"`
	Currency          *string           `json:"currency"`
	Active            bool              `json:"active"` // false: archived (CouponStates)
	Metadata          map[string]string `json:"metadata"`
	Environment       Environment       `json:"environment"`
	MerchantAccountID string            `json:"merchantAccountId"`
	CreatedAt         time.Time         `json:"createdAt"`
}

// CheckCoupon records every problem with a coupon about to be created: exactly one of percentOff
// and amountOff, currency with and only with amountOff, the metadata rule.
func CheckCoupon(c *Coupon, probs *Problems) {
	checkCouponAmount(c, probs)
	MetadataProblems(probs, "metadata", c.Metadata)
}

func checkCouponAmount(c *Coupon, probs *Problems) {
	switch {
	case c.PercentOff != nil && c.AmountOff != nil:
		probs.Body("percentOff", "mutually_exclusive", "Give either percentOff or amountOff (with currency), not both.")
		probs.Body("amountOff", "mutually_exclusive", "Give either percentOff or amountOff (with currency), not both.")
	case c.PercentOff == nil && c.AmountOff == nil:
		probs.Body("percentOff", "required", "Give percentOff (1-100), or amountOff with currency.")
	}
	switch {
	case c.AmountOff != nil && c.Currency == nil:
		probs.Body("currency", "required", "currency is required with amountOff.")
	case c.AmountOff == nil && c.Currency != nil:
		probs.Body("currency", "not_allowed", "currency is given only with amountOff; a percentOff coupon applies in every currency.")
	case c.Currency != nil:
		CurrencyProblem(probs, InBody, "currency", *c.Currency)
	}
}

// PriceRef is where a request names a price: its ID and the field ("lines[0].priceId").
type PriceRef struct{ PriceID, Field string }

// CheckPricesNamed refuses an archived price that a new quote, invoice or subscription item names
// (PriceStates: 409 with the price's currentState and details.field), unless it is among kept (the
// prices a draft or a subscription already bills, which stay). Prices missing from prices are
// not its concern (not found, answered where they are looked up).
func CheckPricesNamed(prices map[string]Price, refs []PriceRef, kept []string) error {
	for _, r := range refs {
		pr, ok := prices[r.PriceID]
		if !ok || slices.Contains(kept, r.PriceID) {
			continue
		}
		if err := PriceStates.Check(pr.PriceID, pr.Status(), ActionName); err != nil {
			return err.(*Error).With("field", r.Field)
		}
	}
	return nil
}

// CheckCouponsListed refuses an archived coupon that a new quote or invoice lists (CouponStates:
// 409 with the coupon's currentState and details.field couponIds[i]).
func CheckCouponsListed(coupons map[string]Coupon, ids []string) error {
	for i, id := range ids {
		c, ok := coupons[id]
		if !ok {
			continue
		}
		if err := CouponStates.Check(c.CouponID, c.Status(), ActionList); err != nil {
			return err.(*Error).With("field", fmt.Sprintf("couponIds[%d]", i))
		}
	}
	return nil
}
