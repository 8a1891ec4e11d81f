package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/taxprovider"
)

// Invoices (docs/invoices-and-tax.md): drafts are priced from the catalog and recomputed by refresh;
// finalization assigns the gap-free number, applies prepaid balance, commits the tax transaction
// and then collects. The state rules live in this file: only a draft can be refreshed or
// finalized (checkDraft), only an open invoice can be voided.

// CreateInvoice creates a draft invoice whose lines and figures are computed at once, and emits
// invoice.created (and tax_transaction.created for its quoted tax).
//
// Errors: validation_failure (every problem), not_found (customer, billing account, price, coupon;
// details.field names where), conflict (invoiceId taken; an archived price or coupon,
// details.currentState).
func (iv *Invoicing) CreateInvoice(ctx context.Context, m remit.MerchantAccount, in remit.InvoiceDraftInput) (remit.Invoice, error) {
	return inTx(ctx, iv.DB, func(ctx context.Context, tx *store.Tx) (remit.Invoice, error) {
		in.RefuseArchived = true
		return iv.CreateDraftInvoice(ctx, tx, m, in, micro(iv.Now(m)))
	})
}

// CreateDraftInvoice is CreateInvoice inside the caller's transaction, at merchant time now (quotes
// and subscription renewals call it): load what the request names, decide the draft
// (remit.PlanDraftInvoice), price it, store it, quote its tax and emit.
func (iv *Invoicing) CreateDraftInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, in remit.InvoiceDraftInput, now time.Time) (remit.Invoice, error) {
	cust, ba, err := loadParties(ctx, tx.Q, m, in.CustomerID, in.BillingAccountID)
	if err != nil {
		return remit.Invoice{}, err
	}
	prices, err := tx.GetPrices(ctx, m.ID, linePriceIDs(in.Lines, func(l remit.InvoiceLineInput) string { return l.PriceID }))
	if err != nil {
		return remit.Invoice{}, err
	}
	couponsByID, err := tx.GetCoupons(ctx, m.ID, in.CouponIDs)
	if err != nil {
		return remit.Invoice{}, err
	}
	inv, coupons, err := remit.PlanDraftInvoice(in, cust, ba, prices, couponsByID)
	if err != nil {
		return remit.Invoice{}, err
	}
	if in.RefuseArchived {
		if err := catalogActive(prices, lineRefs(in.Lines), nil, couponsByID, in.CouponIDs); err != nil {
			return remit.Invoice{}, err
		}
	}
	inv.InvoiceID = cmp.Or(inv.InvoiceID, remit.NewID("inv"))
	inv.PeriodStart, inv.PeriodEnd, inv.AutoFinalizeAt = microPtr(inv.PeriodStart), microPtr(inv.PeriodEnd), microPtr(inv.AutoFinalizeAt)
	inv.Environment, inv.MerchantAccountID, inv.CreatedAt, inv.UpdatedAt = m.Environment, m.ID, now, now
	for i := range inv.Lines {
		inv.Lines[i].InvoiceLineID = remit.NewID("il")
	}
	if err := iv.priceDraft(ctx, tx, m, &inv, coupons, now); err != nil {
		return remit.Invoice{}, err
	}
	if err := duplicateAs(tx.InsertInvoice(ctx, inv), "invoice", "invoiceId", inv.InvoiceID); err != nil {
		return remit.Invoice{}, err
	}
	if inv.AutoFinalizeAt != nil {
		if err := iv.Schedule(ctx, tx, scopeOf(m), jobAutoFinalize, *inv.AutoFinalizeAt, autoFinalizeJob{InvoiceID: inv.InvoiceID}); err != nil {
			return remit.Invoice{}, err
		}
	}
	if err := iv.quoteTax(ctx, tx, m, &inv, now); err != nil {
		return remit.Invoice{}, err
	}
	return inv, iv.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoiceCreated, inv.InvoiceID, inv)
}

// loadParties reads the customer and the billing account a document names (not_found at
// customerId or billingAccountId).
func loadParties(ctx context.Context, q store.Q, m remit.MerchantAccount, customerID, billingAccountID string) (remit.Customer, remit.BillingAccount, error) {
	cust, err := q.GetCustomer(ctx, m.ID, customerID)
	err = remit.AtField(err, "customerId")
	if err != nil {
		return remit.Customer{}, remit.BillingAccount{}, err
	}
	ba, err := q.GetBillingAccount(ctx, m.ID, billingAccountID, store.Unlocked)
	err = remit.AtField(err, "billingAccountId")
	return cust, ba, err
}

// linePriceIDs lists the price of each line, to read them all in one query (store.Q.GetPrices).
func linePriceIDs[L any](lines []L, price func(L) string) []string {
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = price(l)
	}
	return ids
}

func microPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := micro(*t)
	return &v
}

