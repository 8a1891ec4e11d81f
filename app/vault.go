package app

import (
	"context"
	"errors"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/document"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/store"
)

// Production payment methods (docs/payments.md "Stripe"). A production setup session's hosted page
// collects the card with the processor's own element: when the page is first opened, the engine
// makes sure the customer has a customer at the processor and starts a setup there (a Stripe
// SetupIntent); the browser confirms the setup with the processor and sends back the method it
// saved, which the engine checks with the processor before attaching it. No card number reaches
// Remit. Every processor call runs with no transaction open; what it answers is stored in a
// transaction of its own, and a second page load or a retry reuses it (the calls are idempotent
// on the session's and the customer's IDs).

const purposeSetupSecret = "remit setup client secret v1"

// vaultFor is the processor that keeps payment methods for production merchant account m, or nil
// (no connector, or one that does not keep methods): production setup sessions then cannot
// collect a card.
func (ca *Catalog) vaultFor(m remit.MerchantAccount) processor.Vault {
	v, _ := ca.Config.Processor.(processor.Vault)
	return v
}

func noVault() error {
	return remit.Errorf(remit.EForbidden, "This production merchant account has no payment processor that collects cards (set REMIT_STRIPE_SECRET_KEY and REMIT_STRIPE_PUBLISHABLE_KEY); test payment methods exist only in the sandbox environment.")
}

// HostedSetupPage authorizes the hosted token for the session and gathers its page: in the
// sandbox the test methods to choose from; in production the processor's card element, with the
// setup it confirms (started here on the first open of an open session). The caller adds the URL
// the page completes the session with.
//
// Errors: forbidden (a token of another resource; production without a processor that keeps
// payment methods), not_found, processor_error-free: a processor fault is internal (500, logged).
func (ca *Catalog) HostedSetupPage(ctx context.Context, tok remit.HostedToken, m remit.MerchantAccount, sessionID string) (document.SetupPage, error) {
	if err := AuthorizeHostedToken(tok, remit.HostedSetupSession, sessionID); err != nil {
		return document.SetupPage{}, err
	}
	s, err := ca.DB.Read(ctx).GetSetupSession(ctx, m.ID, sessionID, store.Unlocked)
	if err != nil {
		return document.SetupPage{}, err
	}
	cust, err := ca.DB.Read(ctx).GetCustomer(ctx, m.ID, s.CustomerID) // the page is in the customer's language
	if err != nil {
		return document.SetupPage{}, err
	}
	page := document.SetupPage{Locale: cust.PreferredLocale, SessionID: s.SessionID, Merchant: m.DisplayName, Status: s.StatusAt(micro(ca.Now(m)))}
	if s.PaymentMethod == nil && s.PaymentMethodID != nil {
		if pm, err := ca.DB.Read(ctx).GetPaymentMethod(ctx, m.ID, *s.PaymentMethodID); err == nil {
			page.PaymentMethod = CardLabel(pm.Brand, pm.Last4)
		}
	}
	if m.Environment == remit.Sandbox {
		for _, c := range remit.TestCards {
			page.TestCards = append(page.TestCards, document.SetupOption{Token: c.Token, Label: CardLabel(c.Brand, c.Last4), Outcome: c.Outcome})
		}
		return page, nil
	}
	v := ca.vaultFor(m)
	if v == nil || v.Element().PublishableKey == "" {
		return page, noVault()
	}
	if page.Status != remit.SessionOpen {
		return page, nil
	}
	secret, err := ca.startSetup(ctx, v, m, s)
	if err != nil {
		return page, err
	}
	el := v.Element()
	page.Card = &document.CardElement{Script: el.Script, PublishableKey: el.PublishableKey, ClientSecret: secret,
		ScriptSources: el.ScriptSources, FrameSources: el.FrameSources, ConnectSources: el.ConnectSources}
	return page, nil
}

