package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/remit-billing/remit"
)

// --- customers ---

// CreateCustomer inserts a customer. A customerId or externalId already used in the merchant
// account is a conflict naming the field.
func (q Q) CreateCustomer(ctx context.Context, c remit.Customer) error {
	_, err := q.exec(ctx, `INSERT INTO customers (merchant_account_id, id, external_id, name, email, address, tax_exempt, metadata, created_at,
		preferred_locale) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.MerchantAccountID, c.CustomerID, optText(c.ExternalID), c.Name, optText(c.Email), jsonText(c.Address), c.TaxExempt,
		metadataText(c.Metadata), remit.Micros(c.CreatedAt), localeOr(c.PreferredLocale))
	switch {
	case violates(err, "external_id"):
		return duplicate("external_id")
	case IsUniqueViolation(err):
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateCustomer")
}

// GetCustomer returns a merchant account's customer, or not_found.
func (q Q) GetCustomer(ctx context.Context, merchantAccountID, customerID string) (c remit.Customer, err error) {
	return q.ReadCustomer(ctx, merchantAccountID, customerID, Unlocked)
}

// UpdateCustomer writes what an update changes of a customer: every field but its ID and creation
// time. An externalId another customer has is a conflict naming external_id.
func (q Q) UpdateCustomer(ctx context.Context, c remit.Customer) error {
	_, err := q.exec(ctx, `UPDATE customers SET external_id = $3, name = $4, email = $5, address = $6, tax_exempt = $7, metadata = $8,
		preferred_locale = $9 WHERE merchant_account_id = $1 AND id = $2`,
		c.MerchantAccountID, c.CustomerID, optText(c.ExternalID), c.Name, optText(c.Email), jsonText(c.Address), c.TaxExempt,
		metadataText(c.Metadata), localeOr(c.PreferredLocale))
	if violates(err, "external_id") {
		return duplicate("external_id")
	}
	return wrapErr(err, "store.UpdateCustomer")
}

// ReadCustomer is GetCustomer; Locked, it takes the row lock (PostgreSQL), as an update does.
func (q Q) ReadCustomer(ctx context.Context, merchantAccountID, customerID string, read Read) (c remit.Customer, err error) {
	return customerTable.get(ctx, q, "store.GetCustomer", merchantAccountID, customerID, read)
}

// customerColumns are a customer's columns as scanCustomerRow scans them.
const customerColumns = `id, external_id, name, email, address, tax_exempt, metadata, created_at, preferred_locale`

// customerTable is the customers table's reads.
var customerTable = accountTable[remit.Customer]{from: "customers", columns: customerColumns, kind: "customer",
	scan: owning(scanCustomerRow, func(c *remit.Customer) *string { return &c.MerchantAccountID })}

// scanCustomerRow scans a customer's columns (customerColumns).
func scanCustomerRow(r interface{ Scan(...any) error }) (c remit.Customer, err error) {
	var ext, email, addr sql.NullString
	var md string
	var created int64
	if err := r.Scan(&c.CustomerID, &ext, &c.Name, &email, &addr, &c.TaxExempt, &md, &created, &c.PreferredLocale); err != nil {
		return c, err
	}
	c.Object = "customer"
	c.ExternalID, c.Email, c.Address = textPtr(ext), textPtr(email), jsonOf[remit.Address](addr)
	c.Metadata, c.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return c, nil
}

// localeOr is a customer's locale as stored: remit.DefaultLocale when it names none.
func localeOr(l string) string {
	if l == "" {
		return remit.DefaultLocale
	}
	return l
}

// RequireCustomer is GetCustomer for a caller that needs only to know the customer exists: nil,
// or not_found. It reads the index alone.
func (q Q) RequireCustomer(ctx context.Context, merchantAccountID, customerID string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM customers WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, customerID).Scan(&one)
	return notFoundOr(err, "customer", customerID, "store.RequireCustomer")
}

// --- billing accounts ---

// CreateBillingAccount inserts a billing account. A billingAccountId already used in the merchant
// account is a conflict.
func (q Q) CreateBillingAccount(ctx context.Context, b remit.BillingAccount) error {
	var pm any
	if b.DefaultPaymentMethod != nil {
		pm = b.DefaultPaymentMethod.PaymentMethodID
	}
	_, err := q.exec(ctx, `INSERT INTO billing_accounts (merchant_account_id, id, customer_id, currency, collection_method,
		tax_address, default_payment_method_id, metadata, created_at, updated_at, dunning)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)`,
		b.MerchantAccountID, b.BillingAccountID, b.CustomerID, b.Currency, b.CollectionMethod, jsonText(b.TaxAddress), pm,
		metadataText(b.Metadata), remit.Micros(b.CreatedAt), jsonText(b.Dunning))
	if IsUniqueViolation(err) {
		return duplicate("id")
	}
	return wrapErr(err, "store.CreateBillingAccount")
}

// billingAccountSelect reads billing accounts (b) with their default payment method's brand and
// last four digits (scanBillingAccount).
const billingAccountSelect = `SELECT b.id, b.customer_id, b.currency, b.collection_method, b.tax_address, b.default_payment_method_id,
		pm.brand, pm.last4, b.metadata, b.created_at, b.dunning
		FROM billing_accounts b LEFT JOIN payment_methods pm
		  ON pm.merchant_account_id = b.merchant_account_id AND pm.id = b.default_payment_method_id
		WHERE b.merchant_account_id = $1`

func scanBillingAccount(row interface{ Scan(...any) error }) (b remit.BillingAccount, err error) {
	var addr, pmID, brand, last4, dunning sql.NullString
	var md string
	var created int64
	err = row.Scan(&b.BillingAccountID, &b.CustomerID, &b.Currency, &b.CollectionMethod, &addr, &pmID, &brand, &last4, &md, &created, &dunning)
	if err != nil {
		return b, err
	}
	b.Object = "billing_account"
	b.TaxAddress, b.Dunning = jsonOf[remit.Address](addr), jsonOf[remit.Dunning](dunning)
	if pmID.Valid {
		b.DefaultPaymentMethod = &remit.PaymentMethodSummary{PaymentMethodID: pmID.String, Brand: brand.String, Last4: last4.String}
	}
	b.Metadata, b.CreatedAt = metadataOf(md), remit.FromMicros(created)
	return b, nil
}

// UpdateBillingAccount writes what an update changes of a billing account: its collection method,
// default payment method, dunning policy and metadata.
func (q Q) UpdateBillingAccount(ctx context.Context, b remit.BillingAccount, at time.Time) error {
	var pm any
	if b.DefaultPaymentMethod != nil {
		pm = b.DefaultPaymentMethod.PaymentMethodID
	}
	_, err := q.exec(ctx, `UPDATE billing_accounts SET collection_method = $3, default_payment_method_id = $4, dunning = $5, metadata = $6,
		updated_at = $7 WHERE merchant_account_id = $1 AND id = $2`,
		b.MerchantAccountID, b.BillingAccountID, b.CollectionMethod, pm, jsonText(b.Dunning), metadataText(b.Metadata), remit.Micros(at))
	return wrapErr(err, "store.UpdateBillingAccount")
}

// GetBillingAccount returns a merchant account's billing account with its default payment method,
// or not_found. Locked, it takes the row lock (PostgreSQL).
func (q Q) GetBillingAccount(ctx context.Context, merchantAccountID, billingAccountID string, read Read) (b remit.BillingAccount, err error) {
	query := billingAccountSelect + ` AND b.id = $2`
	if read.ForUpdate {
		query += q.ForUpdate()
		if q.d == Postgres {
			query += " OF b"
		}
	}
	b, err = scanBillingAccount(q.QueryRow(ctx, query, merchantAccountID, billingAccountID))
	if err = notFoundOr(err, "billing account", billingAccountID, "store.GetBillingAccount"); err != nil {
		return b, err
	}
	b.MerchantAccountID = merchantAccountID
	return b, nil
}

// BillingAccountFilter narrows a list of billing accounts (an empty CustomerID: every customer's).
type BillingAccountFilter struct {
	CustomerID string
	ListPage
}

// ListBillingAccounts lists a merchant account's billing accounts newest first, with their
// default payment method, over billing_accounts_list or billing_accounts_customer_list.
func (q Q) ListBillingAccounts(ctx context.Context, merchantAccountID string, f BillingAccountFilter) ([]remit.BillingAccount, error) {
	f.TimeColumn, f.Tie = "b.created_at", "b.id"
	query, args := pageQuery(billingAccountSelect, []any{merchantAccountID}, f.ListPage, Eq{"b.customer_id", f.CustomerID})
	return queryAll(ctx, q, "store.ListBillingAccounts", scanBillingAccount, func(b *remit.BillingAccount) { b.MerchantAccountID = merchantAccountID }, query, args...)
}

// SetDefaultPaymentMethod makes paymentMethodID the billing account's default.
func (q Q) SetDefaultPaymentMethod(ctx context.Context, merchantAccountID, billingAccountID, paymentMethodID string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE billing_accounts SET default_payment_method_id = $3, updated_at = $4
		WHERE merchant_account_id = $1 AND id = $2`, merchantAccountID, billingAccountID, paymentMethodID, remit.Micros(at))
	return wrapErr(err, "store.SetDefaultPaymentMethod")
}