// loadCoupons reads an invoice's coupons, in order (remit.CouponsFor).
func (iv *Invoicing) loadCoupons(ctx context.Context, q store.Q, m remit.MerchantAccount, inv remit.Invoice, p *remit.Problems) ([]remit.CouponTerms, error) {
	byID, err := q.GetCoupons(ctx, m.ID, inv.CouponIDs)
	if err != nil {
		return nil, err
	}
	return remit.CouponsFor(remit.ForInvoice, inv.Currency, inv.CouponIDs, byID, p)
}

// taxPlace is where the customer is taxed: the billing account's tax address, else the
// customer's address (nil: none, nothing owed); an exempt customer owes nothing.
func (iv *Invoicing) taxPlace(ctx context.Context, q store.Q, m remit.MerchantAccount, inv remit.Invoice) (*remit.Address, bool, error) {
	cust, ba, err := loadParties(ctx, q, m, inv.CustomerID, inv.BillingAccountID)
	if err != nil {
		return nil, false, err
	}
	addr := ba.TaxAddress
	if addr == nil {
		addr = cust.Address
	}
	return addr, cust.TaxExempt, nil
}

// calculateTax asks the deployment's tax provider (taxprovider.Provider) for the tax of inv's
// lines, once the arithmetic says what each is taxable on (in: its lines, coupons and, finalizing,
// prepaid balance), and returns it as the arithmetic takes it, with the provider's calculation ID.
// A provider that does not answer is taxprovider.ErrUnavailable. The call is made inside the
// caller's transaction unless the action's prepare step asked it before (tax_prepare.go).
func (iv *Invoicing) calculateTax(ctx context.Context, q store.Q, m remit.MerchantAccount, inv remit.Invoice, in remit.InvoiceFiguresInput) (remit.TaxFunc, string, error) {
	addr, exempt, err := iv.taxPlace(ctx, q, m, inv)
	if err != nil {
		return nil, "", err
	}
	var taxable []int64
	remit.ComputeInvoiceFigures(in, func(t []int64) []remit.TaxOnLine { taxable = t; return nil })
	req := taxprovider.Request{Reference: inv.InvoiceID, Currency: inv.Currency, Address: addr, Exempt: exempt}
	for i, l := range inv.Lines {
		req.Lines = append(req.Lines, taxprovider.Line{Reference: l.InvoiceLineID, Taxable: taxable[i]})
	}
	calc, prepared, err := preparedTax(ctx, req)
	if !prepared {
		call, cancel := iv.taxCall(ctx)
		defer cancel()
		calc, err = iv.TaxProvider().Calculate(call, req)
	}
	if err != nil {
		return nil, "", err
	}
	return func([]int64) []remit.TaxOnLine { return calc.Taxes }, calc.ID, nil
}

// previousTax is the tax a draft's lines carry now, as the arithmetic takes it: what a draft keeps
// when the provider does not answer its refresh (none for a draft never calculated).
func previousTax(inv remit.Invoice) remit.TaxFunc {
	var out []remit.TaxOnLine
	for i, l := range inv.Lines {
		for _, t := range l.Taxes {
			out = append(out, remit.TaxOnLine{Line: i, Jurisdiction: t.Jurisdiction, RatePPM: t.RatePPM,
				TaxableAmount: t.TaxableAmount, TaxAmount: t.TaxAmount})
		}
	}
	return func([]int64) []remit.TaxOnLine { return out }
}

// taxUnavailable is the 503 of an action that needs the tax provider's answer and did not get it;
// the transaction it is returned in rolls back, so nothing was applied.
func taxUnavailable(err error) error {
	if !errors.Is(err, taxprovider.ErrUnavailable) {
		return err
	}
	return &remit.Error{Code: remit.ETaxProviderUnavailable, Err: err,
		Message: "The tax provider did not answer; nothing was changed. Retry the request later with the same Idempotency-Key."}
}

// priceDraft recomputes a draft's quantities, unit amounts and figures: catalog prices (unless the
// line overrides them), usage in the period as it stands, coupons and tax. No prepaid balance is
// applied to a draft; that happens at finalization (finalizeInTx).
func (iv *Invoicing) priceDraft(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, coupons []remit.CouponTerms, now time.Time) error {
	prices, err := iv.linePrices(ctx, tx, m, *inv)
	if err != nil {
		return err
	}
	priced, err := iv.priceLines(ctx, tx, m, inv, prices, nil)
	if err != nil {
		return err
	}
	in := remit.InvoiceFiguresInput{Lines: priced, Coupons: coupons}
	taxOf, calcID, err := iv.calculateTax(ctx, tx.Q, m, *inv, in)
	stale := errors.Is(err, taxprovider.ErrUnavailable)
	if stale { // the draft keeps its previous tax and says so (taxStale); finalization asks again
		iv.Log.WarnContext(ctx, "tax provider unavailable: the draft keeps its previous tax", "invoiceId", inv.InvoiceID, "error", err)
		taxOf, err = previousTax(*inv), nil
	}
	if err != nil {
		return err
	}
	remit.ApplyFigures(inv, remit.ComputeInvoiceFigures(in, taxOf))
	inv.TaxStale, inv.TaxCalculationID = stale, calcID
	return nil
}

