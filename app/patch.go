package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Updates (docs/api-conventions.md "Updates"): PATCH of a resource with a JSON merge patch. Every
// resource's update runs the same steps (update.run), in one transaction: read the resource with
// its row lock; apply the patch with the resource's rule (remit.PatchRule: 422 listing every
// problem); ask its state (409 with details.currentState); check what needs stored rows (resolve:
// a payment method, an endpoint's addresses, a line's price); then, when the patch changed
// anything, write it and emit <object>.updated with data.previousAttributes. A patch that changes
// nothing writes and emits nothing and answers the resource as it is.

// update is one resource's update.
type update[T any] struct {
	rule  remit.PatchRule[T]
	event remit.EventType
	id    func(v *T) string
	load  func(ctx context.Context, tx *store.Tx) (T, error)
	// resolve, when set, checks and completes what the patch changed with what is stored (its
	// problems into p, other errors returned).
	resolve func(ctx context.Context, tx *store.Tx, before, after *T, patch remit.Patch, p *remit.Problems) error
	save    func(ctx context.Context, tx *store.Tx, before, after *T) error
	// emit, when set, emits the event itself (merchant accounts: to their platform too); else
	// the object emitted is after (object, when set, says what of it).
	emit   func(ctx context.Context, tx *store.Tx, v *T, previous map[string]any) error
	object func(v *T) any
}

// run applies patch in one transaction at merchant time now, and returns the resource as the
// update left it.
func (u update[T]) run(ctx context.Context, co *core, scope remit.Scope, now time.Time, patch remit.Patch) (T, error) {
	return inTx(ctx, co.DB, func(ctx context.Context, tx *store.Tx) (T, error) {
		v, err := u.load(ctx, tx)
		if err != nil {
			return v, err
		}
		before := v
		var p remit.Problems
		if u.rule.Apply(&v, patch, &p); p.Len() > 0 {
			return before, p.Err()
		}
		if err := u.rule.Conflict(&before, patch); err != nil {
			return before, err
		}
		if u.resolve != nil {
			if err := u.resolve(ctx, tx, &before, &v, patch, &p); err != nil {
				return before, err
			}
			if p.Len() > 0 {
				return before, p.Err()
			}
		}
		previous := u.rule.Previous(&before, &v, patch)
		if len(previous) == 0 {
			return before, nil
		}
		if err := u.save(ctx, tx, &before, &v); err != nil {
			return before, err
		}
		if u.emit != nil {
			return v, u.emit(ctx, tx, &v, previous)
		}
		var obj any = v
		if u.object != nil {
			obj = u.object(&v)
		}
		return v, co.EmitUpdated(ctx, tx, scope, now, u.event, u.id(&v), obj, previous)
	})
}

// rowUpdate is the update of a resource that is one row read (locked) and written back, with
// nothing else to check or keep: its rule, event and ID, and the store's read and write of it.
func rowUpdate[T any](rule remit.PatchRule[T], event remit.EventType, id func(*T) string, merchantAccountID, resourceID string,
	read func(store.Q, context.Context, string, string, store.Read) (T, error), write func(store.Q, context.Context, T) error) update[T] {
	return update[T]{rule: rule, event: event, id: id,
		load: lockedRow(merchantAccountID, resourceID, read),
		save: func(ctx context.Context, tx *store.Tx, _, after *T) error { return write(tx.Q, ctx, *after) },
	}
}

// UpdateCustomer applies a merge patch to a customer and emits customer.updated. The finalized
// invoices that keep no parties yet (finalized before parties were kept) keep the customer as it
// was.
//
// Errors: validation_failure, not_found, conflict (externalId taken).
func (ca *Catalog) UpdateCustomer(ctx context.Context, m remit.MerchantAccount, customerID string, patch remit.Patch) (remit.Customer, error) {
	return update[remit.Customer]{
		rule: remit.CustomerPatch, event: remit.EventCustomerUpdated, id: func(c *remit.Customer) string { return c.CustomerID },
		load: lockedRow(m.ID, customerID, store.Q.ReadCustomer),
		save: func(ctx context.Context, tx *store.Tx, before, after *remit.Customer) error {
			if was := before.Party(); !sameJSON(was, after.Party()) {
				if err := tx.FreezeCustomerParties(ctx, m.ID, before.CustomerID, was); err != nil {
					return err
				}
			}
			return customerDuplicate(tx.UpdateCustomer(ctx, *after), *after)
		},
	}.run(ctx, ca.core, scopeOf(m), micro(ca.Now(m)), patch)
}