// --- payment methods ---

// CreatePaymentMethod inserts a payment method.
func (q Q) CreatePaymentMethod(ctx context.Context, m remit.PaymentMethod) error {
	_, err := q.exec(ctx, `INSERT INTO payment_methods (merchant_account_id, id, customer_id, billing_account_id, type, brand, last4, test_card,
		processor_customer, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		m.MerchantAccountID, m.PaymentMethodID, m.CustomerID, optText(m.BillingAccountID), m.Type, m.Brand, m.Last4, m.Token,
		nullIfEmpty(m.ProcessorCustomer), remit.Micros(m.CreatedAt))
	return wrapErr(err, "store.CreatePaymentMethod")
}

// GetPaymentMethod returns a merchant account's payment method, or not_found.
func (q Q) GetPaymentMethod(ctx context.Context, merchantAccountID, paymentMethodID string) (m remit.PaymentMethod, err error) {
	return q.PaymentMethodFor(ctx, merchantAccountID, paymentMethodID, Unlocked)
}

// PaymentMethodFor is GetPaymentMethod with the row's lock as read asks: Locked for a change of the
// method (a detach), Shared for a charge of it, so that a detach waits for the charge's transaction
// and a charge for the detach's (PostgreSQL).
func (q Q) PaymentMethodFor(ctx context.Context, merchantAccountID, paymentMethodID string, read Read) (m remit.PaymentMethod, err error) {
	return paymentMethodTable.get(ctx, q, "store.GetPaymentMethod", merchantAccountID, paymentMethodID, read)
}

// CustomerPaymentMethods lists a customer's attached payment methods, newest first (at most 100),
// over payment_methods_customer_list.
func (q Q) CustomerPaymentMethods(ctx context.Context, merchantAccountID, customerID string) ([]remit.PaymentMethod, error) {
	return queryAll(ctx, q, "store.CustomerPaymentMethods", scanPaymentMethod, func(m *remit.PaymentMethod) { m.MerchantAccountID = merchantAccountID },
		`SELECT `+paymentMethodColumns+` FROM payment_methods WHERE merchant_account_id = $1 AND customer_id = $2 AND detached_at IS NULL
		ORDER BY created_at DESC, id DESC LIMIT 100`, merchantAccountID, customerID)
}

// DetachPaymentMethod marks an attached payment method detached at at and reports whether it was
// attached.
func (q Q) DetachPaymentMethod(ctx context.Context, merchantAccountID, paymentMethodID string, at time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE payment_methods SET detached_at = $3 WHERE merchant_account_id = $1 AND id = $2 AND detached_at IS NULL`,
		merchantAccountID, paymentMethodID, remit.Micros(at))
	return n > 0, wrapErr(err, "store.DetachPaymentMethod")
}