// linePrices reads the prices of an invoice's lines, by ID.
func (iv *Invoicing) linePrices(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice) (map[string]remit.Price, error) {
	return tx.GetPrices(ctx, m.ID, linePriceIDs(inv.Lines, func(l remit.InvoiceLine) string { return l.PriceID }))
}

// priceLines prices every line of inv again (priceLine) and returns them as the invoice
// arithmetic takes them, or one validation_failure naming every line (and the subtotal) too large.
// Finalizing, counted holds the seq of the last usage event counted by meter (lockUsage); nil
// for a draft.
func (iv *Invoicing) priceLines(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, prices map[string]remit.Price, counted map[string]int64) ([]remit.PricedLine, error) {
	var p remit.Problems
	priced := make([]remit.PricedLine, len(inv.Lines))
	var subtotal int64
	for i := range inv.Lines {
		l := &inv.Lines[i]
		price, ok := prices[l.PriceID]
		if !ok {
			return nil, remit.NotFound("price", l.PriceID, "")
		}
		if err := iv.priceLine(ctx, tx, m, *inv, l, price, counted); err != nil {
			if !errors.Is(err, remit.ErrAmountTooLarge) {
				return nil, err
			}
			p.Body(fmt.Sprintf("lines[%d].quantity", i), "amount_too_large", remit.AmountTooLargeMessage(price, l.UnitOverride))
			continue
		}
		meter := ""
		if l.MeterID != nil {
			meter = *l.MeterID
		}
		priced[i] = remit.PricedLine{LineType: l.LineType, PriceID: l.PriceID, MeterID: meter, Amount: l.Amount}
		subtotal += l.Amount
	}
	if subtotal > remit.MaxAmount {
		p.Body("lines", "amount_too_large", fmt.Sprintf("An invoice's subtotal may be at most %d minor units.", int64(remit.MaxAmount)))
	}
	return priced, p.Err()
}

// lockUsage takes, before a finalization reads usage, the running usage total's lock of the
// customer and each meter the invoice bills (in meter order, so that two finalizations never wait
// for each other in a circle): a concurrent void of usage then lands either before (the invoice
// excludes the event) or after (the void sees the invoice finalized and credits the difference).
// It returns, by meter, the seq of the last event counted: what the invoice bills (InvoiceLine.Billed).
func (iv *Invoicing) lockUsage(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, prices map[string]remit.Price) (map[string]int64, error) {
	var meters []string
	for _, l := range inv.Lines {
		if p := prices[l.PriceID]; p.PriceType == remit.PriceUsageMetered && p.MeterID != nil && !slices.Contains(meters, *p.MeterID) {
			meters = append(meters, *p.MeterID)
		}
	}
	slices.Sort(meters)
	now := micro(iv.Now(m))
	counted := make(map[string]int64, len(meters))
	for _, meter := range meters {
		_, seq, err := tx.LockUsageTotal(ctx, m.ID, inv.CustomerID, meter, now)
		if err != nil {
			return nil, err
		}
		counted[meter] = seq
	}
	return counted, nil
}

// priceLine refreshes line l of price: its unit amount (the price's, unless the line has its own),
// its usage in the period for a usage_metered line, and its quantity, amount and tier breakdown
// (remit.LineAmount). Finalizing, a usage line records the seq of the last event counted (counted,
// by meter; nil for a draft). An amount too large is remit.ErrAmountTooLarge.
func (iv *Invoicing) priceLine(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, l *remit.InvoiceLine, price remit.Price, counted map[string]int64) error {
	if !l.UnitOverride && price.UnitAmount != nil {
		l.UnitAmount = *price.UnitAmount
	}
	l.MeterID = price.MeterID
	units := l.Quantity
	if l.UsageQuantity != nil {
		units = *l.UsageQuantity
	}
	if price.PriceType == remit.PriceUsageMetered && price.MeterID != nil {
		from, to := inv.PeriodStart, inv.PeriodEnd
		if l.PeriodStart != nil {
			from, to = l.PeriodStart, l.PeriodEnd
		}
		if from != nil && to != nil {
			qty, err := iv.usage.UsageInPeriod(ctx, tx.Q, m, inv.CustomerID, *price.MeterID, *from, *to)
			if err != nil {
				return err
			}
			units = qty
			if seq, ok := counted[*price.MeterID]; ok {
				l.UsageSeq = &seq
			}
		}
		l.UsageQuantity = &units
	}
	q, amount, bd, err := remit.LineAmount(price, l.UnitAmount, l.UnitOverride, units)
	if err != nil {
		return err
	}
	if price.Tiered() && !l.UnitOverride {
		l.UnitAmount = 0
		if bd == nil {
			bd = []remit.TierBreakdown{} // no usage reached a tier
		}
	}
	l.Quantity, l.Amount, l.TierBreakdown = q, amount, bd
	return nil
}

