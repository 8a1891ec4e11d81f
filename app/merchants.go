package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Merchant accounts (docs/merchant-accounts.md): creation (in the caller's organization, or as
// a platform's sub-merchant in a fresh claimable organization), onboarding submission and the
// underwriting decision, the payout profile, and claims.
//
// Visibility on /v1/merchant-accounts/{merchantAccountId}/…: the path names the target, which must
// be the acting account, another account of the same organization and environment, or a
// sub-merchant provisioned under the acting account and not yet claimed; anything else is 404.

// Sandbox underwriting: approved, except these business tax IDs.
const (
	SandboxRejectTaxID        = "000000000"
	SandboxUpdateRequestTaxID = "111111111"
)

// CreateMerchantAccount creates a draft merchant account. Without platformMerchantAccountId it
// lives in the caller's organization; with it (sandbox only) it is a sub-merchant of that platform
// account in a new organization named after displayName, and the answer carries the claim link.
// acting is the request's merchant account (its clock dates the checks of past dates).
//
// Errors: forbidden (tenantId, platform account), not_implemented (sub-merchant in production),
// validation_failure (every problem of the record), conflict (duplicate externalMerchantRef).
func (ms *Merchants) CreateMerchantAccount(ctx context.Context, scope remit.Scope, acting remit.MerchantAccount, in remit.MerchantAccountInput) (remit.MerchantAccountObject, error) {
	var out remit.MerchantAccountObject
	if in.TenantID != nil && *in.TenantID != scope.OrganizationID {
		return out, remit.Errorf(remit.EForbidden, "tenantId does not match the organization of this API key; omit it or send your own organization ID.").With("field", "tenantId")
	}
	sub := in.PlatformMerchantAccountID != nil
	if sub && scope.Environment != remit.Sandbox {
		return out, remit.Errorf(remit.ENotImplemented, "Provisioning sub-merchants through platformMerchantAccountId is available in the sandbox only in this version.").With("field", "platformMerchantAccountId")
	}
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var platform remit.MerchantAccount
		if sub {
			var err error
			if platform, err = ms.platformAccount(ctx, tx, scope, *in.PlatformMerchantAccountID); err != nil {
				return err
			}
		}
		if err := ms.MerchantAccountProblems(scope, acting, in).Err(); err != nil {
			return err
		}
		m, secrets, err := newMerchantAccount(scope, in, ms.Clock.Now().Truncate(time.Microsecond)) // a new account's clock has no offset; the store keeps µs
		if err != nil {
			return err
		}
		var claimToken string
		if sub {
			if claimToken, err = ms.provisionUnder(ctx, tx, platform, &m, in.ExternalMerchantRef != nil); err != nil {
				return err
			}
		}
		if err := ms.storeMerchantAccount(ctx, tx, m, secrets); err != nil {
			return err
		}
		if sub {
			if err := ms.storeClaim(ctx, tx, m, platform, claimToken); err != nil {
				return err
			}
		}
		if out, err = remit.NewMerchantAccountObject(m); err != nil {
			return remit.Internal(err)
		}
		if err := ms.emitMerchant(ctx, tx, m, remit.EventMerchantAccountCreated, m.CreatedAt, out, sub); err != nil {
			return err
		}
		if sub {
			u := ms.Config.PublicURL + "/claims/" + claimToken
			out.ClaimURL = &u
		}
		return nil
	})
	return out, err
}

// MerchantAccountProblems are the problems of a merchant-account record to create
// (remit.CheckMerchantAccount), dated by the acting account's clock.
func (ms *Merchants) MerchantAccountProblems(scope remit.Scope, acting remit.MerchantAccount, in remit.MerchantAccountInput) *remit.Problems {
	var p remit.Problems
	remit.CheckMerchantAccount(in, scope.Environment, ms.Now(acting), &p)
	return &p
}