// UpdateBillingAccount applies a merge patch to a billing account (a default payment method must
// be one of the account's customer, and attached) and emits billing_account.updated.
//
// Errors: validation_failure, not_found, conflict (a detached payment method; details.currentState).
func (ca *Catalog) UpdateBillingAccount(ctx context.Context, m remit.MerchantAccount, billingAccountID string, patch remit.Patch) (remit.BillingAccount, error) {
	now := micro(ca.Now(m))
	return update[remit.BillingAccount]{
		rule: remit.BillingAccountPatch, event: remit.EventBillingAccountUpdated, id: func(b *remit.BillingAccount) string { return b.BillingAccountID },
		load: lockedRow(m.ID, billingAccountID, store.Q.GetBillingAccount),
		resolve: func(ctx context.Context, tx *store.Tx, _, after *remit.BillingAccount, patch remit.Patch, p *remit.Problems) error {
			if !patch.Has("defaultPaymentMethodId") || after.DefaultPaymentMethod == nil {
				return nil
			}
			id := after.DefaultPaymentMethod.PaymentMethodID
			pm, err := tx.GetPaymentMethod(ctx, m.ID, id)
			switch {
			case remit.ErrorCode(err) == remit.ENotFound || (err == nil && pm.CustomerID != after.CustomerID):
				p.Body("defaultPaymentMethodId", "invalid_payment_method", "defaultPaymentMethodId must name a payment method of the billing account's customer '"+after.CustomerID+"'.")
			case err != nil:
				return err
			default:
				if err := remit.PaymentMethodStates.Check(pm.PaymentMethodID, pm.Status, remit.ActionDefault); err != nil {
					return err // detached: 409 with its currentState
				}
				after.DefaultPaymentMethod = pm.Summary()
			}
			return nil
		},
		save: func(ctx context.Context, tx *store.Tx, _, after *remit.BillingAccount) error {
			return tx.UpdateBillingAccount(ctx, *after, now)
		},
	}.run(ctx, ca.core, scopeOf(m), now, patch)
}

// UpdatePrice applies a merge patch to a price (active false archives it) and emits
// price.updated.
//
// Errors: validation_failure, not_found.
func (ca *Catalog) UpdatePrice(ctx context.Context, m remit.MerchantAccount, priceID string, patch remit.Patch) (remit.Price, error) {
	return rowUpdate(remit.PricePatch, remit.EventPriceUpdated, func(p *remit.Price) string { return p.PriceID },
		m.ID, priceID, store.Q.ReadPrice, store.Q.UpdatePrice).run(ctx, ca.core, scopeOf(m), micro(ca.Now(m)), patch)
}

// UpdateCoupon applies a merge patch to a coupon (active false archives it) and emits
// coupon.updated.
//
// Errors: validation_failure, not_found.
func (ca *Catalog) UpdateCoupon(ctx context.Context, m remit.MerchantAccount, couponID string, patch remit.Patch) (remit.Coupon, error) {
	return rowUpdate(remit.CouponPatch, remit.EventCouponUpdated, func(c *remit.Coupon) string { return c.CouponID },
		m.ID, couponID, store.Q.ReadCoupon, store.Q.UpdateCoupon).run(ctx, ca.core, scopeOf(m), micro(ca.Now(m)), patch)
}

// UpdateWebhookEndpoint applies a merge patch to an endpoint and emits webhook_endpoint.updated. A
// new url follows the create's rule, its host looked up before the transaction
// (ResolveEndpointHost); the next deliveries go to it, each signed with the endpoint's secret.
//
// Errors: validation_failure (url, enabledEvents, metadata), not_found.
func (wh *Webhooks) UpdateWebhookEndpoint(ctx context.Context, scope remit.Scope, m remit.MerchantAccount, id string, patch remit.Patch) (remit.WebhookEndpoint, error) {
	return update[remit.WebhookEndpoint]{
		rule: remit.WebhookEndpointPatch, event: remit.EventWebhookEndpointUpdated, id: func(e *remit.WebhookEndpoint) string { return e.ID },
		load: func(ctx context.Context, tx *store.Tx) (remit.WebhookEndpoint, error) {
			ep, _, err := tx.GetWebhookEndpoint(ctx, scope.MerchantAccountID, id, store.Locked)
			ep.Environment = scope.Environment // the URL rule depends on it
			return ep, err
		},
		resolve: func(ctx context.Context, tx *store.Tx, _, after *remit.WebhookEndpoint, patch remit.Patch, p *remit.Problems) error {
			if patch.Has("url") {
				after.URL = wh.checkEndpointURL(ctx, after.URL, scope.Environment, p)
			}
			return nil
		},
		save: func(ctx context.Context, tx *store.Tx, _, after *remit.WebhookEndpoint) error {
			return tx.UpdateWebhookEndpoint(ctx, *after, wh.Clock.Now())
		},
	}.run(ctx, wh.core, scope, wh.Now(m).Truncate(time.Microsecond), patch)
}

