package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

func customerInput(body api.CustomerCreateRequest) remit.Customer {
	return remit.Customer{
		CustomerID: deref(body.CustomerId), ExternalID: body.ExternalId, Name: body.Name, Email: body.Email,
		Address: address(body.Address), TaxExempt: body.TaxExempt != nil && *body.TaxExempt, Metadata: metadata(body.Metadata),
		PreferredLocale: localeOf(body.PreferredLocale),
	}
}

// listCustomers handles GET /v1/customers.
func (s *Server) listCustomers(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListCustomers(ctx, r.Merchant, remit.CustomerQuery{Email: r.Query("email"), Search: r.Query("search"),
		ListQuery: remit.ListQueryOf(r.Query)})
}

// listCustomerPaymentMethods handles GET /v1/customers/{customerId}/payment-methods.
func (s *Server) listCustomerPaymentMethods(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListPaymentMethods(ctx, r.Merchant, r.Path("customerId"), remit.ListQueryOf(r.Query))
}

func billingAccountInput(body api.BillingAccountCreateRequest) remit.BillingAccount {
	b := remit.BillingAccount{
		BillingAccountID: deref(body.BillingAccountId), CustomerID: body.CustomerId, Currency: body.Currency,
		TaxAddress: address(body.TaxAddress), Metadata: metadata(body.Metadata),
	}
	if body.CollectionMethod != nil {
		b.CollectionMethod = string(*body.CollectionMethod)
	}
	if d := body.Dunning; d != nil {
		b.Dunning = &remit.Dunning{Schedule: d.Schedule}
		if d.FinalAction != nil {
			b.Dunning.FinalAction = string(*d.FinalAction)
		}
	}
	return b
}

// listBillingAccounts handles GET /v1/billing-accounts.
func (s *Server) listBillingAccounts(ctx context.Context, r *Request) (any, error) {
	return s.eng.Catalog.ListBillingAccounts(ctx, r.Merchant, remit.BillingAccountQuery{CustomerID: r.Query("customerId"), ListQuery: remit.ListQueryOf(r.Query)})
}

// setupSessionInput maps the body of createPaymentMethodSetupSession to the engine's input.
func setupSessionInput(body api.PaymentMethodSetupRequest) remit.SetupSessionInput {
	in := remit.SetupSessionInput{BillingAccountID: body.BillingAccountId, SetAsDefault: body.SetAsDefault != nil && *body.SetAsDefault}
	if body.MethodType != nil {
		in.MethodType = string(*body.MethodType)
	}
	return in
}

func address(a *api.CustomerAddress) *remit.Address {
	if a == nil {
		return nil
	}
	return &remit.Address{Line1: a.Line1, Line2: a.Line2, City: a.City, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
}

// localeOf is the locale a body names, or "" (the default) when it names none.
func localeOf(l *api.Locale) string {
	if l == nil {
		return ""
	}
	return string(*l)
}

// catalogPreparers detaches a processor's payment method before the detach's transaction: a
// network call must not hold the store's writer.
func (s *Server) catalogPreparers() map[string]PrepareFunc {
	return map[string]PrepareFunc{
		"detachPaymentMethod": func(ctx context.Context, r *Request) context.Context {
			return s.eng.Catalog.PrepareDetachPaymentMethod(ctx, r.Merchant, r.Path("paymentMethodId"))
		},
	}
}