// platformAccount reads the platform account a sub-merchant is provisioned under, locked: a
// platform-enabled account of the caller's organization and environment (else 403).
func (ms *Merchants) platformAccount(ctx context.Context, tx *store.Tx, scope remit.Scope, id string) (remit.MerchantAccount, error) {
	p, err := tx.GetMerchantAccount(ctx, id, store.Locked)
	if err != nil && remit.ErrorCode(err) != remit.ENotFound {
		return p, err
	}
	if err != nil || p.OrganizationID != scope.OrganizationID || p.Environment != scope.Environment || !p.PlatformEnabled {
		return p, remit.Errorf(remit.EForbidden, "platformMerchantAccountId must name a platform-enabled merchant account of your organization in the %s environment; an operator grants the capability (remit bootstrap --platform).", scope.Environment).With("field", "platformMerchantAccountId")
	}
	return p, nil
}

// newMerchantAccount is the draft record of a new merchant account in the caller's organization,
// and the secrets to seal apart from it.
func newMerchantAccount(scope remit.Scope, in remit.MerchantAccountInput, now time.Time) (remit.MerchantAccount, remit.MerchantSecrets, error) {
	id := remit.NewID("ma")
	ref := id
	if in.ExternalMerchantRef != nil {
		ref = *in.ExternalMerchantRef
	}
	profile, secrets := splitMerchantSecrets(in)
	rawProfile, err := json.Marshal(profile)
	if err != nil {
		return remit.MerchantAccount{}, secrets, remit.Internal(err)
	}
	return remit.MerchantAccount{
		ID: id, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ExternalRef: ref,
		DisplayName: in.DisplayName, LegalEntityType: in.LegalEntityType, Country: in.Country, MerchantMode: in.MerchantMode,
		DefaultCurrency: in.DefaultCurrency, Status: remit.MerchantDraft, Profile: rawProfile, CreatedAt: now, UpdatedAt: now,
		ProcessorAccountID: strOf(in.ProcessorAccountID),
	}, secrets, nil
}

// provisionUnder makes m a sub-merchant of platform: its own new organization, a claim that
// expires, a reference unique among the platform's sub-merchants (when the caller chose it). It
// returns the claim token.
func (ms *Merchants) provisionUnder(ctx context.Context, tx *store.Tx, platform remit.MerchantAccount, m *remit.MerchantAccount, refChosen bool) (string, error) {
	if refChosen {
		taken, err := tx.SubMerchantRefTaken(ctx, platform.ID, m.ExternalRef)
		if err != nil {
			return "", err
		}
		if taken {
			return "", remit.Duplicate("merchant account", "externalMerchantRef", m.ExternalRef)
		}
	}
	org := remit.Organization{ID: remit.NewID("org"), Name: m.DisplayName, CreatedAt: m.CreatedAt}
	if err := tx.CreateOrganization(ctx, org); err != nil {
		return "", err
	}
	expires := m.CreatedAt.Add(remit.ClaimTTL)
	m.OrganizationID, m.PlatformMerchantAccountID, m.ClaimExpiresAt = org.ID, platform.ID, &expires
	return NewSecret(), nil
}

// storeMerchantAccount inserts the account and its sealed secrets.
func (ms *Merchants) storeMerchantAccount(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, secrets remit.MerchantSecrets) error {
	if err := duplicateAs(tx.CreateMerchantAccount(ctx, m), "merchant account", "externalMerchantRef", m.ExternalRef); err != nil {
		return err
	}
	sealed, err := ms.sealMerchantSecrets(ctx, tx, secrets)
	if err != nil || sealed == "" {
		return err
	}
	return tx.SetMerchantSecrets(ctx, m.ID, sealed)
}

// storeClaim stores the claim of a sub-merchant's organization (its token hashed).
func (ms *Merchants) storeClaim(ctx context.Context, tx *store.Tx, m, platform remit.MerchantAccount, token string) error {
	return tx.CreateMerchantClaim(ctx, remit.MerchantClaim{
		TokenHash: HashSecret(token), OrganizationID: m.OrganizationID, MerchantAccountID: m.ID,
		PlatformMerchantAccountID: platform.ID, ExpiresAt: *m.ClaimExpiresAt, CreatedAt: m.CreatedAt,
	})
}

