package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The customer portal's engine (docs/customer-portal.md): portal sessions made by the API, opened
// once by a browser, and the merchant account's portal configuration. The portal's pages (package
// portal) act through the same engine calls as the API, with the session's customer_portal actor.

// Portal is the customer portal's area.
type Portal struct {
	*core
	quotes  *Quotes
	catalog *Catalog
	ledger  *Ledger
}

const portalTokenPrefix = "cpt_"

// errPortalLink is the answer to a portal URL that does not open a session: unknown, used or
// expired (one answer for all, so that the link tells nothing).
var errPortalLink = remit.Errorf(remit.EUnauthorized, "This portal link has expired or was already used. Ask for a new one.")

// CreatePortalSession makes a portal session for the customer: its one-time URL, usable within
// five minutes. returnUrl defaults to the configuration's defaultReturnUrl, locale to the
// customer's preferredLocale, else en. A flow names a subscription or invoice of the customer.
//
// Errors: validation_failure (every problem), not_found (customer; the flow's subscription or
// invoice, another customer's included).
func (p *Portal) CreatePortalSession(ctx context.Context, m remit.MerchantAccount, in remit.PortalSessionInput) (remit.PortalSession, error) {
	var probs remit.Problems
	remit.CheckPortalSession(in, &probs)
	if err := probs.Err(); err != nil {
		return remit.PortalSession{}, err
	}
	return inTx(ctx, p.DB, func(ctx context.Context, tx *store.Tx) (remit.PortalSession, error) {
		cust, err := tx.GetCustomer(ctx, m.ID, in.CustomerID)
		if err != nil {
			return remit.PortalSession{}, remit.AtField(err, "customerId")
		}
		if err := p.checkFlow(ctx, tx.Q, m, cust.CustomerID, in.Flow); err != nil {
			return remit.PortalSession{}, err
		}
		cfg, err := p.configuration(ctx, tx.Q, m)
		if err != nil {
			return remit.PortalSession{}, err
		}
		now := micro(p.Now(m))
		locale := "en"
		if cust.PreferredLocale != "" {
			locale = cust.PreferredLocale
		}
		if in.Locale != nil {
			locale = *in.Locale
		}
		returnURL := in.ReturnURL
		if returnURL == nil {
			returnURL = cfg.DefaultReturnURL
		}
		token := portalTokenPrefix + NewSecret()
		s := remit.PortalSession{Object: "customer_portal_session", SessionID: remit.NewID("cps"), CustomerID: cust.CustomerID,
			URL: p.Config.PublicURL + "/portal/start?token=" + token, ReturnURL: returnURL, Locale: locale, Flow: in.Flow,
			ExpiresAt: now.Add(remit.PortalSessionURLLifetime), Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now}
		return s, tx.InsertPortalSession(ctx, s, HashSecret(token))
	})
}

// checkFlow checks that a flow's subscription or invoice is the customer's (not_found otherwise).
func (p *Portal) checkFlow(ctx context.Context, q store.Q, m remit.MerchantAccount, customerID string, f *remit.PortalFlow) error {
	if f == nil {
		return nil
	}
	err := flowResource(f.SubscriptionID, "subscription", "flow.subscriptionId", customerID, func(id string) (string, error) {
		sub, err := q.GetSubscription(ctx, m.ID, id, store.Unlocked)
		return sub.CustomerID, err
	})
	if err != nil {
		return err
	}
	return flowResource(f.InvoiceID, "invoice", "flow.invoiceId", customerID, func(id string) (string, error) {
		inv, err := q.GetInvoice(ctx, m.ID, id, store.Unlocked)
		return inv.CustomerID, err
	})
}

// flowResource checks that the resource a flow names in field (id; nil: none) is the customer's:
// owner reads whose it is; another customer's is not_found, as a missing one, at field.
func flowResource(id *string, resource, field, customerID string, owner func(id string) (string, error)) error {
	if id == nil {
		return nil
	}
	of, err := owner(*id)
	if err == nil && of != customerID {
		err = remit.NotFound(resource, *id, "")
	}
	return remit.AtField(err, field)
}