// quoteTax keeps the draft's one quoted tax transaction current, creating it the first time (or
// anew when the previous one was committed through the tax-transaction route).
func (iv *Invoicing) quoteTax(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	t, created, err := iv.taxTransactionFor(ctx, tx, m, inv, now)
	if err != nil {
		return err
	}
	t.Status = remit.TaxQuoted
	if err := tx.UpsertTaxTransaction(ctx, t); err != nil {
		return err
	}
	if inv.TaxTransactionID == nil || *inv.TaxTransactionID != t.TaxTransactionID {
		inv.TaxTransactionID = &t.TaxTransactionID
		if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
			return err
		}
	}
	if created {
		return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionCreated, t.TaxTransactionID, t)
	}
	return nil
}

// taxTransactionFor returns the invoice's quoted tax transaction rewritten with its current lines,
// or a new one when it has none that is still quoted.
func (iv *Invoicing) taxTransactionFor(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) (remit.TaxTransaction, bool, error) {
	_, exempt, err := iv.taxPlace(ctx, tx.Q, m, *inv)
	if err != nil {
		return remit.TaxTransaction{}, false, err
	}
	t := remit.TaxTransaction{Object: "tax_transaction", TaxTransactionID: remit.NewID("txn"), Type: remit.TaxSale,
		SourceDocumentID: inv.InvoiceID, CustomerID: inv.CustomerID, Currency: inv.Currency, Environment: m.Environment,
		MerchantAccountID: m.ID, CreatedAt: now}
	created := true
	if inv.TaxTransactionID != nil {
		old, err := tx.GetTaxTransaction(ctx, m.ID, *inv.TaxTransactionID, store.Locked)
		if err != nil {
			return t, false, err
		}
		if old.Status.Allows(remit.ActionCommit) { // still quoted: rewritten, not replaced
			t, created = old, false
		}
	}
	t.Lines, t.TotalTax, t.TaxExempt, t.UpdatedAt = nil, inv.TaxTotal, exempt, now
	t.Provider = iv.TaxProvider().Name()
	if !inv.TaxStale { // a stale draft's transaction keeps the calculation its tax came from
		t.ProviderCalculationID = optString(inv.TaxCalculationID)
	}
	for _, l := range inv.Lines {
		for _, lt := range l.Taxes {
			t.Lines = append(t.Lines, remit.TaxTransactionLine{LineID: l.InvoiceLineID, TaxableAmount: lt.TaxableAmount,
				TaxAmount: lt.TaxAmount, Rate: lt.Rate, RatePPM: lt.RatePPM, Jurisdiction: lt.Jurisdiction})
		}
	}
	return t, created, nil
}

// GetInvoice returns an invoice of the merchant account.
//
// Errors: not_found.
func (iv *Invoicing) GetInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error) {
	return iv.DB.Read(ctx).GetInvoice(ctx, m.ID, invoiceID, store.Unlocked)
}

// ListInvoices lists the merchant account's invoices newest first, with their lines, by customer,
// billing account, subscription, status and number.
//
// Errors: validation_failure (status, limit, cursor, createdFrom, createdTo).
func (iv *Invoicing) ListInvoices(ctx context.Context, m remit.MerchantAccount, in remit.InvoiceQuery) (remit.List[remit.Invoice], error) {
	return listByStatus(ctx, iv.core, m, "invoices", in.ListQuery, in.Status, remit.InvoiceStatuses, func(page store.ListPage) ([]remit.Invoice, error) {
		return iv.DB.Read(ctx).ListInvoices(ctx, m.ID, store.InvoiceFilter{CustomerID: in.CustomerID, BillingAccountID: in.BillingAccountID,
			SubscriptionID: in.SubscriptionID, Status: in.Status, Number: in.Number, Lines: true, ListPage: page})
	})
}

// invoiceState is what remit.InvoiceStates judges of an invoice: its ID and status (transition).
func invoiceState(inv *remit.Invoice) (string, remit.InvoiceStatus) { return inv.InvoiceID, inv.Status }