// SubmitMerchantOnboarding submits the target merchant account (named in the path) for
// underwriting. Sandbox decides at once; production stays in_review until an operator decides
// (DecideMerchant).
//
// Errors: not_found (target not visible), conflict (not draft or update_requested),
// validation_failure (the submission's own fields, and each field submission requires).
func (ms *Merchants) SubmitMerchantOnboarding(ctx context.Context, scope remit.Scope, targetID string, in remit.OnboardingSubmission) (remit.MerchantAccountObject, error) {
	var out remit.MerchantAccountObject
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := targetMerchant(ctx, tx.Q, scope, targetID, true)
		if err != nil {
			return err
		}
		if err := remit.MerchantStates.Check(m.ID, m.Status, remit.ActionSubmit); err != nil {
			return err
		}
		var p remit.Problems
		remit.CheckOnboardingSubmission(in, scope.Environment, &p)
		ip := in.ClientIP
		if in.IPAddress != nil && *in.IPAddress != "" {
			ip = *in.IPAddress
		}
		ua := in.ClientUserAgent
		if in.UserAgent != nil && *in.UserAgent != "" {
			ua = *in.UserAgent
		}
		profile, err := merchantProfile(m)
		if err != nil {
			return err
		}
		submissionRequirements(&p, m, profile)
		if err := p.Err(); err != nil {
			return err
		}

		now := ms.Now(m).Truncate(time.Microsecond)
		by := "merchant"
		if in.SubmittedByType != nil {
			by = *in.SubmittedByType
		}
		m.Onboarding = remit.Onboarding{SubmittedAt: &now, SubmittedByType: &by,
			Agreement: &remit.Agreement{IPAddress: ip, UserAgent: ua, AcceptedAt: now}}
		if err := ms.setMerchantStatus(ctx, tx, &m, remit.MerchantInReview, now, remit.EventMerchantAccountSubmitted); err != nil {
			return err
		}
		if m.Environment == remit.Sandbox {
			secrets, err := ms.loadMerchantSecrets(ctx, tx, m.ID)
			if err != nil {
				return err
			}
			status, event := sandboxDecision(secrets.BusinessTaxID)
			// Decided at once, yet after the submission, so that the events keep their order.
			decided := now.Add(time.Microsecond)
			m.Onboarding.DecidedAt = &decided
			if err := ms.setMerchantStatus(ctx, tx, &m, status, decided, event); err != nil {
				return err
			}
		}
		out, err = remit.NewMerchantAccountObject(m)
		if err != nil {
			return remit.Internal(err)
		}
		return nil
	})
	return out, err
}

// merchantDecisions maps an operator's decision to the status it sets and the event it emits.
var merchantDecisions = map[string]struct {
	status remit.MerchantStatus
	event  remit.EventType
}{
	"approve":        {remit.MerchantApproved, remit.EventMerchantAccountApproved},
	"reject":         {remit.MerchantRejected, remit.EventMerchantAccountRejected},
	"request-update": {remit.MerchantUpdateRequested, remit.EventMerchantAccountUpdateRequested},
}

// DecideMerchant records an operator's underwriting decision (approve, reject, request-update) on
// a merchant account that is in review (production accounts wait there for it), and returns its new
// status.
//
// Errors: not_found, conflict (not in review), validation_failure (unknown decision).
func (ms *Merchants) DecideMerchant(ctx context.Context, merchantAccountID, decision string) (remit.MerchantStatus, error) {
	d, ok := merchantDecisions[decision]
	if !ok {
		return "", remit.Invalid(remit.FieldError{Field: "decision", Location: remit.InBody, Reason: "invalid_enum",
			Message: "The decision must be one of approve, reject, request-update."})
	}
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := tx.GetMerchantAccount(ctx, merchantAccountID, store.Locked)
		if err != nil {
			return err
		}
		if err := remit.MerchantStates.Check(m.ID, m.Status, remit.ActionDecide); err != nil {
			return err
		}
		now := ms.Now(m).Truncate(time.Microsecond)
		m.Onboarding.DecidedAt = &now
		return ms.setMerchantStatus(ctx, tx, &m, d.status, now, d.event)
	})
	if err != nil {
		return "", err
	}
	return d.status, nil
}

