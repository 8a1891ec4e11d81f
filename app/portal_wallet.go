package app

import (
	"context"
	"encoding/json"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The customer portal's payment methods and balance (docs/customer-portal.md "Pages"): the
// session customer's saved cards, a new one through a hosted setup session, the default of a
// billing account, a card removed, through the same engine rules as the API's routes.

// portalSetupBack is where the hosted setup page links back to.
const portalSetupBack = "/portal/payment-methods"

// PortalPaymentMethods are the session customer's saved cards, newest first (at most 100), each
// with the billing accounts it is the default of, where the configuration lets the customer
// manage them.
//
// Errors: forbidden (payment methods turned off).
func (p *Portal) PortalPaymentMethods(ctx context.Context, pc remit.PortalContext) ([]remit.SavedPaymentMethod, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeaturePaymentMethods); err != nil {
		return nil, err
	}
	q := p.DB.Read(ctx)
	methods, err := q.ListPaymentMethods(ctx, pc.Merchant.ID, pc.Customer.CustomerID, store.ListPage{Limit: 100})
	if err != nil {
		return nil, err
	}
	defaults, err := q.DefaultPaymentMethods(ctx, pc.Merchant.ID, pc.Customer.CustomerID)
	if err != nil {
		return nil, err
	}
	out := make([]remit.SavedPaymentMethod, len(methods))
	for i, pm := range methods {
		out[i] = remit.SavedPaymentMethod{PaymentMethod: pm, DefaultForBillingAccountIDs: defaults[pm.PaymentMethodID]}
	}
	return out, nil
}

// PortalAddCard opens a hosted setup session (Catalog.CreateSetupSession) for the session
// customer's first billing account and returns the URL of its page, which links back to the
// portal's payment methods.
//
// Errors: forbidden (payment methods turned off), conflict (the customer has no billing account).
func (p *Portal) PortalAddCard(ctx context.Context, pc remit.PortalContext) (string, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeaturePaymentMethods); err != nil {
		return "", err
	}
	ba, err := p.firstBillingAccount(ctx, pc)
	if err != nil {
		return "", err
	}
	s, err := p.catalog.CreateSetupSession(ctx, pc.Merchant, pc.Customer.CustomerID, remit.SetupSessionInput{BillingAccountID: &ba.BillingAccountID})
	if err != nil {
		return "", err
	}
	return s.URL + "&back=" + portalSetupBack, nil
}

func (p *Portal) firstBillingAccount(ctx context.Context, pc remit.PortalContext) (remit.BillingAccount, error) {
	accounts, err := p.DB.Read(ctx).ListBillingAccounts(ctx, pc.Merchant.ID, store.BillingAccountFilter{CustomerID: pc.Customer.CustomerID, ListPage: store.ListPage{Limit: 1}})
	if err != nil {
		return remit.BillingAccount{}, err
	}
	if len(accounts) == 0 {
		return remit.BillingAccount{}, remit.Errorf(remit.EConflict, "The customer has no billing account to save a card for.")
	}
	return accounts[0], nil
}

// portalMethod is one of the session customer's attached payment methods, where the
// configuration lets the customer manage them; another customer's is not_found.
func (p *Portal) portalMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.PaymentMethod, error) {
	if err := remit.PortalAllows(pc.Config, remit.PortalFeaturePaymentMethods); err != nil {
		return remit.PaymentMethod{}, err
	}
	pm, err := p.DB.Read(ctx).GetPaymentMethod(ctx, pc.Merchant.ID, paymentMethodID)
	if err == nil && (pm.CustomerID != pc.Customer.CustomerID || !pm.Status.Allows(remit.ActionDetach)) {
		err = remit.NotFound("payment method", paymentMethodID, "")
	}
	return pm, err
}

// PortalPaymentMethod is one of the session customer's saved cards (the remove page's).
//
// Errors: forbidden (payment methods turned off), not_found (not the customer's, or removed).
func (p *Portal) PortalPaymentMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.PaymentMethod, error) {
	return p.portalMethod(ctx, pc, paymentMethodID)
}

// PortalSetDefaultMethod makes the card the default of the billing account it was saved for (else
// of the customer's first), through PATCH /v1/billing-accounts/{id}'s rule (billing_account.updated;
// open invoices of an automatically charged account are charged again).
//
// Errors: forbidden (payment methods turned off), not_found (not the customer's card).
func (p *Portal) PortalSetDefaultMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.BillingAccount, error) {
	pm, err := p.portalMethod(ctx, pc, paymentMethodID)
	if err != nil {
		return remit.BillingAccount{}, err
	}
	accountID := ""
	if pm.BillingAccountID != nil {
		accountID = *pm.BillingAccountID
	} else {
		ba, err := p.firstBillingAccount(ctx, pc)
		if err != nil {
			return remit.BillingAccount{}, err
		}
		accountID = ba.BillingAccountID
	}
	body, err := json.Marshal(map[string]string{"defaultPaymentMethodId": pm.PaymentMethodID})
	if err != nil {
		return remit.BillingAccount{}, remit.Internal(err)
	}
	pt, err := remit.ParsePatch(body)
	if err != nil {
		return remit.BillingAccount{}, err
	}
	return p.catalog.UpdateBillingAccount(ctx, pc.Merchant, accountID, pt)
}

// PortalRemoveMethod detaches one of the session customer's cards (Catalog.DetachPaymentMethod,
// remit.CheckDetach: the default of an automatically charged account with open invoices stays).
//
// Errors: forbidden (payment methods turned off), not_found (not the customer's card), conflict.
func (p *Portal) PortalRemoveMethod(ctx context.Context, pc remit.PortalContext, paymentMethodID string) (remit.PaymentMethod, error) {
	if _, err := p.portalMethod(ctx, pc, paymentMethodID); err != nil {
		return remit.PaymentMethod{}, err
	}
	ctx = p.catalog.PrepareDetachPaymentMethod(ctx, pc.Merchant, paymentMethodID)
	return p.catalog.DetachPaymentMethod(ctx, pc.Merchant, paymentMethodID)
}

// PortalBalance is the session customer's prepaid balance per currency (Ledger.GetCustomerBalance's
// balances), for the overview.
func (p *Portal) PortalBalance(ctx context.Context, pc remit.PortalContext) ([]remit.CurrencyBalance, error) {
	b, err := p.ledger.GetCustomerBalance(ctx, pc.Merchant, pc.Customer.CustomerID)
	return b.Balances, err
}