// RefreshInvoice recomputes a draft from current prices, usage in its period, coupons and tax,
// keeps its quoted tax transaction current and emits invoice.refreshed.
//
// Errors: not_found, conflict (not a draft; details.currentState).
func (iv *Invoicing) RefreshInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error) {
	inv, err := transition(ctx, iv.DB, remit.InvoiceStates, remit.ActionRefresh, invoiceState, lockedRow(m.ID, invoiceID, store.Q.GetInvoice), func(ctx context.Context, tx *store.Tx, inv *remit.Invoice) error {
		return iv.reviseDraft(ctx, tx, m, inv, micro(iv.Now(m)))
	})
	return inv, err
}

// reviseDraft prices a draft's lines again (catalog prices, coupons, tax quote), stores them and
// emits invoice.refreshed: a refresh, or a subscription's proration revising its draft.
func (iv *Invoicing) reviseDraft(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	var p remit.Problems
	coupons, err := iv.loadCoupons(ctx, tx.Q, m, *inv, &p)
	if err != nil {
		return err
	}
	if err := iv.priceDraft(ctx, tx, m, inv, coupons, now); err != nil {
		return err
	}
	inv.UpdatedAt = now
	if err := tx.UpdateInvoice(ctx, *inv, true); err != nil {
		return err
	}
	if err := iv.quoteTax(ctx, tx, m, inv, now); err != nil {
		return err
	}
	return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoiceRefreshed, inv.InvoiceID, *inv)
}

// FinalizeInvoice finalizes a draft: it recomputes it, assigns the next number of the merchant
// account (gap-free: the counter is incremented in this transaction), applies the customer's
// available prepaid balance to eligible lines (earliest expiry first), computes tax on what is
// left, commits the tax transaction and emits invoice.finalized. Then: nothing due → paid;
// otherwise open with a hosted paymentUrl, and collection is attempted (collectAtFinalize).
//
// Errors: not_found, conflict (not a draft; details.currentState).
func (iv *Invoicing) FinalizeInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, finalizedByRef *string) (remit.Invoice, error) {
	inv, err := inTx(ctx, iv.DB, func(ctx context.Context, tx *store.Tx) (remit.Invoice, error) {
		inv, err := iv.finalizeInTx(ctx, tx, m, invoiceID, finalizedByRef, micro(iv.Now(m)))
		if err != nil {
			return inv, err
		}
		// A collection attempt was opened: the answer is the invoice as its charge left it.
		return inv, iv.payments.answerAttempt(ctx, m, inv, remit.SourceFinalize)
	})
	return inv, err
}

// finalizeInTx finalizes a draft in tx at merchant time now: load what it needs
// (loadFinalization), decide (remit.PlanFinalization), persist (persistFinalization), then take
// the number last and emit (finishFinalization).
func (iv *Invoicing) finalizeInTx(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, invoiceID string, finalizedByRef *string, now time.Time) (remit.Invoice, error) {
	in, err := iv.loadFinalization(ctx, tx, m, invoiceID, finalizedByRef, now)
	if err != nil {
		return in.Draft, err
	}
	plan, err := remit.PlanFinalization(in)
	if err != nil {
		return in.Draft, err
	}
	inv := plan.Invoice
	inv.TaxStale = false // calculated just now
	if err := iv.persistFinalization(ctx, tx, m, &inv, plan, now); err != nil {
		return inv, err
	}
	return inv, iv.finishFinalization(ctx, tx, m, &inv, plan, now)
}

// loadFinalization reads what a finalization decides from, with the locks it needs: the draft
// (its row lock first, its state checked before any other work), its coupons, the customer's
// spendable lots (locked), its lines priced again with their usage read under the running
// totals' locks (lockUsage: what a finalized usage line billed), and the tax at the customer's
// place. A coupon that no longer applies to the draft is left out, as before a refresh.
func (iv *Invoicing) loadFinalization(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, invoiceID string, finalizedByRef *string, now time.Time) (remit.FinalizationInput, error) {
	inv, err := tx.GetInvoice(ctx, m.ID, invoiceID, store.Locked)
	in := remit.FinalizationInput{Draft: inv, FinalizedByRef: finalizedByRef, Now: now}
	if err != nil {
		return in, err
	}
	if err := remit.InvoiceStates.Check(inv.InvoiceID, inv.Status, remit.ActionFinalize); err != nil {
		return in, err
	}
	var dropped remit.Problems
	if in.Coupons, err = iv.loadCoupons(ctx, tx.Q, m, inv, &dropped); err != nil {
		return in, err
	}
	if in.Grants, err = iv.spendableGrants(ctx, tx, m, inv, now); err != nil {
		return in, err
	}
	prices, err := iv.linePrices(ctx, tx, m, inv)
	if err != nil {
		return in, err
	}
	counted, err := iv.lockUsage(ctx, tx, m, inv, prices)
	if err != nil {
		return in, err
	}
	if in.Lines, err = iv.priceLines(ctx, tx, m, &in.Draft, prices, counted); err != nil {
		return in, err
	}
	in.TaxOf, in.Draft.TaxCalculationID, err = iv.calculateTax(ctx, tx.Q, m, in.Draft,
		remit.InvoiceFiguresInput{Lines: in.Lines, Coupons: in.Coupons, Grants: in.Grants})
	return in, taxUnavailable(err)
}