// BillingAccountsDefaultingTo returns the customer's billing accounts whose default payment method
// is paymentMethodID, by ID; Locked, it holds their row locks (PostgreSQL) to the end of the
// transaction.
func (q Q) BillingAccountsDefaultingTo(ctx context.Context, merchantAccountID, customerID, paymentMethodID string, read Read) ([]remit.BillingAccount, error) {
	ids, err := queryStrings(ctx, q, "store.BillingAccountsDefaultingTo", `SELECT id FROM billing_accounts WHERE merchant_account_id = $1 AND customer_id = $2 AND default_payment_method_id = $3
		ORDER BY id`+q.lockFor(read), merchantAccountID, customerID, paymentMethodID)
	if err != nil {
		return nil, err
	}
	out := make([]remit.BillingAccount, 0, len(ids))
	for _, id := range ids {
		b, err := q.GetBillingAccount(ctx, merchantAccountID, id, Unlocked)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// ClearDefaultPaymentMethod leaves the billing account without a default payment method if its
// default is paymentMethodID.
func (q Q) ClearDefaultPaymentMethod(ctx context.Context, merchantAccountID, billingAccountID, paymentMethodID string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE billing_accounts SET default_payment_method_id = NULL, updated_at = $4
		WHERE merchant_account_id = $1 AND id = $2 AND default_payment_method_id = $3`, merchantAccountID, billingAccountID, paymentMethodID, remit.Micros(at))
	return wrapErr(err, "store.ClearDefaultPaymentMethod")
}

// ListPaymentMethods lists a customer's attached payment methods newest first, over
// payment_methods_customer_list.
func (q Q) ListPaymentMethods(ctx context.Context, merchantAccountID, customerID string, p ListPage) ([]remit.PaymentMethod, error) {
	return paymentMethodTable.listFrom(ctx, q, "store.ListPaymentMethods", merchantAccountID,
		paymentMethodTable.selectAll()+` AND customer_id = $2 AND detached_at IS NULL`, []any{merchantAccountID, customerID}, p)
}

// DefaultPaymentMethods returns, for each payment method of a customer that is a billing
// account's default, the IDs of those billing accounts (oldest first).
func (q Q) DefaultPaymentMethods(ctx context.Context, merchantAccountID, customerID string) (map[string][]string, error) {
	type pair struct{ method, account string }
	pairs, err := queryAll(ctx, q, "store.DefaultPaymentMethods", func(row interface{ Scan(...any) error }) (p pair, err error) {
		return p, row.Scan(&p.method, &p.account)
	}, nil, `SELECT default_payment_method_id, id FROM billing_accounts WHERE merchant_account_id = $1 AND customer_id = $2
		AND default_payment_method_id IS NOT NULL ORDER BY created_at, id`, merchantAccountID, customerID)
	out := map[string][]string{}
	for _, p := range pairs {
		out[p.method] = append(out[p.method], p.account)
	}
	return out, err
}

const paymentMethodColumns = `id, customer_id, billing_account_id, type, brand, last4, test_card, processor_customer, created_at, detached_at`

// paymentMethodTable is the payment_methods table's reads.
var paymentMethodTable = accountTable[remit.PaymentMethod]{from: "payment_methods", columns: paymentMethodColumns, kind: "payment method",
	scan: owning(scanPaymentMethod, func(m *remit.PaymentMethod) *string { return &m.MerchantAccountID })}

func scanPaymentMethod(r interface{ Scan(...any) error }) (m remit.PaymentMethod, err error) {
	var ba, pc sql.NullString
	var created int64
	var detached sql.NullInt64
	if err := r.Scan(&m.PaymentMethodID, &m.CustomerID, &ba, &m.Type, &m.Brand, &m.Last4, &m.Token, &pc, &created, &detached); err != nil {
		return m, err
	}
	m.Object, m.Status = "payment_method", remit.PaymentMethodAttached
	m.BillingAccountID, m.ProcessorCustomer, m.CreatedAt = textPtr(ba), pc.String, remit.FromMicros(created)
	if m.DetachedAt = timePtr(detached); m.DetachedAt != nil {
		m.Status = remit.PaymentMethodDetached
	}
	return m, nil
}

// --- payment method setup sessions ---

// CreateSetupSession inserts a setup session.
func (q Q) CreateSetupSession(ctx context.Context, s remit.SetupSession) error {
	_, err := q.exec(ctx, `INSERT INTO payment_method_setup_sessions (merchant_account_id, id, customer_id, billing_account_id,
		method_type, set_as_default, status, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.MerchantAccountID, s.SessionID, s.CustomerID, optText(s.BillingAccountID), s.MethodType, s.SetAsDefault, s.Status,
		remit.Micros(s.ExpiresAt), remit.Micros(s.CreatedAt))
	return wrapErr(err, "store.CreateSetupSession")
}

// GetSetupSession returns a setup session as stored (Status open or completed), or not_found. With
// lock it takes the row lock (PostgreSQL), so that a session completes once.
func (q Q) GetSetupSession(ctx context.Context, merchantAccountID, sessionID string, read Read) (s remit.SetupSession, err error) {
	var ba, pm, setupRef, secret, pcus sql.NullString
	var expires, created int64
	var completed sql.NullInt64
	query := `SELECT id, customer_id, billing_account_id, method_type, set_as_default, status, expires_at, payment_method_id,
		completed_at, created_at, processor_setup_ref, processor_client_secret, processor_customer
		FROM payment_method_setup_sessions WHERE merchant_account_id = $1 AND id = $2`
	if read.ForUpdate {
		query += q.ForUpdate()
	}
	err = q.QueryRow(ctx, query, merchantAccountID, sessionID).
		Scan(&s.SessionID, &s.CustomerID, &ba, &s.MethodType, &s.SetAsDefault, &s.Status, &expires, &pm, &completed, &created,
			&setupRef, &secret, &pcus)
	if err = notFoundOr(err, "payment method setup session", sessionID, "store.GetSetupSession"); err != nil {
		return s, err
	}
	s.Object, s.MerchantAccountID = "payment_method_setup_session", merchantAccountID
	s.BillingAccountID, s.PaymentMethodID = textPtr(ba), textPtr(pm)
	s.Processor = remit.ProcessorSetup{Reference: setupRef.String, SealedClientSecret: secret.String, Customer: pcus.String}
	s.ExpiresAt, s.CompletedAt, s.CreatedAt = remit.FromMicros(expires), timePtr(completed), remit.FromMicros(created)
	return s, nil
}

// CompleteSetupSession marks an open session completed with the payment method it attached. It
// reports false when the session was not open.
func (q Q) CompleteSetupSession(ctx context.Context, merchantAccountID, sessionID, paymentMethodID string, at time.Time) (bool, error) {
	n, err := q.exec(ctx, `UPDATE payment_method_setup_sessions SET status = 'completed', payment_method_id = $3, completed_at = $4
		WHERE merchant_account_id = $1 AND id = $2 AND status = 'open'`, merchantAccountID, sessionID, paymentMethodID, remit.Micros(at))
	return n == 1, wrapErr(err, "store.CompleteSetupSession")
}

// SetSetupSessionProcessor records the processor's setup started for a session, unless one was
// recorded first (it then reports false: read the session again for the one that was).
func (q Q) SetSetupSessionProcessor(ctx context.Context, merchantAccountID, sessionID string, p remit.ProcessorSetup) (bool, error) {
	n, err := q.exec(ctx, `UPDATE payment_method_setup_sessions SET processor_setup_ref = $3, processor_client_secret = $4,
		processor_customer = $5 WHERE merchant_account_id = $1 AND id = $2 AND processor_setup_ref IS NULL`,
		merchantAccountID, sessionID, p.Reference, p.SealedClientSecret, p.Customer)
	return n == 1, wrapErr(err, "store.SetSetupSessionProcessor")
}

// --- processor customers ---

// ProcessorCustomer is the processor's customer for a Remit customer, per merchant account,
// processor and connected account (Account "" for the platform's own).
type ProcessorCustomer struct {
	MerchantAccountID, CustomerID, Processor, Account, Reference string
	CreatedAt                                                    time.Time
}

// GetProcessorCustomer returns the processor's customer reference, if one was recorded.
func (q Q) GetProcessorCustomer(ctx context.Context, c ProcessorCustomer) (string, bool, error) {
	var ref string
	err := q.QueryRow(ctx, `SELECT reference FROM processor_customers WHERE merchant_account_id = $1 AND customer_id = $2
		AND processor = $3 AND account = $4`, c.MerchantAccountID, c.CustomerID, c.Processor, c.Account).Scan(&ref)
	ok, err := foundOr(err, "store.GetProcessorCustomer")
	return ref, ok, err
}

// PutProcessorCustomer records the processor's customer unless one is recorded already; it
// answers the one that is recorded after.
func (q Q) PutProcessorCustomer(ctx context.Context, c ProcessorCustomer) (string, error) {
	if _, err := q.exec(ctx, `INSERT INTO processor_customers (merchant_account_id, customer_id, processor, account, reference, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, c.MerchantAccountID, c.CustomerID, c.Processor, c.Account,
		c.Reference, remit.Micros(c.CreatedAt)); err != nil {
		return "", wrapErr(err, "store.PutProcessorCustomer")
	}
	ref, _, err := q.GetProcessorCustomer(ctx, c)
	return ref, err
}

// --- hosted tokens ---

// CreateHostedToken stores a hosted token (its hash).
func (q Q) CreateHostedToken(ctx context.Context, t remit.HostedToken) error {
	_, err := q.exec(ctx, `INSERT INTO hosted_tokens (token_hash, kind, resource_id, merchant_account_id, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, t.TokenHash, t.Kind, t.ResourceID, t.MerchantAccountID, remit.Micros(t.ExpiresAt), remit.Micros(t.CreatedAt))
	return wrapErr(err, "store.CreateHostedToken")
}

// GetHostedToken returns the hosted token with the given hash, or not_found.
func (q Q) GetHostedToken(ctx context.Context, tokenHash string) (t remit.HostedToken, err error) {
	var expires, created int64
	err = q.QueryRow(ctx, `SELECT token_hash, kind, resource_id, merchant_account_id, expires_at, created_at FROM hosted_tokens
		WHERE token_hash = $1`, tokenHash).Scan(&t.TokenHash, &t.Kind, &t.ResourceID, &t.MerchantAccountID, &expires, &created)
	if err = notFoundOr(err, "hosted token", "", "store.GetHostedToken"); err != nil {
		return t, err
	}
	t.ExpiresAt, t.CreatedAt = remit.FromMicros(expires), remit.FromMicros(created)
	return t, nil
}

// CustomerFilter narrows a list of customers. Search is the dashboard's: a customer ID or an
// e-mail address (exact), or the start of a name (any case). Email is the API's exact e-mail, over
// customers_email; Prefix the API's search=, the start of the name or of the e-mail address (any
// case). Empty fields do not filter. A keyset position (AfterID empty: the first page); one more
// than Limit is returned.
type CustomerFilter struct {
	Search, Email, Prefix string
	ListPage
}

// ListCustomers lists a merchant account's customers newest first, over customers_list (or
// customers_email). A search (Search, Prefix) reads the account's customers in that order until a
// page matches: no index orders the customers whose name starts with some text by creation time.
func (q Q) ListCustomers(ctx context.Context, merchantAccountID string, f CustomerFilter) ([]remit.Customer, error) {
	query, args := customerTable.selectAll(), []any{merchantAccountID}
	if f.Search != "" {
		args = append(args, f.Search, strings.ToLower(escapeLike(f.Search))+"%")
		query += ` AND (id = $2 OR email = $2 OR LOWER(name) LIKE $3 ESCAPE '\')`
	}
	if f.Prefix != "" {
		// Both sides folded by the store's LOWER: SQLite folds ASCII letters only, PostgreSQL by its
		// collation; either way a prefix written as stored always matches.
		args = append(args, escapeLike(f.Prefix)+"%")
		n := itoa(len(args))
		query += ` AND (LOWER(name) LIKE LOWER($` + n + `) ESCAPE '\' OR LOWER(email) LIKE LOWER($` + n + `) ESCAPE '\')`
	}
	return customerTable.listFrom(ctx, q, "store.ListCustomers", merchantAccountID, query, args, f.ListPage, Eq{"email", f.Email})
}

// escapeLike escapes LIKE's wildcards (and its escape character) in s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// CustomerNames returns the names of the merchant account's customers among ids, by ID, in one
// query (the dashboard's lists name the customers of a page). IDs that name no customer are
// absent from the map.
func (q Q) CustomerNames(ctx context.Context, merchantAccountID string, ids []string) (map[string]string, error) {
	return textPairs(ctx, q, "store.CustomerNames", merchantAccountID, ids, func(in string) string {
		return `SELECT id, name FROM customers WHERE merchant_account_id = $1 AND id IN (` + in + `)`
	})
}