// GetPayoutProfile returns how and when the target merchant account (named in the path) is paid.
//
// Errors: not_found (target not visible).
func (ms *Merchants) GetPayoutProfile(ctx context.Context, scope remit.Scope, targetID string) (remit.PayoutProfile, error) {
	m, err := targetMerchant(ctx, ms.DB.Read(ctx), scope, targetID, false)
	if err != nil {
		return remit.PayoutProfile{}, err
	}
	pp, err := remit.NewPayoutProfile(m)
	if err != nil {
		return pp, remit.Internal(err)
	}
	return pp, nil
}

// ListMerchantAccounts lists the merchant accounts of the caller's organization in the request's
// environment, newest first. (A sub-merchant provisioned under one of them lives in an organization
// of its own, until claimed and after: it is not listed.)
//
// Errors: validation_failure (limit, cursor, createdFrom, createdTo).
func (ms *Merchants) ListMerchantAccounts(ctx context.Context, scope remit.Scope, in remit.ListQuery) (remit.List[remit.MerchantAccountObject], error) {
	return listPage(ctx, ms.core, scope, "merchant_accounts", in, nil, func(page store.ListPage) ([]remit.MerchantAccountObject, error) {
		accounts, err := ms.DB.Read(ctx).ListMerchantAccounts(ctx, scope.OrganizationID, scope.Environment, page)
		if err != nil {
			return nil, err
		}
		out := make([]remit.MerchantAccountObject, len(accounts))
		for i, m := range accounts {
			if out[i], err = remit.NewMerchantAccountObject(m); err != nil {
				return nil, remit.Internal(err)
			}
		}
		return out, nil
	})
}

// ClaimOrganization hands a provisioned organization to the holder of its claim token, once: it
// issues a new API key for the organization and ends the platform's reach over the account.
//
// Errors: not_found (unknown token), conflict (already claimed, or expired).
func (ms *Merchants) ClaimOrganization(ctx context.Context, token string) (remit.OrganizationClaim, error) {
	var out remit.OrganizationClaim
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		hash := HashSecret(token)
		c, err := tx.GetMerchantClaim(ctx, hash)
		if errors.Is(err, store.ErrNotFound) {
			return remit.Errorf(remit.ENotFound, "No such claim: the claim link is unknown. Check that the whole URL was used.").With("resource", "claim")
		}
		if err != nil {
			return err
		}
		m, err := tx.GetMerchantAccount(ctx, c.MerchantAccountID, store.Locked)
		if err != nil {
			return err
		}
		now := ms.Now(m).Truncate(time.Microsecond)
		if c.ClaimedAt != nil {
			return remit.Errorf(remit.EConflict, "This claim link was already used; the organization has been handed over.").
				With("currentState", "claimed").With("reason", "invalid_state")
		}
		if !now.Before(c.ExpiresAt) {
			return remit.Errorf(remit.EConflict, "This claim link expired at %s; ask the platform to provision the account again.", c.ExpiresAt.Format(time.RFC3339)).
				With("currentState", "expired").With("reason", "invalid_state")
		}
		keyID, apiKey, err := ms.access.CreateAPIKey(ctx, c.OrganizationID, []remit.Environment{remit.Sandbox, remit.Production})
		if err != nil {
			return err
		}
		if err := tx.MarkMerchantClaimed(ctx, hash, m.ID, keyID, now); errors.Is(err, store.ErrConflict) {
			return remit.Errorf(remit.EConflict, "This claim link was already used.").With("currentState", "claimed").With("reason", "invalid_state")
		} else if err != nil {
			return err
		}
		m.ClaimedAt, m.UpdatedAt = &now, now
		obj, err := remit.NewMerchantAccountObject(m)
		if err != nil {
			return remit.Internal(err)
		}
		// The platform hears of the hand-over: it is the last event it gets about this account.
		if err := ms.emitMerchant(ctx, tx, m, remit.EventMerchantAccountClaimed, now, obj, true); err != nil {
			return err
		}
		out = remit.OrganizationClaim{Object: "organization_claim", OrganizationID: c.OrganizationID, MerchantAccountID: m.ID,
			Environment: m.Environment, APIKey: apiKey, ClaimedAt: now, CreatedAt: c.CreatedAt}
		return nil
	})
	return out, err
}