// UpdateMerchantAccount applies a merge patch to the merchant account targetID names (the acting
// account, another of its organization and environment, or a sub-merchant linked to it) and emits
// merchant_account.updated (to a linked platform's stream too). The finalized invoices that keep
// no parties yet keep the account as it was.
//
// Errors: validation_failure, not_found.
func (ms *Merchants) UpdateMerchantAccount(ctx context.Context, scope remit.Scope, targetID string, patch remit.Patch) (remit.MerchantAccountObject, error) {
	var m remit.MerchantAccount
	var now time.Time
	return update[remit.MerchantAccountObject]{
		rule: remit.MerchantAccountPatch,
		load: func(ctx context.Context, tx *store.Tx) (remit.MerchantAccountObject, error) {
			var err error
			if m, err = targetMerchant(ctx, tx.Q, scope, targetID, true); err != nil {
				return remit.MerchantAccountObject{}, err
			}
			now = micro(ms.Now(m))
			obj, err := remit.NewMerchantAccountObject(m)
			if err != nil {
				return obj, remit.Internal(err)
			}
			obj.ClaimURL = nil
			return obj, nil
		},
		save: func(ctx context.Context, tx *store.Tx, before, after *remit.MerchantAccountObject) error {
			prof, err := merchantProfile(m)
			if err != nil {
				return err
			}
			was := remit.MerchantPartyOf(m, prof)
			prof.SupportEmail, prof.Metadata = after.SupportEmail, after.Metadata
			m.DisplayName, after.UpdatedAt = after.DisplayName, now
			if !sameJSON(was, remit.MerchantPartyOf(m, prof)) {
				if err := tx.FreezeMerchantParties(ctx, m.ID, was); err != nil {
					return err
				}
			}
			return tx.UpdateMerchantAccount(ctx, m.ID, m.DisplayName, mustMarshal(prof), now)
		},
		emit: func(ctx context.Context, tx *store.Tx, v *remit.MerchantAccountObject, previous map[string]any) error {
			return ms.emitMerchantChange(ctx, tx, m, remit.EventMerchantAccountUpdated, now, *v, m.LinkedTo(m.PlatformMerchantAccountID), previous)
		},
	}.run(ctx, ms.core, scope, now, patch)
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	return string(mustMarshal(a)) == string(mustMarshal(b))
}

// mustMarshal is v as JSON; v is a value of Remit's own types, which always encode.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// UpdateInvoice applies a merge patch to an invoice and emits invoice.updated: while it is a draft,
// its lines (replaced and priced again, its tax quote kept current), payment terms and memo; in
// any state, its metadata.
//
// Errors: validation_failure, not_found (a line's price), conflict (not a draft, for anything but
// metadata; an archived price new on the draft; details.currentState).
func (iv *Invoicing) UpdateInvoice(ctx context.Context, m remit.MerchantAccount, invoiceID string, patch remit.Patch) (remit.Invoice, error) {
	now := micro(iv.Now(m))
	e, err := update[remit.InvoiceEdit]{
		rule: remit.InvoicePatch, event: remit.EventInvoiceUpdated, id: func(e *remit.InvoiceEdit) string { return e.InvoiceID },
		load: func(ctx context.Context, tx *store.Tx) (remit.InvoiceEdit, error) {
			inv, err := tx.GetInvoice(ctx, m.ID, invoiceID, store.Locked)
			return remit.InvoiceEdit{Invoice: inv}, err
		},
		resolve: func(ctx context.Context, tx *store.Tx, before, after *remit.InvoiceEdit, _ remit.Patch, p *remit.Problems) error {
			if after.NewLines == nil {
				return nil
			}
			return iv.replaceLines(ctx, tx, m, before.Lines, after, p, now)
		},
		save: func(ctx context.Context, tx *store.Tx, before, after *remit.InvoiceEdit) error {
			after.UpdatedAt = now
			lines := !sameJSON(before.Lines, after.Lines)
			if err := tx.UpdateInvoice(ctx, after.Invoice, lines); err != nil {
				return err
			}
			if !lines {
				return nil
			}
			return iv.quoteTax(ctx, tx, m, &after.Invoice, now)
		},
		object: func(e *remit.InvoiceEdit) any { return e.Invoice },
	}.run(ctx, iv.core, scopeOf(m), now, patch)
	return e.Invoice, err
}

