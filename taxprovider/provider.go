// Package taxprovider is where an invoice's tax comes from (docs/invoices-and-tax.md, "Tax
// providers"): the built-in rate table (package tax, pure) or Stripe Tax (stripe.go, I/O). The
// engine (app) asks the deployment's provider for a calculation on each line's taxable amount,
// records a finalized invoice's tax transaction from its calculation, and records the reversal of
// a credit note or a void. The arithmetic around the tax (discounts, prepaid balance, totals) stays
// in package remit; the rounding of the built-in table stays in package tax.
package taxprovider

import (
	"context"
	"errors"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/tax"
)

// Names of the providers (REMIT_TAX_PROVIDER).
const (
	Builtin = "builtin"
	Stripe  = "stripe"
)

// ErrUnavailable wraps every failure to get an answer from the provider (a refused connection, a
// timeout, a 5xx, an answer that cannot be read): the engine answers 503 tax_provider_unavailable
// at finalization and keeps a draft's previous tax at a refresh.
var ErrUnavailable = errors.New("tax provider unavailable")

// Request is what a calculation is asked on: where the customer is taxed, whether the customer is
// exempt, and each line's taxable amount (after discounts and prepaid balance), in the invoice's
// order.
type Request struct {
	Reference string         // the invoice's ID
	Currency  string         // ISO 4217, upper case
	Address   *remit.Address // the billing account's tax address, else the customer's; nil: none
	Exempt    bool
	Lines     []Line
}

// Line is one invoice line as the provider sees it.
type Line struct {
	Reference string // the invoice line's ID
	Taxable   int64  // minor units
}

// Calculation is a provider's answer: its ID (none for the built-in table) and the tax of each
// line in each jurisdiction (TaxOnLine.Line is the index in Request.Lines).
type Calculation struct {
	ID    string
	Taxes []remit.TaxOnLine
}

// Reversal is what a credit note or a void gives back of a recorded transaction.
type Reversal struct {
	Reference           string // the reversal's tax transaction ID in Remit (unique)
	OriginalTransaction string // the provider's transaction of the sale
	Full                bool   // a void: everything; else FlatAmount
	FlatAmount          int64  // what the credit note gives back, tax included (positive minor units)
}

// Provider is a source of tax.
type Provider interface {
	// Name is "builtin" or "stripe" (a tax transaction's provider).
	Name() string
	// Calculate answers the tax of req's lines.
	Calculate(ctx context.Context, req Request) (Calculation, error)
	// Record makes the provider's transaction of a finalized invoice from its calculation and
	// returns its ID ("" when the provider keeps none).
	Record(ctx context.Context, calculationID, reference string) (string, error)
	// Reverse records a reversal of a recorded transaction and returns its ID ("" when the
	// provider keeps none).
	Reverse(ctx context.Context, r Reversal) (string, error)
}

// Table is the built-in provider: the rate table, computed in process (tax.Compute), never
// unavailable, keeping no transactions of its own.
type Table struct{ Rates *tax.Table }

var _ Provider = Table{}

// Name implements Provider.
func (Table) Name() string { return Builtin }

// Calculate implements Provider.
func (t Table) Calculate(_ context.Context, req Request) (Calculation, error) {
	var comps []tax.Component
	if req.Address != nil {
		region := ""
		if req.Address.Region != nil {
			region = *req.Address.Region
		}
		comps = t.Rates.Lookup(req.Address.Country, region)
	}
	return Calculation{Taxes: tax.Compute(Taxable(req.Lines), comps, req.Exempt)}, nil
}

// Record implements Provider: the table keeps no transactions.
func (Table) Record(context.Context, string, string) (string, error) { return "", nil }

// Reverse implements Provider: the table keeps no transactions.
func (Table) Reverse(context.Context, Reversal) (string, error) { return "", nil }

// Taxable is the lines' taxable amounts, in order.
func Taxable(lines []Line) []int64 {
	out := make([]int64, len(lines))
	for i, l := range lines {
		out[i] = l.Taxable
	}
	return out
}