// targetMerchant resolves the merchant account named in a /v1/merchant-accounts/{id}/… path for the
// acting scope; anything the scope may not reach is not_found.
func targetMerchant(ctx context.Context, q store.Q, scope remit.Scope, id string, lock bool) (remit.MerchantAccount, error) {
	m, err := q.GetMerchantAccount(ctx, id, store.Read{ForUpdate: lock})
	if err != nil && remit.ErrorCode(err) != remit.ENotFound {
		return m, err
	}
	if err != nil || m.Environment != scope.Environment ||
		(m.OrganizationID != scope.OrganizationID && !m.LinkedTo(scope.MerchantAccountID)) {
		return remit.MerchantAccount{}, remit.NotFound("merchant account", id, "")
	}
	return m, nil
}

// setMerchantStatus stores m's new status with its onboarding record and emits event.
func (ms *Merchants) setMerchantStatus(ctx context.Context, tx *store.Tx, m *remit.MerchantAccount, status remit.MerchantStatus, now time.Time, event remit.EventType) error {
	if err := tx.SetMerchantStatus(ctx, m.ID, status, m.Onboarding, now); err != nil {
		return err
	}
	m.Status, m.UpdatedAt = status, now
	obj, err := remit.NewMerchantAccountObject(*m)
	if err != nil {
		return remit.Internal(err)
	}
	return ms.emitMerchant(ctx, tx, *m, event, now, obj, m.LinkedTo(m.PlatformMerchantAccountID))
}

// emitMerchant writes a merchant-account event to the account's own stream and, when toPlatform,
// to the stream of the platform account it was provisioned under (dated by that account's clock:
// now moved by the difference of the two clocks, so that the events keep their order there too).
// The object never carries the claim link.
func (ms *Merchants) emitMerchant(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, typ remit.EventType, now time.Time, obj remit.MerchantAccountObject, toPlatform bool) error {
	return ms.emitMerchantChange(ctx, tx, m, typ, now, obj, toPlatform, nil)
}

// emitMerchantChange is emitMerchant with an update's previous attributes (nil: not an update).
func (ms *Merchants) emitMerchantChange(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, typ remit.EventType, now time.Time, obj remit.MerchantAccountObject, toPlatform bool, previous map[string]any) error {
	obj.ClaimURL = nil
	scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
	if err := ms.emit(ctx, tx, scope, now, typ, m.ID, obj, previous); err != nil {
		return err
	}
	if !toPlatform || m.PlatformMerchantAccountID == "" {
		return nil
	}
	p, err := tx.GetMerchantAccount(ctx, m.PlatformMerchantAccountID, store.Unlocked)
	if err != nil {
		return err
	}
	ps := remit.Scope{OrganizationID: p.OrganizationID, Environment: p.Environment, MerchantAccountID: p.ID}
	return ms.emit(ctx, tx, ps, now.Add(p.ClockOffset-m.ClockOffset), typ, m.ID, obj, previous)
}

func (ms *Merchants) loadMerchantSecrets(ctx context.Context, tx *store.Tx, id string) (remit.MerchantSecrets, error) {
	sealed, err := tx.GetMerchantSecrets(ctx, id)
	if err != nil {
		return remit.MerchantSecrets{}, err
	}
	return ms.openMerchantSecrets(ctx, tx, sealed)
}

