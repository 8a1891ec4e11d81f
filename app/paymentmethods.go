package app

import (
	"context"
	"errors"
	"fmt"
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
		if st := s.StatusAt(now); st != remit.SessionOpen {
			return s, remit.StateConflict("payment method setup session", sessionID, st, "completed")
		}
		pm := remit.PaymentMethod{
			Object: "payment_method", PaymentMethodID: remit.NewID("pm"), CustomerID: s.CustomerID, BillingAccountID: s.BillingAccountID,
			Type: s.MethodType, Brand: saved.Brand, Last4: saved.Last4, Token: saved.Token, ProcessorCustomer: s.Processor.Customer,
			Environment: m.Environment, MerchantAccountID: m.ID, CreatedAt: now, Status: remit.PaymentMethodAttached,
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
	ba.DefaultPaymentMethod = pm.Summary()
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

// Detaching a payment method (docs/payments.md "Detaching a payment method"). With a processor
// that keeps payment methods (Stripe), the processor's method is detached first, in the
// operation's prepare step (PrepareDetachPaymentMethod: no transaction is open during the call);
// the transaction then detaches Remit's. When the processor fails, nothing changes in Remit.

// detachKey keys, in a request's context, what PrepareDetachPaymentMethod did at the processor.
type detachKey struct{}

// processorDetach is the processor's answer to the detach of one payment method.
type processorDetach struct {
	paymentMethodID string
	err             error
}

// detachesAtProcessor reports whether pm is kept by the processor of m (saved through a production
// setup session), so that a detach must detach it there too.
func (ca *Catalog) detachesAtProcessor(m remit.MerchantAccount, pm remit.PaymentMethod) bool {
	return pm.ProcessorCustomer != "" && ca.vaultFor(m) != nil
}

// PrepareDetachPaymentMethod runs before the detach's transaction: when the method is the
// processor's and the detach rule (remit.CheckDetach, read without locks) allows it, it detaches the
// method at the processor and keeps the answer in the returned context for DetachPaymentMethod.
// Anything else (no such method, a refusal, a sandbox method) is left to the transaction to answer.
func (ca *Catalog) PrepareDetachPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) context.Context {
	q := ca.DB.Read(ctx)
	pm, err := q.GetPaymentMethod(ctx, m.ID, paymentMethodID)
	if err != nil || !ca.detachesAtProcessor(m, pm) {
		return ctx
	}
	accounts, err := q.BillingAccountsDefaultingTo(ctx, m.ID, pm.CustomerID, pm.PaymentMethodID, store.Unlocked)
	if err != nil {
		return ctx
	}
	if uses, err := ca.defaultUses(ctx, q, m, accounts); err != nil || remit.CheckDetach(pm, uses) != nil {
		return ctx
	}
	err = ca.vaultFor(m).DetachMethod(ctx, processor.DetachRequest{PaymentMethod: pm.Token, Account: m.ProcessorAccountID})
	if err != nil {
		ca.Log.Warn("payment method: the processor did not detach it", "paymentMethodId", pm.PaymentMethodID, "err", err)
	}
	return context.WithValue(ctx, detachKey{}, processorDetach{paymentMethodID: pm.PaymentMethodID, err: err})
}

// defaultUses are the billing accounts whose default the method is, each with the open invoices
// it would collect (remit.CheckDetach's input).
func (ca *Catalog) defaultUses(ctx context.Context, q store.Q, m remit.MerchantAccount, accounts []remit.BillingAccount) ([]remit.DefaultUse, error) {
	uses := make([]remit.DefaultUse, len(accounts))
	for i, ba := range accounts {
		uses[i].BillingAccount = ba
		if ba.CollectionMethod == remit.ChargeAutomatically {
			var err error
			if uses[i].OpenInvoiceIDs, err = q.ListDunningInvoices(ctx, m.ID, ba.BillingAccountID); err != nil {
				return nil, err
			}
		}
	}
	return uses, nil
}

// DetachPaymentMethod detaches a payment method from its customer (remit.CheckDetach): it is never
// charged or made a default again, and the billing accounts it was the default of have none
// (billing_account.updated for each). A method the processor keeps is detached there first (see
// PrepareDetachPaymentMethod). Emits payment_method.detached.
//
// Errors: not_found; conflict (already detached, details.currentState; the default of a
// charge_automatically billing account with open invoices, details.reason
// default_payment_method_in_use with billingAccountIds and invoiceIds); internal_error, answered
// 503, when the processor could not detach it (nothing changed; retry).
func (ca *Catalog) DetachPaymentMethod(ctx context.Context, m remit.MerchantAccount, paymentMethodID string) (remit.PaymentMethod, error) {
	return inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (remit.PaymentMethod, error) {
		pm, err := tx.GetPaymentMethod(ctx, m.ID, paymentMethodID)
		if err != nil {
			return pm, err
		}
		// The billing accounts' rows first, then the method's (the order a new default takes them
		// in); the open invoices are read once the method is locked, so that a charge of it that
		// committed meanwhile (it holds the method's row shared) is seen.
		accounts, err := tx.BillingAccountsDefaultingTo(ctx, m.ID, pm.CustomerID, pm.PaymentMethodID, store.Locked)
		if err != nil {
			return pm, err
		}
		if pm, err = tx.PaymentMethodFor(ctx, m.ID, paymentMethodID, store.Locked); err != nil {
			return pm, err
		}
		uses, err := ca.defaultUses(ctx, tx.Q, m, accounts)
		if err != nil {
			return pm, err
		}
		if err := remit.CheckDetach(pm, uses); err != nil {
			return pm, err
		}
		if err := ca.processorDetached(ctx, m, pm); err != nil {
			return pm, err
		}
		now := micro(ca.Now(m))
		if ok, err := tx.DetachPaymentMethod(ctx, m.ID, pm.PaymentMethodID, now); err != nil || !ok {
			if err == nil {
				err = remit.StateConflict("payment method", pm.PaymentMethodID, remit.PaymentMethodDetached, remit.ActionDetach)
			}
			return pm, err
		}
		pm.Status, pm.DetachedAt = remit.PaymentMethodDetached, &now
		if err := ca.Emit(ctx, tx, scopeOf(m), now, remit.EventPaymentMethodDetached, pm.PaymentMethodID, pm); err != nil {
			return pm, err
		}
		for _, u := range uses {
			ba := u.BillingAccount
			if err := tx.ClearDefaultPaymentMethod(ctx, m.ID, ba.BillingAccountID, pm.PaymentMethodID, now); err != nil {
				return pm, err
			}
			ba.DefaultPaymentMethod = nil
			if err := ca.Emit(ctx, tx, scopeOf(m), now, remit.EventBillingAccountUpdated, ba.BillingAccountID, ba); err != nil {
				return pm, err
			}
		}
		return pm, nil
	})
}

// processorDetached is nil when pm need not be detached at the processor or the prepare step
// detached it there; otherwise the error the detach answers (nothing is changed).
func (ca *Catalog) processorDetached(ctx context.Context, m remit.MerchantAccount, pm remit.PaymentMethod) error {
	if !ca.detachesAtProcessor(m, pm) {
		return nil
	}
	done, ok := ctx.Value(detachKey{}).(processorDetach)
	switch {
	case !ok || done.paymentMethodID != pm.PaymentMethodID:
		return remit.Internal(fmt.Errorf("payment method %s: detach without its prepare step", pm.PaymentMethodID))
	case errors.Is(done.err, processor.ErrUnavailable):
		return &remit.Error{Code: remit.EInternal, Err: done.err,
			Message: "The payment processor could not be reached to detach the payment method; nothing was changed. Retry the request."}
	case done.err != nil:
		return remit.Internal(done.err)
	}
	return nil
}