// OpenPortalSession opens a portal session by its URL's token: once, before the URL expires.
//
// Errors: unauthorized (unknown, used or expired link).
func (p *Portal) OpenPortalSession(ctx context.Context, token string) (remit.PortalSession, error) {
	if !strings.HasPrefix(token, portalTokenPrefix) || len(token) != len(portalTokenPrefix)+64 {
		return remit.PortalSession{}, errPortalLink
	}
	return inTx(ctx, p.DB, func(ctx context.Context, tx *store.Tx) (remit.PortalSession, error) {
		s, used, err := tx.PortalSessionByToken(ctx, HashSecret(token), store.Locked)
		if remit.ErrorCode(err) == remit.ENotFound {
			return s, errPortalLink
		}
		if err != nil {
			return s, err
		}
		m, err := tx.GetMerchantAccount(ctx, s.MerchantAccountID, store.Unlocked)
		if err != nil {
			return s, err
		}
		now := p.Now(m)
		if used || !now.Before(s.ExpiresAt) {
			return s, errPortalLink
		}
		return s, tx.MarkPortalSessionUsed(ctx, s.SessionID, remit.Micros(now))
	})
}

// PortalSession returns an opened portal session's context, and a context whose writes are the
// session's (actor customer_portal).
//
// Errors: unauthorized (no such session, or its URL was never opened).
func (p *Portal) PortalSession(ctx context.Context, sessionID string) (context.Context, remit.PortalContext, error) {
	q := p.DB.Read(ctx)
	s, used, err := q.GetPortalSession(ctx, sessionID)
	if remit.ErrorCode(err) == remit.ENotFound || (err == nil && !used) {
		return ctx, remit.PortalContext{}, errPortalLink
	}
	if err != nil {
		return ctx, remit.PortalContext{}, err
	}
	m, err := q.GetMerchantAccount(ctx, s.MerchantAccountID, store.Unlocked)
	if err != nil {
		return ctx, remit.PortalContext{}, err
	}
	cust, err := q.GetCustomer(ctx, m.ID, s.CustomerID)
	if err != nil {
		return ctx, remit.PortalContext{}, err
	}
	cfg, err := p.configuration(ctx, q, m)
	if err != nil {
		return ctx, remit.PortalContext{}, err
	}
	ctx = remit.WithActor(ctx, remit.Actor{Type: remit.ActorCustomerPortal, ID: s.SessionID})
	return ctx, remit.PortalContext{Session: s, Merchant: m, Customer: cust, Config: cfg}, nil
}

// GetPortalConfiguration returns the merchant account's portal configuration (the defaults until
// it sets one).
func (p *Portal) GetPortalConfiguration(ctx context.Context, m remit.MerchantAccount) (remit.PortalConfiguration, error) {
	return p.configuration(ctx, p.DB.Read(ctx), m)
}

func (p *Portal) configuration(ctx context.Context, q store.Q, m remit.MerchantAccount) (remit.PortalConfiguration, error) {
	c, found, err := q.GetPortalConfiguration(ctx, m.ID)
	if err != nil || !found {
		c = remit.DefaultPortalConfiguration()
	}
	c.Environment, c.MerchantAccountID = m.Environment, m.ID
	return c, err
}

// PutPortalConfiguration replaces the merchant account's portal configuration. The prices a
// subscription may switch to are recurring prices of the account.
//
// Errors: validation_failure (every problem), not_found (a price; details.field).
func (p *Portal) PutPortalConfiguration(ctx context.Context, m remit.MerchantAccount, c remit.PortalConfiguration) (remit.PortalConfiguration, error) {
	var probs remit.Problems
	remit.CheckPortalConfiguration(c, &probs)
	if err := probs.Err(); err != nil {
		return c, err
	}
	return inTx(ctx, p.DB, func(ctx context.Context, tx *store.Tx) (remit.PortalConfiguration, error) {
		prices, err := tx.GetPrices(ctx, m.ID, c.SubscriptionUpdate.Prices)
		if err != nil {
			return c, err
		}
		for i, id := range c.SubscriptionUpdate.Prices {
			price, ok := prices[id]
			if !ok {
				return c, remit.NotFound("price", id, fmt.Sprintf("subscriptionUpdate.prices[%d]", i))
			}
			if price.BillingInterval == nil {
				probs.Body(fmt.Sprintf("subscriptionUpdate.prices[%d]", i), "not_recurring", "Price '"+id+"' is not recurring: a subscription can only switch to a recurring price.")
			}
		}
		if err := probs.Err(); err != nil {
			return c, err
		}
		now := micro(p.Now(m))
		c.Object, c.Environment, c.MerchantAccountID, c.UpdatedAt = "customer_portal_configuration", m.Environment, m.ID, &now
		if err := tx.PutPortalConfiguration(ctx, c); err != nil {
			return c, err
		}
		return c, p.emit(ctx, tx, scopeOf(m), now, remit.EventCustomerPortalConfigurationUpdated, m.ID, c, nil)
	})
}