// spendableGrants is the customer's prepaid balance that may pay the invoice, its lots locked,
// earliest expiry first.
func (iv *Invoicing) spendableGrants(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, now time.Time) ([]remit.SpendableGrant, error) {
	lots, err := iv.ledger.AvailableGrants(ctx, tx, scopeOf(m), inv.CustomerID, inv.Currency, now)
	if err != nil {
		return nil, err
	}
	grants := make([]remit.SpendableGrant, 0, len(lots))
	for _, l := range lots {
		grants = append(grants, remit.SpendableGrant{EntryID: l.EntryID, Remaining: *l.Remaining, Targets: l.Targets})
	}
	return grants, nil
}

// persistFinalization writes a finalization's plan: the prepaid balance taken from each lot, the
// tax transaction committed with the final lines, the hosted page's token (hostedInvoiceUrl, and
// paymentUrl while something remains to pay), and the invoice with its lines (not its number yet:
// finishFinalization).
func (iv *Invoicing) persistFinalization(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, plan remit.FinalizationPlan, now time.Time) error {
	for _, ap := range plan.Applications {
		if _, err := iv.ledger.ApplyBalance(ctx, tx, scopeOf(m), inv.CustomerID, inv.InvoiceID, ap.EntryID, ap.Amount, now); err != nil {
			return err
		}
	}
	if err := iv.commitTax(ctx, tx, m, inv, now); err != nil {
		return err
	}
	// Every finalized invoice has its hosted page (hostedInvoiceUrl), paid at once included; the
	// pay route under the same token (paymentUrl) only while something remains to pay.
	token, err := iv.access.IssueHostedToken(ctx, tx, m.ID, remit.HostedInvoice, inv.InvoiceID, now.AddDate(1, 0, 0))
	if err != nil {
		return err
	}
	page := fmt.Sprintf("%s/customer-portal/invoices/%s?token=%s", iv.Config.PublicURL, inv.InvoiceID, token)
	inv.HostedInvoiceURL = &page
	if plan.HostedPage {
		url := fmt.Sprintf("%s/customer-portal/invoices/%s/pay?token=%s", iv.Config.PublicURL, inv.InvoiceID, token)
		inv.PaymentURL = &url
	}
	if err := tx.UpdateInvoice(ctx, *inv, true); err != nil {
		return err
	}
	return iv.keepParties(ctx, tx, m, *inv)
}

// keepParties stores with a finalized invoice the parties its documents show, as they are now: an
// update of the customer or the merchant account later never changes them.
func (iv *Invoicing) keepParties(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice) error {
	cust, err := tx.GetCustomer(ctx, m.ID, inv.CustomerID)
	if err != nil {
		return err
	}
	now, err := tx.GetMerchantAccount(ctx, m.ID, store.Unlocked)
	if err != nil {
		return err
	}
	merch, err := merchantPartyNow(now)
	if err != nil {
		return err
	}
	return tx.SetInvoiceParties(ctx, m.ID, inv.InvoiceID, cust.Party(), merch)
}

// commitTax commits the invoice's tax transaction with its final lines (the draft's quoted one,
// rewritten, or a new one) and emits tax_transaction.created (when new) and .committed.
func (iv *Invoicing) commitTax(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	t, created, err := iv.taxTransactionFor(ctx, tx, m, inv, now)
	if err != nil {
		return err
	}
	t.Status, t.CommittedAt = remit.TaxCommitted, &now
	if t.ProviderTransactionID, err = iv.recordTax(ctx, t); err != nil {
		return err
	}
	if err := tx.UpsertTaxTransaction(ctx, t); err != nil {
		return err
	}
	inv.TaxTransactionID = &t.TaxTransactionID
	if created {
		if err := iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionCreated, t.TaxTransactionID, t); err != nil {
			return err
		}
	}
	return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionCommitted, t.TaxTransactionID, t)
}

// recordTax makes the provider's transaction of a committed sale from its calculation (Stripe's
// create_from_calculation; nothing for the built-in table, or inside a preview, which commits
// nothing), with the Remit transaction's ID and the calculation's as its reference.
func (iv *Invoicing) recordTax(ctx context.Context, t remit.TaxTransaction) (*string, error) {
	if t.ProviderCalculationID == nil || inPreview(ctx) {
		return nil, nil
	}
	ctx, cancel := iv.taxCall(ctx)
	defer cancel()
	id, err := iv.TaxProvider().Record(ctx, *t.ProviderCalculationID, t.TaxTransactionID+"-"+*t.ProviderCalculationID)
	return optString(id), taxUnavailable(err)
}