// sandboxDecision is the sandbox's underwriting rule.
func sandboxDecision(businessTaxID string) (remit.MerchantStatus, remit.EventType) {
	switch strings.TrimSpace(businessTaxID) {
	case SandboxRejectTaxID:
		return remit.MerchantRejected, remit.EventMerchantAccountRejected
	case SandboxUpdateRequestTaxID:
		return remit.MerchantUpdateRequested, remit.EventMerchantAccountUpdateRequested
	}
	return remit.MerchantApproved, remit.EventMerchantAccountApproved
}

func merchantProfile(m remit.MerchantAccount) (remit.MerchantProfile, error) {
	var p remit.MerchantProfile
	if len(m.Profile) > 0 {
		if err := json.Unmarshal(m.Profile, &p); err != nil {
			return p, remit.Internal(fmt.Errorf("merchant account %s: profile: %w", m.ID, err))
		}
	}
	return p, nil
}

// submissionRequirements adds one problem per field that submission needs and the account lacks.
func submissionRequirements(p *remit.Problems, m remit.MerchantAccount, prof remit.MerchantProfile) {
	missing := func(field, msg string) { p.Body(field, "required_for_submission", msg) }
	if prof.BusinessAddress == nil {
		missing("businessAddress", "businessAddress is required to submit for underwriting; this merchant account has none.")
	}
	if prof.SettlementBankAccount == nil {
		missing("settlementBankAccount", "settlementBankAccount is required to submit for underwriting; this merchant account has none.")
	}
	if blankString(prof.Email) {
		missing("email", "email is required to submit for underwriting; this merchant account has none.")
	}
	for _, id := range prof.AssociatedIdentities {
		if id.IsControlPerson() {
			return
		}
	}
	if m.LegalEntityType == remit.SoleProprietorship {
		if blankString(prof.FirstName) {
			missing("firstName", "firstName (with lastName) is required to submit a sole proprietorship that has no associated identity with role control_person or principal.")
		}
		if blankString(prof.LastName) {
			missing("lastName", "lastName (with firstName) is required to submit a sole proprietorship that has no associated identity with role control_person or principal.")
		}
		return
	}
	missing("associatedIdentities", "A control person is required to submit for underwriting: an associated identity with role control_person or principal.")
}

func blankString(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// splitMerchantSecrets fills the profile's derived parts (last4, "provided" flags) and sets the secrets
// apart.
func splitMerchantSecrets(in remit.MerchantAccountInput) (remit.MerchantProfile, remit.MerchantSecrets) {
	prof := in.Profile
	var s remit.MerchantSecrets
	if in.BusinessTaxID != nil && !blankString(in.BusinessTaxID) {
		s.BusinessTaxID, prof.BusinessTaxIDProvided = strings.TrimSpace(*in.BusinessTaxID), true
	}
	if in.TaxID != nil && !blankString(in.TaxID) {
		s.TaxID, prof.TaxIDProvided = strings.TrimSpace(*in.TaxID), true
	}
	if prof.SettlementBankAccount != nil && in.BankAccountNumber != nil {
		ba := *prof.SettlementBankAccount
		s.BankAccountNumber = remit.NormalizeAccountNumber(*in.BankAccountNumber)
		ba.Last4 = s.BankAccountNumber[max(0, len(s.BankAccountNumber)-4):]
		prof.SettlementBankAccount = &ba
	}
	if len(prof.AssociatedIdentities) > 0 {
		ids := make([]remit.AssociatedIdentity, len(prof.AssociatedIdentities))
		copy(ids, prof.AssociatedIdentities)
		given := false
		taxIDs := make([]string, len(ids))
		for i := range ids {
			if i < len(in.IdentityTaxIDs) && !blankString(in.IdentityTaxIDs[i]) {
				taxIDs[i], ids[i].TaxIDProvided, given = strings.TrimSpace(*in.IdentityTaxIDs[i]), true, true
			}
		}
		if given {
			s.IdentityTaxIDs = taxIDs
		}
		prof.AssociatedIdentities = ids
	}
	return prof, s
}
