package app

import (
	"context"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Customers and billing accounts (docs/catalog-and-balance.md).

// CreateCustomer adds a customer (customerId generated as cus_... when omitted) and emits
// customer.created.
//
// Errors: validation_failure (email, address country, metadata), conflict (customerId or
// externalId taken; details.field names which).
func (ca *Catalog) CreateCustomer(ctx context.Context, m remit.MerchantAccount, c remit.Customer) (remit.Customer, error) {
	return create(ctx, ca.core, m, &c, remit.EventCustomerCreated, func(probs *remit.Problems) { remit.CheckCustomer(&c, probs) }, func(now time.Time) string {
		c.CustomerID = remit.IDOr(c.CustomerID, "cus")
		c.Object, c.Environment, c.MerchantAccountID, c.CreatedAt = "customer", m.Environment, m.ID, now
		c.Metadata = remit.CopyMetadata(c.Metadata)
		return c.CustomerID
	}, func(ctx context.Context, tx *store.Tx, _ time.Time) error {
		return customerDuplicate(tx.CreateCustomer(ctx, c), c)
	})
}

// GetCustomer returns a customer of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetCustomer(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.Customer, error) {
	return ca.DB.Read(ctx).GetCustomer(ctx, m.ID, customerID)
}

// ListCustomers lists the merchant account's customers newest first, by e-mail address (exact) or
// search (the start of the name or of the e-mail address, any case).
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListCustomers(ctx context.Context, m remit.MerchantAccount, in remit.CustomerQuery) (remit.List[remit.Customer], error) {
	return listPage(ctx, ca.core, scopeOf(m), "customers", in.ListQuery, nil, func(page store.ListPage) ([]remit.Customer, error) {
		return ca.DB.Read(ctx).ListCustomers(ctx, m.ID, store.CustomerFilter{Email: in.Email, Prefix: in.Search, ListPage: page})
	})
}

// CreateBillingAccount adds a billing account for an existing customer (billingAccountId generated
// as ba_... when omitted; collectionMethod defaults to charge_automatically) and emits
// billing_account.created.
//
// Errors: validation_failure (currency, taxAddress country, metadata), not_found (customerId,
// details.field "customerId"), conflict (billingAccountId taken).
func (ca *Catalog) CreateBillingAccount(ctx context.Context, m remit.MerchantAccount, b remit.BillingAccount) (remit.BillingAccount, error) {
	return create(ctx, ca.core, m, &b, remit.EventBillingAccountCreated, func(probs *remit.Problems) { remit.CheckBillingAccount(&b, probs) }, func(now time.Time) string {
		b.BillingAccountID = remit.IDOr(b.BillingAccountID, "ba")
		b.Object, b.Environment, b.MerchantAccountID, b.CreatedAt = "billing_account", m.Environment, m.ID, now
		b.Metadata = remit.CopyMetadata(b.Metadata)
		b.DefaultPaymentMethod = nil
		return b.BillingAccountID
	}, func(ctx context.Context, tx *store.Tx, _ time.Time) error {
		if err := remit.AtField(tx.RequireCustomer(ctx, m.ID, b.CustomerID), "customerId"); err != nil {
			return err
		}
		return duplicateAs(tx.CreateBillingAccount(ctx, b), "billing account", "billingAccountId", b.BillingAccountID)
	})
}

// GetBillingAccount returns a billing account of the merchant account with its default payment
// method.
//
// Errors: not_found.
func (ca *Catalog) GetBillingAccount(ctx context.Context, m remit.MerchantAccount, billingAccountID string) (remit.BillingAccount, error) {
	return ca.DB.Read(ctx).GetBillingAccount(ctx, m.ID, billingAccountID, store.Unlocked)
}

// ListBillingAccounts lists the merchant account's billing accounts newest first, of one customer
// when in.CustomerID is given, each with its default payment method.
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListBillingAccounts(ctx context.Context, m remit.MerchantAccount, in remit.BillingAccountQuery) (remit.List[remit.BillingAccount], error) {
	return listPage(ctx, ca.core, scopeOf(m), "billing_accounts", in.ListQuery, nil, func(page store.ListPage) ([]remit.BillingAccount, error) {
		return ca.DB.Read(ctx).ListBillingAccounts(ctx, m.ID, store.BillingAccountFilter{CustomerID: in.CustomerID, ListPage: page})
	})
}

// GetPaymentMethod returns a payment method of the merchant account, with TestCard set for the
// sandbox processor.
//
// Errors: not_found.
func (ca *Catalog) GetPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) (remit.PaymentMethod, error) {
	return ca.DB.Read(ctx).GetPaymentMethod(ctx, m.ID, paymentMethodID)
}

// ListPaymentMethods lists a customer's saved payment methods newest first, masked (brand and last
// four digits; never what the processor charges), each with the billing accounts that have it as
// their default.
//
// Errors: not_found (the customer), validation_failure (limit, cursor, createdFrom, createdTo).
func (ca *Catalog) ListPaymentMethods(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.ListQuery) (remit.List[remit.SavedPaymentMethod], error) {
	return listPage(ctx, ca.core, scopeOf(m), "payment_methods|"+customerID, in, nil, func(page store.ListPage) ([]remit.SavedPaymentMethod, error) {
		q := ca.DB.Read(ctx)
		if err := q.RequireCustomer(ctx, m.ID, customerID); err != nil {
			return nil, err
		}
		methods, err := q.ListPaymentMethods(ctx, m.ID, customerID, page)
		if err != nil {
			return nil, err
		}
		defaults, err := q.DefaultPaymentMethods(ctx, m.ID, customerID)
		out := make([]remit.SavedPaymentMethod, len(methods))
		for i, pm := range methods {
			out[i] = remit.SavedPaymentMethod{PaymentMethod: pm, DefaultForBillingAccountIDs: defaults[pm.PaymentMethodID]}
			if out[i].DefaultForBillingAccountIDs == nil {
				out[i].DefaultForBillingAccountIDs = []string{}
			}
		}
		return out, err
	})
}

// customerDuplicate answers a taken customerId or externalId.
func customerDuplicate(err error, c remit.Customer) error {
	if store.DuplicateKey(err) == "external_id" {
		return remit.Duplicate("customer", "externalId", *c.ExternalID)
	}
	return duplicateAs(err, "customer", "customerId", c.CustomerID)
}
