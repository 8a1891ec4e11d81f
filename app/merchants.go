package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Merchant accounts (product.md "Merchant accounts"): creation (in the caller's organization, or as
// a platform's sub-merchant in a fresh claimable organization), onboarding submission and the
// underwriting decision, the payout profile, and claims.
//
// Visibility on /v1/merchant-accounts/{merchantAccountId}/…: the path names the target, which must
// be the acting account, another account of the same organization and environment, or a
// sub-merchant provisioned under the acting account and not yet claimed; anything else is 404.

// Merchant-account event types.
const (
	EventMerchantCreated         = "merchant_account.created"
	EventMerchantSubmitted       = "merchant_account.submitted"
	EventMerchantApproved        = "merchant_account.approved"
	EventMerchantRejected        = "merchant_account.rejected"
	EventMerchantUpdateRequested = "merchant_account.update_requested"
	EventMerchantClaimed         = "merchant_account.claimed"
)

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
			p, err := tx.GetMerchantAccount(ctx, *in.PlatformMerchantAccountID, true)
			if err != nil && remit.ErrorCode(err) != remit.ENotFound {
				return err
			}
			if err != nil || p.OrganizationID != scope.OrganizationID || p.Environment != scope.Environment || !p.PlatformEnabled {
				return remit.Errorf(remit.EForbidden, "platformMerchantAccountId must name a platform-enabled merchant account of your organization in the %s environment; an operator grants the capability (remit bootstrap --platform).", scope.Environment).With("field", "platformMerchantAccountId")
			}
			platform = p
		}

		var p remit.Problems
		validateMerchantInput(&p, scope, in, ms.Now(acting))
		if err := p.Err(); err != nil {
			return err
		}

		now := ms.Clock.Now().Truncate(time.Microsecond) // a new account's clock has no offset; the store keeps µs
		id := remit.NewID("ma")
		ref := id
		if in.ExternalMerchantRef != nil {
			ref = *in.ExternalMerchantRef
		}
		profile, secrets := splitMerchantSecrets(in)
		rawProfile, err := json.Marshal(profile)
		if err != nil {
			return remit.Internal(err)
		}
		m := remit.MerchantAccount{
			ID: id, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ExternalRef: ref,
			DisplayName: in.DisplayName, LegalEntityType: in.LegalEntityType, Country: in.Country, MerchantMode: in.MerchantMode,
			DefaultCurrency: in.DefaultCurrency, Status: remit.MerchantDraft, Profile: rawProfile, CreatedAt: now, UpdatedAt: now,
		}
		var token string
		if sub {
			if in.ExternalMerchantRef != nil {
				taken, err := tx.SubMerchantRefTaken(ctx, platform.ID, ref)
				if err != nil {
					return err
				}
				if taken {
					return remit.Duplicate("merchant account", "externalMerchantRef", ref)
				}
			}
			org := remit.Organization{ID: remit.NewID("org"), Name: in.DisplayName, CreatedAt: now}
			if err := tx.CreateOrganization(ctx, org); err != nil {
				return err
			}
			expires := now.Add(remit.ClaimTTL)
			m.OrganizationID, m.PlatformMerchantAccountID, m.ClaimExpiresAt = org.ID, platform.ID, &expires
		}
		if err := tx.CreateMerchantAccount(ctx, m); err != nil {
			return err
		}
		sealed, err := ms.sealMerchantSecrets(ctx, tx, secrets)
		if err != nil {
			return err
		}
		if sealed != "" {
			if err := tx.SetMerchantSecrets(ctx, m.ID, sealed); err != nil {
				return err
			}
		}
		if sub {
			token = NewSecret()
			if err := tx.CreateMerchantClaim(ctx, remit.MerchantClaim{
				TokenHash: HashSecret(token), OrganizationID: m.OrganizationID, MerchantAccountID: m.ID,
				PlatformMerchantAccountID: platform.ID, ExpiresAt: *m.ClaimExpiresAt, CreatedAt: now,
			}); err != nil {
				return err
			}
		}
		if out, err = remit.NewMerchantAccountObject(m); err != nil {
			return remit.Internal(err)
		}
		if err := ms.emitMerchant(ctx, tx, m, EventMerchantCreated, now, out, sub); err != nil {
			return err
		}
		if sub {
			u := ms.Config.PublicURL + "/claims/" + token
			out.ClaimURL = &u
		}
		return nil
	})
	return out, err
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
		if m.Status != remit.MerchantDraft && m.Status != remit.MerchantUpdateRequested {
			return remit.StateConflict("merchant account", m.ID, m.Status, "submitted (only draft and update_requested accounts can be)")
		}
		var p remit.Problems
		if in.Environment != nil && *in.Environment != string(scope.Environment) {
			p.Body("environment", "environment_mismatch", fmt.Sprintf("environment must equal the environment query parameter (%s) or be omitted.", scope.Environment))
		}
		if in.SubmittedByType != nil && !remit.OneOf(*in.SubmittedByType, remit.SubmittedByTypes) {
			p.Body("submittedByType", "invalid_enum", "submittedByType must be one of merchant, operator, system.")
		}
		ip := in.ClientIP
		if in.IPAddress != nil && *in.IPAddress != "" {
			ip = *in.IPAddress
			if _, err := netip.ParseAddr(ip); err != nil {
				p.Body("merchantAgreementIpAddress", "invalid_ip_address", "merchantAgreementIpAddress must be an IPv4 or IPv6 address, or be omitted to use the request's client address.")
			}
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
		if err := ms.setMerchantStatus(ctx, tx, &m, remit.MerchantInReview, now, EventMerchantSubmitted); err != nil {
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
var merchantDecisions = map[string]struct{ status, event string }{
	"approve":        {remit.MerchantApproved, EventMerchantApproved},
	"reject":         {remit.MerchantRejected, EventMerchantRejected},
	"request-update": {remit.MerchantUpdateRequested, EventMerchantUpdateRequested},
}

// DecideMerchant records an operator's underwriting decision (approve, reject, request-update) on
// a merchant account that is in review (production accounts wait there for it), and returns its new
// status.
//
// Errors: not_found, conflict (not in review), validation_failure (unknown decision).
func (ms *Merchants) DecideMerchant(ctx context.Context, merchantAccountID, decision string) (string, error) {
	d, ok := merchantDecisions[decision]
	if !ok {
		return "", remit.Invalid(remit.FieldError{Field: "decision", Location: remit.InBody, Reason: "invalid_enum",
			Message: "The decision must be one of approve, reject, request-update."})
	}
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		m, err := tx.GetMerchantAccount(ctx, merchantAccountID, true)
		if err != nil {
			return err
		}
		if m.Status != remit.MerchantInReview {
			return remit.StateConflict("merchant account", m.ID, m.Status, "decided (only in_review accounts can be)")
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

// ClaimOrganization hands a provisioned organization to the holder of its claim token, once: it
// issues a new API key for the organization and ends the platform's reach over the account.
//
// Errors: not_found (unknown token), conflict (already claimed, or expired).
func (ms *Merchants) ClaimOrganization(ctx context.Context, token string) (remit.OrganizationClaim, error) {
	var out remit.OrganizationClaim
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		hash := HashSecret(token)
		c, err := tx.GetMerchantClaim(ctx, hash)
		if err != nil {
			return err
		}
		m, err := tx.GetMerchantAccount(ctx, c.MerchantAccountID, true)
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
		if err := tx.MarkMerchantClaimed(ctx, hash, m.ID, keyID, now); err != nil {
			return err
		}
		m.ClaimedAt, m.UpdatedAt = &now, now
		obj, err := remit.NewMerchantAccountObject(m)
		if err != nil {
			return remit.Internal(err)
		}
		// The platform hears of the hand-over: it is the last event it gets about this account.
		if err := ms.emitMerchant(ctx, tx, m, EventMerchantClaimed, now, obj, true); err != nil {
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
	m, err := q.GetMerchantAccount(ctx, id, lock)
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
func (ms *Merchants) setMerchantStatus(ctx context.Context, tx *store.Tx, m *remit.MerchantAccount, status string, now time.Time, event string) error {
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
func (ms *Merchants) emitMerchant(ctx context.Context, tx *store.Tx, m remit.MerchantAccount, typ string, now time.Time, obj remit.MerchantAccountObject, toPlatform bool) error {
	obj.ClaimURL = nil
	scope := remit.Scope{OrganizationID: m.OrganizationID, Environment: m.Environment, MerchantAccountID: m.ID}
	if err := ms.Emit(ctx, tx, scope, now, remit.EventType(typ), m.ID, obj); err != nil {
		return err
	}
	if !toPlatform || m.PlatformMerchantAccountID == "" {
		return nil
	}
	p, err := tx.GetMerchantAccount(ctx, m.PlatformMerchantAccountID, false)
	if err != nil {
		return err
	}
	ps := remit.Scope{OrganizationID: p.OrganizationID, Environment: p.Environment, MerchantAccountID: p.ID}
	return ms.Emit(ctx, tx, ps, now.Add(p.ClockOffset-m.ClockOffset), remit.EventType(typ), m.ID, obj)
}

func (ms *Merchants) loadMerchantSecrets(ctx context.Context, tx *store.Tx, id string) (remit.MerchantSecrets, error) {
	sealed, err := tx.GetMerchantSecrets(ctx, id)
	if err != nil {
		return remit.MerchantSecrets{}, err
	}
	return ms.openMerchantSecrets(ctx, tx, sealed)
}

// sandboxDecision is the sandbox's underwriting rule.
func sandboxDecision(businessTaxID string) (status, event string) {
	switch strings.TrimSpace(businessTaxID) {
	case SandboxRejectTaxID:
		return remit.MerchantRejected, EventMerchantRejected
	case SandboxUpdateRequestTaxID:
		return remit.MerchantUpdateRequested, EventMerchantUpdateRequested
	}
	return remit.MerchantApproved, EventMerchantApproved
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
		s.BankAccountNumber = normalizeAccountNumber(*in.BankAccountNumber)
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

// normalizeAccountNumber drops the spaces and hyphens people write account numbers with.
func normalizeAccountNumber(s string) string {
	return strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s))
}

var (
	merchantMCCPattern       = regexp.MustCompile(`^[0-9]{4}$`)
	bankAccountNumberPattern = regexp.MustCompile(`^[A-Za-z0-9]{5,34}$`)
)

// merchantChecks adds the problems of one merchant-account record.
type merchantChecks struct{ *remit.Problems }

// validateMerchantInput adds every problem of a create request beyond what the contract checks
// (and, so that the engine stands on its own, the value sets and bounds the contract also checks).
// today is the acting account's clock, for dates that may not lie in the future.
func validateMerchantInput(p *remit.Problems, scope remit.Scope, in remit.MerchantAccountInput, today time.Time) {
	c := merchantChecks{p}
	if in.Environment != string(scope.Environment) {
		p.Body("environment", "environment_mismatch", fmt.Sprintf("environment must equal the environment query parameter (%s).", scope.Environment))
	}
	if in.ExternalMerchantRef != nil && strings.TrimSpace(*in.ExternalMerchantRef) == "" {
		p.Body("externalMerchantRef", "blank", "externalMerchantRef must not be blank; omit it to have one generated.")
	}
	if strings.TrimSpace(in.DisplayName) == "" {
		p.Body("displayName", "blank", "displayName must not be blank.")
	}
	c.enum("legalEntityType", in.LegalEntityType, remit.LegalEntityTypes)
	c.country("country", in.Country)
	c.enum("merchantMode", in.MerchantMode, remit.MerchantModes)
	remit.CurrencyProblem(p, remit.InBody, "defaultCurrency", in.DefaultCurrency)
	if in.TenantID != nil && strings.TrimSpace(*in.TenantID) == "" {
		p.Body("tenantId", "blank", "tenantId must not be blank; omit it or send your organization ID.")
	}
	c.notBlank("businessTaxId", in.BusinessTaxID)
	c.notBlank("taxId", in.TaxID)

	pr := in.Profile
	c.email("email", pr.Email)
	if pr.URL != nil && !remit.ValidWebURL(*pr.URL) {
		p.Body("url", "invalid_url", "url must be an absolute http or https URL, such as https://example.com.")
	}
	if pr.MCC != nil && !merchantMCCPattern.MatchString(*pr.MCC) {
		p.Body("mcc", "invalid_mcc", "mcc must be a four-digit merchant category code, such as 5814.")
	}
	c.nonNegative("maxTransactionAmount", pr.MaxTransactionAmount)
	c.nonNegative("achMaxTransactionAmount", pr.AchMaxTransactionAmount)
	c.nonNegative("annualCardVolume", pr.AnnualCardVolume)
	c.percent("principalPercentageOwnership", pr.PrincipalPercentageOwnership)
	c.pastDate("dateOfBirth", pr.DateOfBirth, today)
	c.pastDate("incorporationDate", pr.IncorporationDate, today)
	c.address("businessAddress", pr.BusinessAddress)
	c.address("personalAddress", pr.PersonalAddress)

	if b := pr.SettlementBankAccount; b != nil {
		if in.BankAccountNumber == nil || !bankAccountNumberPattern.MatchString(normalizeAccountNumber(*in.BankAccountNumber)) {
			p.Body("settlementBankAccount.accountNumber", "invalid_account_number", "settlementBankAccount.accountNumber must be 5 to 34 letters or digits (spaces and hyphens are ignored).")
		}
		if strings.TrimSpace(b.Name) == "" {
			p.Body("settlementBankAccount.name", "blank", "settlementBankAccount.name (the account holder) must not be blank.")
		}
		if strings.TrimSpace(b.BankCode) == "" {
			p.Body("settlementBankAccount.bankCode", "blank", "settlementBankAccount.bankCode must not be blank.")
		}
		c.enum("settlementBankAccount.accountType", b.AccountType, remit.BankAccountTypes)
	}

	var owned float64
	for i, id := range pr.AssociatedIdentities {
		f := fmt.Sprintf("associatedIdentities[%d]", i)
		if len(id.IdentityRoles) == 0 {
			p.Body(f+".identityRoles", "required", f+".identityRoles needs at least one role.")
		}
		for j, r := range id.IdentityRoles {
			c.enum(fmt.Sprintf("%s.identityRoles[%d]", f, j), r, remit.IdentityRoles)
		}
		if id.RelationType != nil {
			c.enum(f+".relationType", *id.RelationType, remit.RelationTypes)
		}
		c.email(f+".email", id.Email)
		c.percent(f+".principalPercentageOwnership", id.PrincipalPercentageOwnership)
		if v := id.PrincipalPercentageOwnership; v != nil && *v >= 0 && *v <= 100 {
			owned += *v
		}
		c.pastDate(f+".dateOfBirth", id.DateOfBirth, today)
		c.address(f+".personalAddress", id.PersonalAddress)
		if i < len(in.IdentityTaxIDs) {
			c.notBlank(f+".taxId", in.IdentityTaxIDs[i])
		}
	}
	if owned > 100+1e-9 {
		p.Body("associatedIdentities", "ownership_exceeds_100", fmt.Sprintf("The associated identities' principalPercentageOwnership add up to %s; together they may own at most 100.", formatShare(owned)))
	}

	if u := pr.Underwriting; u != nil {
		c.nonNegative("underwriting.annualAchVolume", u.AnnualAchVolume)
		c.nonNegative("underwriting.averageAchTransferAmount", u.AverageAchTransferAmount)
		c.nonNegative("underwriting.averageCardTransferAmount", u.AverageCardTransferAmount)
		if u.CreditCheckIPAddress != nil {
			if _, err := netip.ParseAddr(*u.CreditCheckIPAddress); err != nil {
				p.Body("underwriting.creditCheckIpAddress", "invalid_ip_address", "underwriting.creditCheckIpAddress must be an IPv4 or IPv6 address.")
			}
		}
		if cv := u.CardVolumeDistribution; cv != nil {
			f := "underwriting.cardVolumeDistribution"
			c.distribution(f, []merchantShare{{"cardPresentPercentage", cv.CardPresentPercentage},
				{"ecommercePercentage", cv.EcommercePercentage}, {"mailOrderTelephoneOrderPercentage", cv.MailOrderTelephoneOrderPercentage}})
		}
		if v := u.VolumeDistributionByBusinessType; v != nil {
			f := "underwriting.volumeDistributionByBusinessType"
			c.distribution(f, []merchantShare{{"businessToConsumerVolumePercentage", v.BusinessToConsumerVolumePercentage},
				{"consumerToConsumerVolumePercentage", v.ConsumerToConsumerVolumePercentage}, {"otherVolumePercentage", v.OtherVolumePercentage}})
		}
	}

	for k := range pr.Metadata {
		if k == "" || len([]rune(k)) > 40 {
			p.Body("metadata", "invalid_key", "metadata keys must be 1 to 40 characters.")
			break
		}
	}
}

func (c merchantChecks) enum(field, v string, set []string) {
	if !remit.OneOf(v, set) {
		c.Body(field, "invalid_enum", fmt.Sprintf("%s must be one of %s.", field, strings.Join(set, ", ")))
	}
}

func (c merchantChecks) country(field, v string) {
	if !remit.ValidCountry(v) {
		c.Body(field, "invalid_country", fmt.Sprintf("%s must be an ISO 3166-1 alpha-2 country code in upper case, such as US.", field))
	}
}

func (c merchantChecks) notBlank(field string, v *string) {
	if v != nil && strings.TrimSpace(*v) == "" {
		c.Body(field, "blank", fmt.Sprintf("%s must not be blank; omit it instead.", field))
	}
}

func (c merchantChecks) email(field string, v *string) {
	if v != nil && !remit.ValidEmail(*v) {
		c.Body(field, "invalid_email", fmt.Sprintf("%s must be an e-mail address such as owner@example.com.", field))
	}
}

func (c merchantChecks) nonNegative(field string, v *int64) {
	if v != nil && *v < 0 {
		c.Body(field, "out_of_range", fmt.Sprintf("%s is an amount in minor units and must be 0 or more.", field))
	}
}

func (c merchantChecks) percent(field string, v *float64) {
	if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 100) {
		c.Body(field, "out_of_range", fmt.Sprintf("%s is a percentage and must be between 0 and 100.", field))
	}
}

type merchantShare struct {
	name string
	v    *float64
}

// distribution checks each share and that the given shares sum to 100.
func (c merchantChecks) distribution(field string, shares []merchantShare) {
	var sum float64
	ok := true
	for _, sh := range shares {
		v := sh.v
		c.percent(field+"."+sh.name, v)
		if v != nil {
			if *v < 0 || *v > 100 {
				ok = false
			}
			sum += *v
		}
	}
	if ok && math.Abs(sum-100) > 1e-6 {
		c.Body(field, "sum_not_100", fmt.Sprintf("The percentages of %s must sum to 100; they sum to %s.", field, formatShare(sum)))
	}
}

func formatShare(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}

// pastDate checks that d is a calendar date that does not lie after today.
func (c merchantChecks) pastDate(field string, d *remit.ProfileDate, today time.Time) {
	if d == nil {
		return
	}
	switch {
	case d.Month < 1 || d.Month > 12:
		c.Body(field+".month", "out_of_range", field+".month must be 1 to 12.")
	case d.Year < 1:
		c.Body(field+".year", "out_of_range", field+".year must be a four-digit year.")
	case !d.Valid():
		c.Body(field+".day", "invalid_date", fmt.Sprintf("%s is not a calendar date: %04d-%02d has no day %d.", field, d.Year, d.Month, d.Day))
	case d.After(today):
		c.Body(field, "in_future", fmt.Sprintf("%s must not be in the future.", field))
	}
}

func (c merchantChecks) address(field string, a *remit.PostalAddress) {
	if a == nil {
		return
	}
	for _, f := range []struct{ name, v string }{{"line1", a.Line1}, {"city", a.City}, {"postalCode", a.PostalCode}} {
		if strings.TrimSpace(f.v) == "" {
			c.Body(field+"."+f.name, "blank", fmt.Sprintf("%s.%s must not be blank.", field, f.name))
		}
	}
	c.country(field+".country", a.Country)
}