// startSetup answers the client secret of the session's processor setup, starting the setup (and
// the customer's processor customer) when the session has none yet.
func (ca *Catalog) startSetup(ctx context.Context, v processor.Vault, m remit.MerchantAccount, s remit.SetupSession) (string, error) {
	if s.Processor.Reference == "" {
		customer, err := ca.processorCustomer(ctx, v, m, s.CustomerID)
		if err != nil {
			return "", err
		}
		setup, err := v.StartSetup(ctx, processor.SetupRequest{Customer: customer, SessionID: s.SessionID,
			Account: m.ProcessorAccountID, IdempotencyRef: "remit-setup-" + s.SessionID})
		if err != nil {
			return "", remit.Internal(err)
		}
		sealed, err := ca.seal(ctx, purposeSetupSecret, []byte(m.ID+"/"+s.SessionID), []byte(setup.ClientSecret))
		if err != nil {
			return "", remit.Internal(err)
		}
		rec := remit.ProcessorSetup{Reference: setup.Reference, SealedClientSecret: sealed, Customer: customer}
		if s, err = inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (remit.SetupSession, error) {
			if _, err := tx.SetSetupSessionProcessor(ctx, m.ID, s.SessionID, rec); err != nil {
				return s, err
			}
			return tx.GetSetupSession(ctx, m.ID, s.SessionID, store.Unlocked) // the setup recorded first wins
		}); err != nil {
			return "", err
		}
	}
	secret, err := ca.open(ctx, purposeSetupSecret, []byte(m.ID+"/"+s.SessionID), s.Processor.SealedClientSecret)
	if err != nil {
		return "", remit.Internal(err)
	}
	return string(secret), nil
}

// processorCustomer answers the processor's customer of a Remit customer on m's processor account,
// creating it at the processor on first use.
func (ca *Catalog) processorCustomer(ctx context.Context, v processor.Vault, m remit.MerchantAccount, customerID string) (string, error) {
	key := store.ProcessorCustomer{MerchantAccountID: m.ID, CustomerID: customerID, Processor: ca.Config.Processor.Name(),
		Account: m.ProcessorAccountID, CreatedAt: micro(ca.Clock.Now())}
	q := ca.DB.Read(ctx)
	if ref, ok, err := q.GetProcessorCustomer(ctx, key); err != nil || ok {
		return ref, err
	}
	c, err := q.GetCustomer(ctx, m.ID, customerID)
	if err != nil {
		return "", err
	}
	req := processor.CustomerRequest{CustomerID: customerID, Name: c.Name, Account: m.ProcessorAccountID,
		IdempotencyRef: "remit-customer-" + m.ID + "-" + customerID + "-" + m.ProcessorAccountID}
	if c.Email != nil {
		req.Email = *c.Email
	}
	if key.Reference, err = v.CreateCustomer(ctx, req); err != nil {
		return "", remit.Internal(err)
	}
	return inTx(ctx, ca.DB, func(ctx context.Context, tx *store.Tx) (string, error) { return tx.PutProcessorCustomer(ctx, key) })
}

// verifySavedMethod asks the processor whether the session's setup saved paymentMethod (the
// Vault's FinishSetup), before anything is written.
func (ca *Catalog) verifySavedMethod(ctx context.Context, m remit.MerchantAccount, sessionID, paymentMethod string) (processor.SavedMethod, error) {
	v := ca.vaultFor(m)
	if v == nil {
		return processor.SavedMethod{}, noVault()
	}
	if paymentMethod == "" {
		return processor.SavedMethod{}, remit.Invalid(remit.FieldError{Field: "paymentMethod", Location: remit.InQuery, Reason: "required",
			Message: "The query parameter paymentMethod is required: the payment method the card element saved (pm_…)."})
	}
	s, err := ca.DB.Read(ctx).GetSetupSession(ctx, m.ID, sessionID, store.Unlocked)
	if err != nil {
		return processor.SavedMethod{}, err
	}
	if st := s.StatusAt(micro(ca.Now(m))); st != remit.SessionOpen {
		return processor.SavedMethod{}, remit.StateConflict("payment method setup session", sessionID, st, "completed")
	}
	if s.Processor.Reference == "" {
		return processor.SavedMethod{}, remit.Errorf(remit.EConflict, "No card was collected for this session yet: open its hosted page (the session's url) and enter the card there.").
			With("reason", "setup_incomplete")
	}
	saved, err := v.FinishSetup(ctx, processor.FinishSetupRequest{Reference: s.Processor.Reference, Customer: s.Processor.Customer,
		PaymentMethod: paymentMethod, Account: m.ProcessorAccountID})
	switch {
	case errors.Is(err, processor.ErrSetupMismatch):
		return saved, remit.Invalid(remit.FieldError{Field: "paymentMethod", Location: remit.InQuery, Reason: "not_from_session",
			Message: "This payment method was not saved by this session's card form; enter the card on the session's hosted page."})
	case errors.Is(err, processor.ErrSetupIncomplete):
		return saved, remit.Errorf(remit.EConflict, "The card has not been confirmed with the processor yet (it may need the customer's authentication); finish it on the session's hosted page.").
			With("reason", "setup_incomplete")
	case err != nil:
		return saved, remit.Internal(err)
	}
	return saved, nil
}
