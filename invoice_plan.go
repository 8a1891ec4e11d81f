package remit

import (
	"fmt"
	"time"
)

// PlanDraftInvoice decides a draft invoice from its request and what the request references,
// already read: its customer and billing account, and the prices and coupons that exist (by ID).
// It returns the draft (lines priced, no figures yet: the engine computes them with usage and tax)
// and the coupons' terms, or not_found for a missing price or coupon (at its field), or one
// validation_failure listing every problem. IDs and times are the caller's to set.
func PlanDraftInvoice(in InvoiceDraftInput, cust Customer, ba BillingAccount, prices map[string]Price, coupons map[string]Coupon) (Invoice, []CouponTerms, error) {
	var p Problems
	CheckInvoiceRequest(in, &p)
	currency := validCurrency(in.Currency)
	BillingAccountProblems(ForInvoice, currency, cust, ba, &p)
	inv := Invoice{
		Object: "invoice", InvoiceID: in.InvoiceID, CustomerID: cust.CustomerID, BillingAccountID: ba.BillingAccountID,
		Currency: in.Currency, Status: InvoiceDraft, CollectionMethod: ba.CollectionMethod,
		SubscriptionID: in.SubscriptionID, QuoteID: in.QuoteID, PeriodStart: in.PeriodStart, PeriodEnd: in.PeriodEnd,
		CouponIDs: append([]string{}, in.CouponIDs...), Metadata: CopyMetadata(in.Metadata), AutoFinalizeAt: in.AutoFinalizeAt,
		DunningStatus: DunningNone, DaysUntilDue: in.DaysUntilDue, Memo: in.Memo,
	}
	lines, err := PlanInvoiceLines(in.Lines, in.LinePeriods, inv.PeriodStart, currency, prices, &p)
	if err != nil {
		return Invoice{}, nil, err
	}
	inv.Lines = lines
	terms, err := CouponsFor(ForInvoice, currency, inv.CouponIDs, coupons, &p)
	if err != nil {
		return Invoice{}, nil, err
	}
	return inv, terms, p.Err()
}

// PlanInvoiceLines turns the lines a request gives an invoice in currency into its lines (not yet
// priced with usage: the engine's priceDraft does that), recording every problem in p; a price
// missing from prices is not_found at its line. periods optionally gives each line its own
// service period; periodStart is the invoice's, which a usage_metered line needs when it has none.
func PlanInvoiceLines(lines []InvoiceLineInput, periods []*[2]time.Time, periodStart *time.Time, currency string, prices map[string]Price, p *Problems) ([]InvoiceLine, error) {
	var out []InvoiceLine
	for i, li := range lines {
		field := fmt.Sprintf("lines[%d]", i)
		price, ok := prices[li.PriceID]
		if !ok {
			return nil, NotFound("price", li.PriceID, field+".priceId")
		}
		pl := PriceLine(ForInvoice, field, currency, price, li, p)
		l := InvoiceLine{Object: "invoice_line", PriceID: price.PriceID, PriceType: price.PriceType, LineType: price.LineType(),
			MeterID: price.MeterID, Description: pl.Description, Quantity: pl.Quantity, UnitAmount: pl.UnitAmount, UnitOverride: pl.UnitOverride,
			TierBreakdown: pl.Breakdown}
		if price.TransformQuantity != nil {
			units := pl.Units
			l.UsageQuantity = &units
		}
		if i < len(periods) && periods[i] != nil {
			s, e := periods[i][0], periods[i][1]
			l.PeriodStart, l.PeriodEnd = &s, &e
		}
		if price.PriceType == PriceUsageMetered && periodStart == nil && l.PeriodStart == nil {
			p.Body("periodStart", "required", "periodStart and periodEnd are required when a line has a usage_metered price: usage is billed for that period.")
		}
		out = append(out, l)
	}
	return out, nil
}

// CheckInvoiceRequest records the problems an invoice request shows on its own, before anything it
// references is read: its currency, metadata, period and lines. The edge runs it on a body that
// breaks the contract too, so one 422 lists both kinds.
func CheckInvoiceRequest(in InvoiceDraftInput, p *Problems) {
	CurrencyProblem(p, InBody, "currency", in.Currency)
	MetadataProblems(p, "metadata", in.Metadata)
	if in.PeriodStart != nil && in.PeriodEnd != nil && !in.PeriodEnd.After(*in.PeriodStart) {
		p.Body("periodEnd", "before_start", "periodEnd must be later than periodStart.")
	}
	if (in.PeriodStart == nil) != (in.PeriodEnd == nil) {
		p.Body("periodEnd", "required", "Give both periodStart and periodEnd, or neither.")
	}
	if len(in.Lines) == 0 {
		p.Body("lines", "required", "An invoice needs at least one line.")
	}
}

// BillingAccountProblems records what does not fit between a document's customer and billing
// account: the account belongs to another customer, or bills in another currency than the
// document's (currency "" when the document's own is invalid: not compared).
func BillingAccountProblems(doc LineDocument, currency string, cust Customer, ba BillingAccount, p *Problems) {
	if ba.CustomerID != cust.CustomerID {
		p.Body("billingAccountId", "customer_mismatch", fmt.Sprintf("Billing account '%s' belongs to another customer than '%s'.", ba.BillingAccountID, cust.CustomerID))
	}
	if currency != "" && ba.Currency != currency {
		p.Body("currency", "currency_mismatch", fmt.Sprintf("The %s's currency must be its billing account's currency, %s.", doc, ba.Currency))
	}
}

// validCurrency is currency when Remit accepts it, else "" (see PriceLine).
func validCurrency(currency string) string {
	if CheckCurrency(currency) != "" {
		return ""
	}
	return currency
}