// finishFinalization does what follows the plan, the number last: the merchant account's counter
// row stays locked until commit (gap-free numbering), and every other finalization of the account
// waits for it on PostgreSQL, so after taking it only the number itself is written. Paid at once,
// the invoice is marked paid (invoice.paid carries the number); otherwise a collection attempt is
// opened first (its rows do not carry the number) and invoice.finalized still comes first among
// the events (Tx.EventsAt).
func (iv *Invoicing) finishFinalization(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, plan remit.FinalizationPlan, now time.Time) error {
	if plan.PaidAtOnce {
		if err := iv.numberInvoice(ctx, tx, m, inv, *inv, now); err != nil {
			return err
		}
		return iv.MarkInvoicePaid(ctx, tx, m, inv, now)
	}
	finalized, mark := *inv, tx.EventMark() // invoice.finalized shows it before its payment attempt
	if plan.Collect {
		if err := iv.payments.collectAtFinalize(ctx, tx, m, inv, now); err != nil {
			return err
		}
	}
	return tx.EventsAt(mark, func() error { return iv.numberInvoice(ctx, tx, m, inv, finalized, now) })
}

// numberInvoice gives a finalized invoice the merchant account's next gap-free number and emits
// invoice.finalized with the invoice as finalized (before a payment attempt changed it).
func (iv *Invoicing) numberInvoice(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, finalized remit.Invoice, now time.Time) error {
	n, err := tx.NextNumber(ctx, m.ID, remit.InvoiceNumbers.Counter)
	if err != nil {
		return err
	}
	number := remit.DocumentNumber(remit.InvoiceNumbers, n)
	inv.Number, finalized.Number = &number, &number
	if err := tx.SetInvoiceNumber(ctx, m.ID, inv.InvoiceID, number); err != nil {
		return err
	}
	return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoiceFinalized, inv.InvoiceID, finalized)
}

// MarkInvoicePaid moves an open invoice whose amount remaining reached 0 to paid, adds top_up
// balance entries for its paid credit_grant and credit_top_up lines, and emits invoice.paid. Call it
// in the transaction that settled the invoice (payment, zero total, credit note offset).
func (iv *Invoicing) MarkInvoicePaid(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv *remit.Invoice, now time.Time) error {
	inv.Status, inv.PaidAt, inv.PaymentURL, inv.UpdatedAt = remit.InvoicePaid, &now, nil, now
	inv.NextPaymentAttemptAt, inv.DunningStatus = nil, remit.DunningNone // paid: dunning stops
	if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
		return err
	}
	for _, l := range inv.Lines {
		if l.PriceType != remit.PriceCreditGrant && l.PriceType != remit.PriceCreditTopUp {
			continue
		}
		amt := l.Amount - l.DiscountAmount - l.PrepaidApplied
		if amt <= 0 {
			continue
		}
		if _, err := iv.ledger.CreditBalance(ctx, tx, scopeOf(m), inv.CustomerID, remit.BalanceCredit{Kind: remit.EntryTopUp, Currency: inv.Currency,
			Amount: amt, InvoiceID: inv.InvoiceID, Description: "Top-up from " + l.Description}, now); err != nil {
			return err
		}
	}
	if err := iv.subscriptionPaymentOutcome(ctx, tx, m, *inv, true, now); err != nil {
		return err
	}
	return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoicePaid, inv.InvoiceID, *inv)
}

// VoidInvoice voids an open invoice: nothing more is due, its hosted payment link stops working,
// and its committed tax is reversed by a reversal tax transaction. Prepaid balance applied at
// finalization is not returned (documented).
//
// Errors: not_found, conflict (not open; details.currentState).
func (iv *Invoicing) VoidInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string) (remit.Invoice, error) {
	inv, err := transition(ctx, iv.DB, remit.InvoiceStates, remit.ActionVoid, invoiceState, lockedRow(m.ID, invoiceID, store.Q.GetInvoice), func(ctx context.Context, tx *store.Tx, inv *remit.Invoice) error {
		if inv.AmountPaid > 0 {
			return remit.Errorf(remit.EConflict, "Invoice '%s' has payments; refund them with a credit note instead of voiding it.", inv.InvoiceID).
				With("reason", "invoice_has_payments").With("currentState", inv.Status)
		}
		if err := iv.payments.noOpenAttempt(ctx, tx, m, *inv); err != nil {
			return err
		}
		now := micro(iv.Now(m))
		inv.Status, inv.VoidedAt, inv.PaymentURL, inv.AmountRemaining, inv.UpdatedAt = remit.InvoiceVoid, &now, nil, 0, now
		if err := tx.UpdateInvoice(ctx, *inv, false); err != nil {
			return err
		}
		if err := iv.reverseVoidedTax(ctx, tx, m, *inv, now); err != nil {
			return err
		}
		return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventInvoiceVoided, inv.InvoiceID, *inv)
	})
	return inv, err
}