// PortalSubscriptions lists the session customer's subscriptions, newest first.
func (p *Portal) PortalSubscriptions(ctx context.Context, pc remit.PortalContext) ([]remit.Subscription, error) {
	return p.DB.Read(ctx).ListSubscriptions(ctx, pc.Merchant.ID, store.SubscriptionFilter{CustomerID: pc.Customer.CustomerID, ListPage: store.ListPage{Limit: 100}})
}

// PortalSubscription returns one of the session customer's subscriptions; another customer's is
// not_found, as if it did not exist.
func (p *Portal) PortalSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error) {
	sub, err := p.DB.Read(ctx).GetSubscription(ctx, pc.Merchant.ID, subscriptionID, store.Unlocked)
	if err == nil && sub.CustomerID != pc.Customer.CustomerID {
		err = remit.NotFound("subscription", subscriptionID, "")
	}
	return sub, err
}

// PortalCancelSubscription cancels one of the session customer's subscriptions as the
// configuration says (at the period's end, or now with or without proration), through the same
// engine rule as POST /v1/subscriptions/{id}/cancel.
//
// Errors: forbidden (cancel turned off), not_found (not the customer's), conflict (its state).
func (p *Portal) PortalCancelSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeatureCancel); err != nil {
		return remit.Subscription{}, err
	}
	if _, err := p.PortalSubscription(ctx, pc, subscriptionID); err != nil {
		return remit.Subscription{}, err
	}
	in := remit.CancelInput{At: remit.CancelAtPeriodEnd}
	if pc.Config.SubscriptionCancel.Mode == remit.PortalCancelImmediately {
		prorate := pc.Config.SubscriptionCancel.Prorate
		in = remit.CancelInput{At: remit.CancelNow, Prorate: &prorate}
	}
	return p.quotes.CancelSubscription(ctx, pc.Merchant, subscriptionID, in)
}

// PortalKeepSubscription undoes a cancel at the period's end of one of the session customer's
// subscriptions (Quotes.KeepSubscription), where the configuration lets the customer cancel.
//
// Errors: forbidden (cancel turned off), not_found (not the customer's), conflict (not canceling).
func (p *Portal) PortalKeepSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Subscription, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeatureCancel); err != nil {
		return remit.Subscription{}, err
	}
	if _, err := p.PortalSubscription(ctx, pc, subscriptionID); err != nil {
		return remit.Subscription{}, err
	}
	return p.quotes.KeepSubscription(ctx, pc.Merchant, subscriptionID)
}

// PortalUpcoming is the invoice the subscription's next renewal would make (Quotes.UpcomingInvoice,
// written nothing); ok is false when there is none (it does not renew, or would bill nothing).
func (p *Portal) PortalUpcoming(ctx context.Context, pc remit.PortalContext, subscriptionID string) (remit.Invoice, bool, error) {
	inv, err := p.quotes.UpcomingInvoice(ctx, pc.Merchant, pc.Customer.CustomerID, subscriptionID)
	switch {
	case err == nil:
		return inv, true, nil
	case remit.ErrorCode(err) == remit.ENotFound || remit.ErrorCode(err) == remit.EConflict:
		return inv, false, nil
	}
	return inv, false, err
}

// PortalPrices are the prices the configuration lets a customer switch to, in its order.
func (p *Portal) PortalPrices(ctx context.Context, pc remit.PortalContext) ([]remit.Price, error) {
	byID, err := p.DB.Read(ctx).GetPrices(ctx, pc.Merchant.ID, pc.Config.SubscriptionUpdate.Prices)
	if err != nil {
		return nil, err
	}
	var out []remit.Price
	for _, id := range pc.Config.SubscriptionUpdate.Prices {
		if pr, ok := byID[id]; ok {
			out = append(out, pr)
		}
	}
	return out, nil
}

// portalChange is the change a portal switch to priceID makes: checked against the configuration
// (forbidden when off; a price it does not offer is not_found) and the customer.
func (p *Portal) portalChange(ctx context.Context, pc remit.PortalContext, subscriptionID, priceID string) (remit.ChangeInput, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeatureUpdate); err != nil {
		return remit.ChangeInput{}, err
	}
	if !slices.Contains(pc.Config.SubscriptionUpdate.Prices, priceID) {
		return remit.ChangeInput{}, remit.NotFound("price", priceID, "")
	}
	sub, err := p.PortalSubscription(ctx, pc, subscriptionID)
	if err != nil {
		return remit.ChangeInput{}, err
	}
	return remit.ChangeInput{Items: remit.PortalChangeItems(sub, priceID), ProrationBehavior: pc.Config.SubscriptionUpdate.ProrationBehavior}, nil
}

