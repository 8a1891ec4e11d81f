package app

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// Payment methods and hosted setup sessions (docs/catalog-and-balance.md).
// A setup session lives one hour on the merchant clock; its hosted token stays valid a day longer,
// so that the portal can tell a late customer the session expired (409) instead of refusing the
// token (401).

const (
	setupSessionTTL   = time.Hour
	setupTokenGrace   = 24 * time.Hour
	setupCompletePath = "/customer-portal/setup-sessions/%s/complete"
)

// CreateSetupSession opens a hosted setup session for the customer, valid one hour, and emits
// payment_method.setup_session.created (without the token). The answer carries the session's token
// and url; neither is shown again.
//
// Errors: not_found (customer; billingAccountId, details.field), validation_failure (setAsDefault
// without billingAccountId; a billing account of another customer).
func (ca *Catalog) CreateSetupSession(ctx context.Context, m remit.MerchantAccount, customerID string, in remit.SetupSessionInput) (remit.SetupSession, error) {
	var s remit.SetupSession
	err := ca.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) (err error) {
		s, err = ca.openSetupSession(ctx, tx, m, customerID, in, setupSessionTTL, micro(ca.Now(m)))
		return err
	})
	return s, err
}

// openSetupSession is CreateSetupSession in the caller's transaction, for a session open ttl from
// now (a payment.failed e-mail links one that lives a week: app/emails.go).
func (ca *Catalog) openSetupSession(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, customerID string, in remit.SetupSessionInput,
	ttl time.Duration, now time.Time) (remit.SetupSession, error) {
	if in.MethodType == "" {
		in.MethodType = "card"
	}
	s := remit.SetupSession{
		Object: "payment_method_setup_session", SessionID: remit.NewID("pmss"), CustomerID: customerID,
		BillingAccountID: in.BillingAccountID, MethodType: in.MethodType, SetAsDefault: in.SetAsDefault,
		ExpiresAt: now.Add(ttl), Status: remit.SessionOpen, Environment: m.Environment, MerchantAccountID: m.ID,
		CreatedAt: now,
	}
	if err := tx.RequireCustomer(ctx, m.ID, customerID); err != nil {
		return s, err
	}
	var probs remit.Problems
	if in.BillingAccountID != nil {
		ba, err := tx.GetBillingAccount(ctx, m.ID, *in.BillingAccountID, store.Unlocked)
		err = remit.AtField(err, "billingAccountId")
		if err != nil {
			return s, err
		}
		if ba.CustomerID != customerID {
			probs.Body("billingAccountId", "customer_mismatch", "The billing account belongs to another customer; give one of this customer's billing accounts.")
		}
	}
	remit.CheckSetupSession(in, &probs)
	if err := probs.Err(); err != nil {
		return s, err
	}
	if err := tx.CreateSetupSession(ctx, s); err != nil {
		return s, err
	}
	token, err := ca.access.IssueHostedToken(ctx, tx, m.ID, remit.HostedSetupSession, s.SessionID, s.ExpiresAt.Add(setupTokenGrace))
	if err != nil {
		return s, err
	}
	if err := ca.Emit(ctx, tx, scopeOf(m), now, remit.EventPaymentMethodSetupSessionCreated, s.SessionID, s); err != nil {
		return s, err
	}
	s.Token = token
	s.URL = ca.Config.PublicURL + strings.Replace(setupCompletePath, "%s", url.PathEscape(s.SessionID), 1) + "?token=" + url.QueryEscape(token)
	return s, nil
}

// CompleteSetupSession attaches a payment method to the session's customer (and billing account),
// makes it the billing account's default when the session has setAsDefault or the account has no
// default yet, and completes the session. In the sandbox paymentMethod names a test method; in
// production it is the processor's method the hosted page's card element saved (pm_…), which is
// checked with the processor (verifySavedMethod) before anything is written. Events:
// payment_method.attached, payment_method.setup_session.completed and, when the default changed,
// billing_account.updated.
//
// Errors: forbidden (a token of another resource; a production merchant account without a
// processor that keeps payment methods), validation_failure (paymentMethod missing, unknown or a
// raw card number, on query field paymentMethod, listing the accepted values in the sandbox; in
// production a method the session's setup did not save), conflict (the session is completed or
// expired, details.currentState; in production, a setup the customer has not finished).
func (ca *Catalog) CompleteSetupSession(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, sessionID, paymentMethod string) (remit.SetupSession, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedSetupSession, sessionID); err != nil {
		return remit.SetupSession{}, err
	}
	var saved processor.SavedMethod
	if m.Environment == remit.Sandbox {
		card, err := testCardParam(paymentMethod)
		if err != nil {
			return remit.SetupSession{}, err
		}
		saved = processor.SavedMethod{Token: card.Token, Brand: card.Brand, Last4: card.Last4}
	} else {
		var err error
		if saved, err = ca.verifySavedMethod(ctx, m, sessionID, paymentMethod); err != nil {
			return remit.SetupSession{}, err
		}
	}
	return ca.attachSavedMethod(ctx, m, sessionID, saved)
}

