package taxprovider

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v83"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// StripeTax is the Stripe Tax provider (docs/invoices-and-tax.md, "Tax providers"), on Stripe's
// official Go library: a calculation (POST /v1/tax/calculations) of each line's taxable amount at
// the customer's address, a finalized invoice's tax transaction made from its calculation
// (POST /v1/tax/transactions/create_from_calculation), and a credit note's or a void's reversal
// (POST /v1/tax/transactions/create_reversal). Every failure to get an answer is ErrUnavailable.
type StripeTax struct {
	client *stripe.Client
}

var _ Provider = (*StripeTax)(nil)

// StripeConfig is the provider's configuration.
type StripeConfig struct {
	SecretKey string        // sk_… (REMIT_STRIPE_SECRET_KEY)
	APIURL    string        // replaces Stripe's API base when set (the tests point it at stripe-mock)
	Timeout   time.Duration // one call (REMIT_PROCESSOR_TIMEOUT); 0: 10 s
}

// NewStripe returns the Stripe Tax provider for cfg. A call is tried once more after a network
// failure (stripe-go's retry, with the same Idempotency-Key), then the provider is unavailable;
// stripe-go's own log is off (the engine logs what it does about a failure).
func NewStripe(cfg StripeConfig) *StripeTax {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	bc := &stripe.BackendConfig{HTTPClient: &http.Client{Timeout: cfg.Timeout, Transport: telemetry.Transport(nil)},
		MaxNetworkRetries: stripe.Int64(1), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}} // the engine logs failures
	if cfg.APIURL != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.APIURL, "/"))
	}
	return &StripeTax{client: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))}
}

// Name implements Provider.
func (*StripeTax) Name() string { return Stripe }

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: stripe %s: %v", ErrUnavailable, what, err)
}

// Calculate implements Provider. Only lines with something taxable are sent (Stripe takes positive
// amounts), each with its invoice line's ID as its reference; without an address nothing is owed
// and Stripe is not asked. An exempt customer is sent as taxability_override customer_exempt.
func (s *StripeTax) Calculate(ctx context.Context, req Request) (Calculation, error) {
	var sent []int // index in req.Lines of each line item sent
	params := &stripe.TaxCalculationCreateParams{Currency: stripe.String(strings.ToLower(req.Currency))}
	for i, l := range req.Lines {
		if l.Taxable <= 0 {
			continue
		}
		sent = append(sent, i)
		params.LineItems = append(params.LineItems, &stripe.TaxCalculationCreateLineItemParams{
			Amount: stripe.Int64(l.Taxable), Reference: stripe.String(l.Reference), TaxBehavior: stripe.String("exclusive")})
	}
	if len(sent) == 0 || req.Address == nil {
		return Calculation{}, nil
	}
	a := req.Address
	params.CustomerDetails = &stripe.TaxCalculationCreateCustomerDetailsParams{AddressSource: stripe.String("billing"),
		Address: &stripe.AddressParams{Country: stripe.String(a.Country), Line1: stripe.String(a.Line1), City: stripe.String(a.City),
			PostalCode: stripe.String(a.PostalCode), State: a.Region, Line2: a.Line2}}
	if req.Exempt {
		params.CustomerDetails.TaxabilityOverride = stripe.String("customer_exempt")
	}
	params.AddExpand("line_items")
	calc, err := s.client.V1TaxCalculations.Create(ctx, params)
	if err != nil {
		return Calculation{}, unavailable("tax calculation", err)
	}
	items, err := s.lineItems(ctx, calc)
	if err != nil {
		return Calculation{}, err
	}
	return Calculation{ID: calc.ID, Taxes: taxesOf(req, sent, items)}, nil
}

// lineItems is the calculation's line items, all of them: the expanded first page, then the rest.
func (s *StripeTax) lineItems(ctx context.Context, calc *stripe.TaxCalculation) ([]*stripe.TaxCalculationLineItem, error) {
	if calc.LineItems == nil {
		return nil, nil
	}
	if !calc.LineItems.HasMore {
		return calc.LineItems.Data, nil
	}
	var all []*stripe.TaxCalculationLineItem
	for li, err := range s.client.V1TaxCalculations.ListLineItems(ctx, &stripe.TaxCalculationListLineItemsParams{Calculation: stripe.String(calc.ID)}) {
		if err != nil {
			return nil, unavailable("tax calculation line items", err)
		}
		all = append(all, li)
	}
	return all, nil
}