// replaceLines gives a draft the lines a patch lists (remit.PlanInvoiceLines), priced as a refresh
// prices them (catalog, usage in the period, coupons, tax). A price new on the draft must be
// active; one the draft already bills may stay. A line priced as it was keeps its ID.
func (iv *Invoicing) replaceLines(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, was []remit.InvoiceLine, e *remit.InvoiceEdit, p *remit.Problems, now time.Time) error {
	prices, err := tx.GetPrices(ctx, m.ID, linePriceIDs(e.NewLines, func(l remit.InvoiceLineInput) string { return l.PriceID }))
	if err != nil {
		return err
	}
	lines, err := remit.PlanInvoiceLines(e.NewLines, nil, e.PeriodStart, e.Currency, prices, p)
	if err != nil || p.Len() > 0 {
		return err
	}
	kept := linePriceIDs(was, func(l remit.InvoiceLine) string { return l.PriceID })
	if err := remit.CheckPricesNamed(prices, lineRefs(e.NewLines), kept); err != nil {
		return err
	}
	for i := range lines {
		lines[i].InvoiceLineID = remit.NewID("il")
	}
	e.Lines = lines
	coupons, err := iv.loadCoupons(ctx, tx.Q, m, e.Invoice, p)
	if err != nil {
		return err
	}
	if err := iv.priceDraft(ctx, tx, m, &e.Invoice, coupons, now); err != nil {
		return err
	}
	for i := range e.Lines {
		if i < len(was) {
			same := e.Lines[i]
			same.InvoiceLineID = was[i].InvoiceLineID
			if sameJSON(same, was[i]) {
				e.Lines[i].InvoiceLineID = was[i].InvoiceLineID
			}
		}
	}
	return nil
}

// lineRefs are where the lines of a request name their prices (lines[i].priceId).
func lineRefs(lines []remit.InvoiceLineInput) []remit.PriceRef {
	refs := make([]remit.PriceRef, len(lines))
	for i, l := range lines {
		refs[i] = remit.PriceRef{PriceID: l.PriceID, Field: fmt.Sprintf("lines[%d].priceId", i)}
	}
	return refs
}

// catalogActive refuses an archived price (unless in kept) or coupon that a new document names
// (remit.CheckPricesNamed, remit.CheckCouponsListed: 409 with its currentState).
func catalogActive(prices map[string]remit.Price, refs []remit.PriceRef, kept []string, coupons map[string]remit.Coupon, couponIDs []string) error {
	if err := remit.CheckPricesNamed(prices, refs, kept); err != nil {
		return err
	}
	return remit.CheckCouponsListed(coupons, couponIDs)
}

// itemPrices are the prices a subscription bills (none for nil): they may stay on it when archived.
func itemPrices(sub *remit.Subscription) []string {
	if sub == nil {
		return nil
	}
	ids := make([]string, len(sub.Items))
	for i, it := range sub.Items {
		ids[i] = it.PriceID
	}
	return ids
}

// quoteCatalogActive refuses the acceptance of a quote naming a price or coupon archived since it
// was made: accepting makes a new invoice or new subscription items (an amendment may keep the
// prices its subscription already bills).
func (qs *Quotes) quoteCatalogActive(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, qt remit.Quote, v *remit.QuoteVersion) error {
	refs := make([]remit.PriceRef, len(v.Lines))
	ids := make([]string, len(v.Lines))
	for i, l := range v.Lines {
		refs[i], ids[i] = remit.PriceRef{PriceID: l.PriceID, Field: fmt.Sprintf("lines[%d].priceId", i)}, l.PriceID
	}
	prices, err := tx.GetPrices(ctx, m.ID, ids)
	if err != nil {
		return err
	}
	coupons, err := tx.GetCoupons(ctx, m.ID, qt.CouponIDs)
	if err != nil {
		return err
	}
	var kept []string
	if qt.SubscriptionID != nil && qt.OrderType == remit.OrderSubscriptionAmendment {
		sub, err := tx.GetSubscription(ctx, m.ID, *qt.SubscriptionID, store.Unlocked)
		if err != nil {
			return err
		}
		kept = itemPrices(&sub)
	}
	return catalogActive(prices, refs, kept, coupons, qt.CouponIDs)
}