// attachSavedMethod is CompleteSetupSession's transaction: the session is locked and checked open,
// the method attached, the default set, the session completed.
func (ca *Catalog) attachSavedMethod(ctx context.Context, m remit.MerchantAccount, sessionID string, saved processor.SavedMethod) (remit.SetupSession, error) {
	scope := scopeOf(m)
	return inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (remit.SetupSession, error) {
		now := micro(ca.Now(m))
		s, err := tx.GetSetupSession(ctx, m.ID, sessionID, store.Locked)
		if err != nil {
			return s, err
		}
		s.Environment = m.Environment
		if st := s.StatusAt(now); st != remit.SessionOpen {
			return s, remit.StateConflict("payment method setup session", sessionID, st, "completed")
		}
		pm := remit.PaymentMethod{
			Object: "payment_method", PaymentMethodID: remit.NewID("pm"), CustomerID: s.CustomerID, BillingAccountID: s.BillingAccountID,
			Type: s.MethodType, Brand: saved.Brand, Last4: saved.Last4, Token: saved.Token, ProcessorCustomer: s.Processor.Customer,
			Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now,
		}
		if err := tx.CreatePaymentMethod(ctx, pm); err != nil {
			return s, err
		}
		if err := ca.Emit(ctx, tx, scope, now, remit.EventPaymentMethodAttached, pm.PaymentMethodID, pm); err != nil {
			return s, err
		}
		if err := ca.defaultToNewMethod(ctx, tx, m, s, pm, now); err != nil {
			return s, err
		}
		ok, err := tx.CompleteSetupSession(ctx, m.ID, sessionID, pm.PaymentMethodID, now)
		if err != nil {
			return s, err
		}
		if !ok {
			return s, remit.StateConflict("payment method setup session", sessionID, remit.SessionCompleted, "completed")
		}
		s.Status, s.PaymentMethodID, s.PaymentMethod, s.CompletedAt = remit.SessionCompleted, &pm.PaymentMethodID, pm.Summary(), &now
		return s, ca.Emit(ctx, tx, scope, now, remit.EventPaymentMethodSetupSessionCompleted, s.SessionID, s)
	})
}

// defaultToNewMethod makes pm the default of the session's billing account when the session asks
// for it or the account has none yet (billing_account.updated).
func (ca *Catalog) defaultToNewMethod(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, s remit.SetupSession, pm remit.PaymentMethod, now time.Time) error {
	if s.BillingAccountID == nil {
		return nil
	}
	ba, err := tx.GetBillingAccount(ctx, m.ID, *s.BillingAccountID, store.Locked)
	if err != nil {
		return err
	}
	if !s.SetAsDefault && ba.DefaultPaymentMethod != nil {
		return nil
	}
	if err := tx.SetDefaultPaymentMethod(ctx, m.ID, ba.BillingAccountID, pm.PaymentMethodID, now); err != nil {
		return err
	}
	ba.DefaultPaymentMethod, ba.Environment = pm.Summary(), m.Environment
	if err := ca.Emit(ctx, tx, scopeOf(m), now, remit.EventBillingAccountUpdated, ba.BillingAccountID, ba); err != nil {
		return err
	}
	// The customer came back with a new method: charge what is still open at once (docs/dunning.md).
	if ba.CollectionMethod != remit.ChargeAutomatically {
		return nil
	}
	return ca.payments.retryOpenInvoices(ctx, tx, m, ba.BillingAccountID, now)
}

// testCardParam validates the paymentMethod query parameter of the portal's setup route.
func testCardParam(v string) (remit.TestCard, error) {
	allowed := make([]string, len(remit.TestCards))
	for i, c := range remit.TestCards {
		allowed[i] = c.Token
	}
	list := strings.Join(allowed, ", ")
	fail := func(reason, msg string) (remit.TestCard, error) {
		e := remit.Invalid(remit.FieldError{Field: "paymentMethod", Location: remit.InQuery, Reason: reason, Message: msg})
		e.With("allowedValues", allowed)
		return remit.TestCard{}, e
	}
	if v == "" {
		return fail("required", "The query parameter paymentMethod is required: one of "+list+".")
	}
	if looksLikeCardNumber(v) {
		return fail("raw_card_number", "Raw card numbers are never accepted. Use a test payment method: one of "+list+".")
	}
	card, ok := remit.LookupTestCard(v)
	if !ok {
		return fail("invalid_enum", "paymentMethod must be one of "+list+".")
	}
	return card, nil
}

// looksLikeCardNumber reports whether v is 12 to 19 digits, possibly grouped by spaces or dashes.
func looksLikeCardNumber(v string) bool {
	digits := 0
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '-':
		default:
			return false
		}
	}
	return digits >= 12 && digits <= 19
}
