package app

import (
	"context"

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
	var probs remit.Problems
	if remit.CheckCustomer(&c, &probs); probs.Len() > 0 {
		return remit.Customer{}, probs.Err()
	}
	c.CustomerID = remit.IDOr(c.CustomerID, "cus")
	now := micro(ca.Now(m))
	c.Object, c.Environment, c.MerchantAccountID, c.CreatedAt = "customer", m.Environment, m.ID, now
	c.Metadata = remit.CopyMetadata(c.Metadata)
	insert := func(ctx context.Context, tx *store.Tx) error { return customerDuplicate(tx.CreateCustomer(ctx, c), c) }
	return c, ca.insertAndEmit(ctx, insert, scopeOf(m), now, remit.EventCustomerCreated, c.CustomerID, c)
}

// GetCustomer returns a customer of the merchant account.
//
// Errors: not_found.
func (ca *Catalog) GetCustomer(ctx context.Context, m remit.MerchantAccount, customerID string) (remit.Customer, error) {
	c, err := ca.DB.Read(ctx).GetCustomer(ctx, m.ID, customerID)
	return c, err
}

// CreateBillingAccount adds a billing account for an existing customer (billingAccountId generated
// as ba_... when omitted; collectionMethod defaults to charge_automatically) and emits
// billing_account.created.
//
// Errors: validation_failure (currency, taxAddress country, metadata), not_found (customerId,
// details.field "customerId"), conflict (billingAccountId taken).
func (ca *Catalog) CreateBillingAccount(ctx context.Context, m remit.MerchantAccount, b remit.BillingAccount) (remit.BillingAccount, error) {
	var probs remit.Problems
	if remit.CheckBillingAccount(&b, &probs); probs.Len() > 0 {
		return remit.BillingAccount{}, probs.Err()
	}
	b.BillingAccountID = remit.IDOr(b.BillingAccountID, "ba")
	now := micro(ca.Now(m))
	b.Object, b.Environment, b.MerchantAccountID, b.CreatedAt = "billing_account", m.Environment, m.ID, now
	b.Metadata = remit.CopyMetadata(b.Metadata)
	b.DefaultPaymentMethod = nil
	insert := func(ctx context.Context, tx *store.Tx) error {
		if err := remit.AtField(tx.RequireCustomer(ctx, m.ID, b.CustomerID), "customerId"); err != nil {
			return err
		}
		return duplicateAs(tx.CreateBillingAccount(ctx, b), "billing account", "billingAccountId", b.BillingAccountID)
	}
	return b, ca.insertAndEmit(ctx, insert, scopeOf(m), now, remit.EventBillingAccountCreated, b.BillingAccountID, b)
}

// GetBillingAccount returns a billing account of the merchant account with its default payment
// method.
//
// Errors: not_found.
func (ca *Catalog) GetBillingAccount(ctx context.Context, m remit.MerchantAccount, billingAccountID string) (remit.BillingAccount, error) {
	b, err := ca.DB.Read(ctx).GetBillingAccount(ctx, m.ID, billingAccountID, store.Unlocked)
	return b, err
}

// GetPaymentMethod returns a payment method of the merchant account, with TestCard set for the
// sandbox processor.
//
// Errors: not_found.
func (ca *Catalog) GetPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) (remit.PaymentMethod, error) {
	pm, err := ca.DB.Read(ctx).GetPaymentMethod(ctx, m.ID, paymentMethodID)
	return pm, err
}

// customerDuplicate answers a taken customerId or externalId.
func customerDuplicate(err error, c remit.Customer) error {
	if store.DuplicateKey(err) == "external_id" {
		return remit.Duplicate("customer", "externalId", *c.ExternalID)
	}
	return duplicateAs(err, "customer", "customerId", c.CustomerID)
}
