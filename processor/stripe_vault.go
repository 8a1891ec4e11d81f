package processor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/stripe/stripe-go/v83"
)

// The Stripe connector as a Vault: a Remit customer is a Stripe customer, a setup session a
// SetupIntent for off-session use confirmed in the browser by Stripe.js's card element.

var _ Vault = (*Stripe)(nil)

// remitCustomerKey and remitSessionKey are the metadata keys naming Remit's customer and setup
// session on Stripe's objects.
const (
	remitCustomerKey = "remit_customer_id"
	remitSessionKey  = "remit_setup_session_id"
)

// CreateCustomer implements Vault.
func (s *Stripe) CreateCustomer(ctx context.Context, req CustomerRequest) (string, error) {
	params := &stripe.CustomerCreateParams{}
	if req.Email != "" {
		params.Email = stripe.String(req.Email)
	}
	if req.Name != "" {
		params.Name = stripe.String(req.Name)
	}
	created(params, req.IdempotencyRef, remitCustomerKey, req.CustomerID, req.Account)
	c, err := s.client.V1Customers.Create(ctx, params)
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// StartSetup implements Vault: a SetupIntent for cards, to be used off-session.
func (s *Stripe) StartSetup(ctx context.Context, req SetupRequest) (Setup, error) {
	params := &stripe.SetupIntentCreateParams{
		Customer: stripe.String(req.Customer), Usage: stripe.String(string(stripe.SetupIntentUsageOffSession)),
		PaymentMethodTypes: []*string{stripe.String("card")},
	}
	created(params, req.IdempotencyRef, remitSessionKey, req.SessionID, req.Account)
	si, err := s.client.V1SetupIntents.Create(ctx, params)
	if err != nil {
		return Setup{}, err
	}
	return Setup{Reference: si.ID, ClientSecret: si.ClientSecret}, nil
}

// FinishSetup implements Vault: it retrieves the SetupIntent from Stripe, with its payment method.
func (s *Stripe) FinishSetup(ctx context.Context, req FinishSetupRequest) (SavedMethod, error) {
	params := &stripe.SetupIntentRetrieveParams{}
	params.AddExpand("payment_method")
	onAccount(params, req.Account)
	si, err := s.client.V1SetupIntents.Retrieve(ctx, req.Reference, params)
	if err != nil {
		return SavedMethod{}, err
	}
	return SavedFromSetupIntent(si, req)
}

// DetachMethod implements Vault: Stripe's detach of the PaymentMethod. Stripe refuses to detach a
// method that is not attached to a customer (400), so a refusal is checked against the method
// itself: one with no customer, or one Stripe does not know (resource_missing), is detached.
func (s *Stripe) DetachMethod(ctx context.Context, req DetachRequest) error {
	params := &stripe.PaymentMethodDetachParams{}
	onAccount(params, req.Account)
	_, err := s.client.V1PaymentMethods.Detach(ctx, req.PaymentMethod, params)
	if err == nil || missing(err) {
		return nil
	}
	if se := (*stripe.Error)(nil); errors.As(err, &se) && se.HTTPStatusCode == http.StatusBadRequest {
		rp := &stripe.PaymentMethodRetrieveParams{}
		onAccount(rp, req.Account)
		pm, rerr := s.client.V1PaymentMethods.Retrieve(ctx, req.PaymentMethod, rp)
		switch {
		case missing(rerr) || (rerr == nil && pm.Customer == nil):
			return nil
		case rerr != nil:
			return transient(rerr)
		}
	}
	return transient(err)
}

// missing reports whether Stripe answered that the object does not exist.
func missing(err error) bool {
	var se *stripe.Error
	return errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceMissing
}

// transient marks a Stripe failure a retry may cure (no answer, 5xx, 429) as ErrUnavailable.
func transient(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode >= 500 || se.HTTPStatusCode == http.StatusTooManyRequests || se.HTTPStatusCode == 0 {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("stripe: detach payment method: %w", err)
}

// SavedFromSetupIntent is the payment method a retrieved SetupIntent saved, if it is the one req
// names, for req's customer (the Vault rules).
func SavedFromSetupIntent(si *stripe.SetupIntent, req FinishSetupRequest) (SavedMethod, error) {
	if si.Status != stripe.SetupIntentStatusSucceeded {
		if si.PaymentMethod != nil && si.PaymentMethod.ID != req.PaymentMethod {
			return SavedMethod{}, ErrSetupMismatch
		}
		return SavedMethod{}, ErrSetupIncomplete
	}
	pm := si.PaymentMethod
	if pm == nil || pm.ID != req.PaymentMethod || si.Customer == nil || si.Customer.ID != req.Customer || si.ID != req.Reference {
		return SavedMethod{}, ErrSetupMismatch
	}
	out := SavedMethod{Token: pm.ID, Brand: "card"}
	if pm.Card != nil {
		out.Brand, out.Last4 = string(pm.Card.Brand), pm.Card.Last4
	}
	return out, nil
}

// Element implements Vault: Stripe.js from js.stripe.com, with the sources Stripe's
// Content-Security-Policy guidance lists for the card element (and its 3-D Secure frames).
func (s *Stripe) Element() Element {
	return Element{
		Script: "https://js.stripe.com/v3/", PublishableKey: s.publishableKey,
		ScriptSources:  []string{"https://js.stripe.com", "https://*.js.stripe.com"},
		FrameSources:   []string{"https://js.stripe.com", "https://*.js.stripe.com", "https://hooks.stripe.com"},
		ConnectSources: []string{"https://api.stripe.com"},
	}
}