// PortalPreviewChange is what switching the subscription to priceID would bill and credit
// (Quotes.PreviewChange: nothing written).
func (p *Portal) PortalPreviewChange(ctx context.Context, pc remit.PortalContext, subscriptionID, priceID string) (remit.SubscriptionChangePreview, error) {
	in, err := p.portalChange(ctx, pc, subscriptionID, priceID)
	if err != nil {
		return remit.SubscriptionChangePreview{}, err
	}
	return p.quotes.PreviewChange(ctx, pc.Merchant, subscriptionID, in)
}

// PortalChangeSubscription switches the subscription to priceID (Quotes.ChangeSubscription), as
// its preview showed.
func (p *Portal) PortalChangeSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID, priceID string) (remit.Subscription, error) {
	in, err := p.portalChange(ctx, pc, subscriptionID, priceID)
	if err != nil {
		return remit.Subscription{}, err
	}
	return p.quotes.ChangeSubscription(ctx, pc.Merchant, subscriptionID, in)
}

// PortalInvoices are the session customer's invoices but drafts (not sent yet), newest first (at
// most 100), where the configuration shows the invoice history.
//
// Errors: forbidden (history turned off).
func (p *Portal) PortalInvoices(ctx context.Context, pc remit.PortalContext) ([]remit.Invoice, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeatureInvoiceHistory); err != nil {
		return nil, err
	}
	all, err := p.DB.Read(ctx).ListInvoices(ctx, pc.Merchant.ID, store.InvoiceFilter{CustomerID: pc.Customer.CustomerID, ListPage: store.ListPage{Limit: 100}})
	if err != nil {
		return nil, err
	}
	out := []remit.Invoice{}
	for _, inv := range all {
		if inv.Status != remit.InvoiceDraft {
			out = append(out, inv)
		}
	}
	return out, nil
}

// PortalPauseSubscription pauses (pause true) or resumes one of the session customer's
// subscriptions (Quotes.PauseSubscription, ResumeSubscription: a resume starts a new period and
// invoices it), where the configuration lets the customer pause.
//
// Errors: forbidden (pause turned off), not_found (not the customer's), conflict (its state).
func (p *Portal) PortalPauseSubscription(ctx context.Context, pc remit.PortalContext, subscriptionID string, pause bool) (remit.Subscription, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeaturePause); err != nil {
		return remit.Subscription{}, err
	}
	if _, err := p.PortalSubscription(ctx, pc, subscriptionID); err != nil {
		return remit.Subscription{}, err
	}
	if pause {
		return p.quotes.PauseSubscription(ctx, pc.Merchant, subscriptionID)
	}
	return p.quotes.ResumeSubscription(ctx, pc.Merchant, subscriptionID)
}

// PortalUpdateCustomer changes the session customer's billing details: the fields given (a form's
// values by field name; the address's as address.line1 and so on, remit.PortalAddress) that the
// configuration allows, through PATCH /v1/customers/{id}'s rule
// (every problem one 422; customer.updated).
//
// Errors: forbidden (editing turned off, or a field it does not allow), validation_failure.
func (p *Portal) PortalUpdateCustomer(ctx context.Context, pc remit.PortalContext, fields map[string]string) (remit.Customer, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeatureCustomerUpdate); err != nil {
		return remit.Customer{}, err
	}
	patch, address := map[string]any{}, map[string]string{}
	for k, v := range fields {
		field := k
		if sub, ok := strings.CutPrefix(k, "address."); ok {
			field, address[sub] = "address", v
		}
		if !slices.Contains(pc.Config.CustomerUpdate.AllowedFields, field) || k == "address" {
			return remit.Customer{}, remit.Errorf(remit.EForbidden, "The merchant's portal does not let you change %s.", field).With("field", field)
		}
		if field != "address" {
			patch[k] = v
		}
	}
	if len(address) > 0 {
		var probs remit.Problems
		patch["address"] = remit.PortalAddress(address, &probs)
		if err := probs.Err(); err != nil {
			return remit.Customer{}, err
		}
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return remit.Customer{}, remit.Internal(err)
	}
	pt, err := remit.ParsePatch(body)
	if err != nil {
		return remit.Customer{}, err
	}
	return p.catalog.UpdateCustomer(ctx, pc.Merchant, pc.Customer.CustomerID, pt)
}
