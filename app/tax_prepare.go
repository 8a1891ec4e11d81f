package app

import (
	"context"
	"errors"
	"reflect"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/taxprovider"
)

// The tax provider's call before the transaction (docs/invoices-and-tax.md "Tax providers"): an
// external provider (Stripe Tax) is asked in the prepare step of a finalization or a refresh, so
// that no transaction (and on SQLite, no other write) waits on the network. A first pass loads the
// document as the action will, in a transaction always rolled back, only to learn what the
// provider is to be asked; the provider is asked with nothing held; the action's transaction then
// takes that answer (or that failure) when it asks the very same thing, and asks itself otherwise
// (something changed in between). The built-in table needs none of this.

// taxAnswerKey keys, in a request's context, the prepared calculation (*taxAnswer).
type taxAnswerKey struct{}

// taxAnswer is a calculation asked before the transaction: capture marks the first pass (note the
// request, ask nothing); then req with its answer, calc or err.
type taxAnswer struct {
	capture bool
	req     taxprovider.Request
	calc    taxprovider.Calculation
	err     error
}

// errTaxCaptured ends the first pass once the request is known.
var errTaxCaptured = errors.New("app: the tax request is captured")

// preparedTax is what calculateTax does with a prepared answer: (answer, true, its error) to take
// it as the provider's (errTaxCaptured in the first pass), false to ask the provider.
func preparedTax(ctx context.Context, req taxprovider.Request) (taxprovider.Calculation, bool, error) {
	a, _ := ctx.Value(taxAnswerKey{}).(*taxAnswer)
	switch {
	case a == nil:
		return taxprovider.Calculation{}, false, nil
	case a.capture:
		a.req = req
		return taxprovider.Calculation{}, true, errTaxCaptured
	case reflect.DeepEqual(a.req, req):
		return a.calc, true, a.err
	}
	return taxprovider.Calculation{}, false, nil
}

// prepareTax runs pass (the action's loading and pricing) in a transaction rolled back to learn
// the request, asks the provider with no transaction open, and returns the context carrying the
// answer. Anything else the pass meets (not a draft, not found) is left to the action to answer.
func (co *core) prepareTax(ctx context.Context, pass func(ctx context.Context, tx *store.Tx) error) context.Context {
	if co.Config.TaxProvider == nil || store.InTx(ctx) {
		return ctx
	}
	a := &taxAnswer{capture: true}
	err := co.DB.RetryTx(context.WithValue(ctx, taxAnswerKey{}, a), pass)
	if !errors.Is(err, errTaxCaptured) {
		return ctx
	}
	call, cancel := co.taxCall(ctx)
	defer cancel()
	calc, err := co.TaxProvider().Calculate(call, a.req)
	return context.WithValue(ctx, taxAnswerKey{}, &taxAnswer{req: a.req, calc: calc, err: err})
}

// PrepareFinalizeInvoice is finalizeInvoice's prepare step: the finalization's calculation asked
// before its transaction (prepareTax).
func (iv *Invoicing) PrepareFinalizeInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) context.Context {
	return iv.prepareTax(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := iv.loadFinalization(ctx, tx, m, invoiceID, nil, micro(iv.Now(m)))
		return err
	})
}

// PrepareRefreshInvoice is refreshInvoice's prepare step: the refresh's calculation asked before
// its transaction (prepareTax).
func (iv *Invoicing) PrepareRefreshInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) context.Context {
	return iv.prepareTax(ctx, func(ctx context.Context, tx *store.Tx) error {
		inv, err := tx.GetInvoice(ctx, m.ID, invoiceID, store.Locked)
		if err != nil || !inv.Status.Allows(remit.ActionRefresh) {
			return err
		}
		var p remit.Problems
		coupons, err := iv.loadCoupons(ctx, tx.Q, m, inv, &p)
		if err != nil {
			return err
		}
		return iv.priceDraft(ctx, tx, m, &inv, coupons, micro(iv.Now(m)))
	})
}