// taxesOf maps Stripe's line items to the lines asked on: by reference, else by position among the
// lines sent (Stripe answers them in order). Each jurisdiction of a line's tax breakdown is one tax
// (country, or country-state); a line item without a breakdown is one tax of its amount_tax at the
// customer's country.
func taxesOf(req Request, sent []int, items []*stripe.TaxCalculationLineItem) []remit.TaxOnLine {
	byRef := make(map[string]int, len(sent))
	for _, i := range sent {
		byRef[req.Lines[i].Reference] = i
	}
	var out []remit.TaxOnLine
	for pos, li := range items {
		line, ok := byRef[li.Reference]
		if !ok {
			if pos >= len(sent) {
				continue
			}
			line = sent[pos]
		}
		if len(li.TaxBreakdown) == 0 {
			if li.AmountTax != 0 {
				taxable := req.Lines[line].Taxable
				out = append(out, remit.TaxOnLine{Line: line, Jurisdiction: strings.ToUpper(req.Address.Country),
					RatePPM: ratio(li.AmountTax, taxable), TaxableAmount: taxable, TaxAmount: li.AmountTax})
			}
			continue
		}
		for _, b := range li.TaxBreakdown {
			out = append(out, remit.TaxOnLine{Line: line, Jurisdiction: jurisdiction(b, req.Address.Country),
				RatePPM: ratePPM(b, req.Lines[line].Taxable), TaxableAmount: b.TaxableAmount, TaxAmount: b.Amount})
		}
	}
	return out
}

// jurisdiction is "COUNTRY" or "COUNTRY-STATE" of a breakdown (the customer's country when Stripe
// names none).
func jurisdiction(b *stripe.TaxCalculationLineItemTaxBreakdown, country string) string {
	if b.Jurisdiction == nil || b.Jurisdiction.Country == "" {
		return strings.ToUpper(country)
	}
	j := strings.ToUpper(b.Jurisdiction.Country)
	if b.Jurisdiction.State != "" {
		j += "-" + strings.ToUpper(b.Jurisdiction.State)
	}
	return j
}

// ratePPM is a breakdown's rate in parts per million: its percentage_decimal ("8.875" → 88750),
// else the ratio of its tax to its taxable amount.
func ratePPM(b *stripe.TaxCalculationLineItemTaxBreakdown, taxable int64) int64 {
	if b.TaxRateDetails != nil && b.TaxRateDetails.PercentageDecimal != "" {
		if pct, err := strconv.ParseFloat(b.TaxRateDetails.PercentageDecimal, 64); err == nil && pct >= 0 && pct <= 100 {
			return int64(math.Round(pct * 10_000))
		}
	}
	if b.TaxableAmount != 0 {
		taxable = b.TaxableAmount
	}
	return ratio(b.Amount, taxable)
}

func ratio(taxAmount, taxable int64) int64 {
	if taxable <= 0 {
		return 0
	}
	return remit.RoundHalfUp(taxAmount*1_000_000, taxable)
}

// Record implements Provider: the transaction is made from the calculation, with the Remit tax
// transaction's ID as its reference and, with the calculation's, as Stripe's Idempotency-Key.
func (s *StripeTax) Record(ctx context.Context, calculationID, reference string) (string, error) {
	if calculationID == "" {
		return "", nil
	}
	params := &stripe.TaxTransactionCreateFromCalculationParams{Calculation: stripe.String(calculationID), Reference: stripe.String(reference)}
	params.SetIdempotencyKey("remit-tax-" + reference + "-" + calculationID)
	t, err := s.client.V1TaxTransactions.CreateFromCalculation(ctx, params)
	if err != nil {
		return "", unavailable("tax transaction", err)
	}
	return t.ID, nil
}

// Reverse implements Provider: mode full for a void, else partial by the flat amount given back
// (negative, tax included), with the reversal's Remit ID as reference and Idempotency-Key.
func (s *StripeTax) Reverse(ctx context.Context, r Reversal) (string, error) {
	if r.OriginalTransaction == "" {
		return "", nil
	}
	params := &stripe.TaxTransactionCreateReversalParams{OriginalTransaction: stripe.String(r.OriginalTransaction),
		Reference: stripe.String(r.Reference), Mode: stripe.String("full")}
	if !r.Full {
		params.Mode, params.FlatAmount = stripe.String("partial"), stripe.Int64(-r.FlatAmount)
	}
	params.SetIdempotencyKey("remit-tax-" + r.Reference)
	t, err := s.client.V1TaxTransactions.CreateReversal(ctx, params)
	if err != nil {
		return "", unavailable("tax reversal", err)
	}
	return t.ID, nil
}