// reverseVoidedTax stores the committed reversal of the tax a voided invoice charged and its credit
// notes have not reversed yet (remit.UnreversedTax): a void never reverses more tax than was
// charged. Nothing left, nothing stored.
func (iv *Invoicing) reverseVoidedTax(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, inv remit.Invoice, now time.Time) error {
	if inv.TaxTotal <= 0 || inv.TaxTransactionID == nil {
		return nil
	}
	sale, err := tx.GetTaxTransaction(ctx, m.ID, *inv.TaxTransactionID, store.Locked)
	if err != nil {
		return err
	}
	notes, err := tx.ListInvoiceCreditNotes(ctx, m.ID, inv.InvoiceID)
	if err != nil {
		return err
	}
	var reversals []remit.TaxTransaction
	for _, cn := range notes {
		if cn.TaxTransactionID == nil {
			continue
		}
		r, err := tx.GetTaxTransaction(ctx, m.ID, *cn.TaxTransactionID, store.Unlocked)
		if err != nil {
			return err
		}
		reversals = append(reversals, r)
	}
	rev := remit.TaxTransaction{Object: "tax_transaction", TaxTransactionID: remit.NewID("txn"), Status: remit.TaxCommitted,
		Type: remit.TaxReversal, SourceDocumentID: inv.InvoiceID, CustomerID: inv.CustomerID, Currency: inv.Currency,
		TaxExempt: sale.TaxExempt, CommittedAt: &now, Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, UpdatedAt: now}
	for _, l := range remit.UnreversedTax(sale, reversals) {
		l.TaxableAmount, l.TaxAmount = -l.TaxableAmount, -l.TaxAmount
		rev.Lines = append(rev.Lines, l)
		rev.TotalTax += l.TaxAmount
	}
	if rev.TotalTax == 0 {
		return nil
	}
	rev.Provider = iv.TaxProvider().Name()
	if rev.ProviderTransactionID, err = iv.reverseAtProvider(ctx, sale, taxprovider.Reversal{Reference: rev.TaxTransactionID, Full: len(reversals) == 0,
		FlatAmount: inv.Total - inv.CreditedTotal}); err != nil {
		return err
	}
	if err := tx.UpsertTaxTransaction(ctx, rev); err != nil {
		return err
	}
	return iv.Emit(ctx, tx, scopeOf(m), now, remit.EventTaxTransactionReversed, rev.TaxTransactionID, rev)
}

// reverseAtProvider records at the provider the reversal r of the sale (Stripe's create_reversal
// of the sale's Stripe transaction; nothing when the sale has none: the built-in table's, or one
// committed before the provider was switched, or inside a preview).
func (co *core) reverseAtProvider(ctx context.Context, sale remit.TaxTransaction, r taxprovider.Reversal) (*string, error) {
	if sale.ProviderTransactionID == nil || inPreview(ctx) {
		return nil, nil
	}
	r.OriginalTransaction = *sale.ProviderTransactionID
	ctx, cancel := co.taxCall(ctx)
	defer cancel()
	id, err := co.TaxProvider().Reverse(ctx, r)
	return optString(id), taxUnavailable(err)
}

const jobAutoFinalize = remit.JobInvoiceAutoFinalize

type autoFinalizeJob struct {
	InvoiceID string `json:"invoiceId"`
}

// runAutoFinalize finalizes a subscription's draft when its hour has passed, unless it was
// finalized or changed state meanwhile. A rule that refuses leaves the draft as it was (the job's
// savepoint) and fails the job: it is tried again later, the merchant may fix the draft meanwhile,
// and after its last attempt it is failed for good and listed (docs/reliability.md, "Scheduled
// work that fails").
func (iv *Invoicing) runAutoFinalize(ctx context.Context, tx *store.Tx, scope remit.Scope, job remit.Job, at time.Time) error {
	m, p, inv, found, err := jobTarget(ctx, tx, scope, job, func(m remit.MerchantAccount, p autoFinalizeJob) (remit.Invoice, error) {
		return tx.GetInvoice(ctx, m.ID, p.InvoiceID, store.Locked)
	})
	if !found || !inv.Status.Allows(remit.ActionFinalize) {
		return err
	}
	_, err = iv.finalizeInTx(ctx, tx, m, p.InvoiceID, nil, micro(at))
	return err
}

// registerJobs installs the invoicing area's job kind: a draft's automatic finalization.
func (iv *Invoicing) registerJobs() { iv.RegisterJob(jobAutoFinalize, iv.runAutoFinalize) }
