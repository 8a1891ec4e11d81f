package httpapi

import (
	"context"
	"net"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// createMerchantAccount handles POST /v1/merchant-accounts.
func (s *Server) createMerchantAccount(ctx context.Context, r *Request, body api.MerchantAccountCreateRequest) (any, error) {
	return s.eng.Merchants.CreateMerchantAccount(ctx, r.Scope, r.Merchant, merchantInput(body))
}

// listMerchantAccounts handles GET /v1/merchant-accounts.
func (s *Server) listMerchantAccounts(ctx context.Context, r *Request) (any, error) {
	return s.eng.Merchants.ListMerchantAccounts(ctx, r.Scope, remit.ListQueryOf(r.Query))
}

// submitMerchantOnboarding handles POST /v1/merchant-accounts/{merchantAccountId}/onboarding/submit.
func (s *Server) submitMerchantOnboarding(ctx context.Context, r *Request, body api.OnboardingSubmitRequest) (any, error) {
	return s.eng.Merchants.SubmitMerchantOnboarding(ctx, r.Scope, r.Path("merchantAccountId"), submissionInput(r, body))
}

// submissionInput maps the body of submitMerchantOnboarding, and the request it came in, to the
// engine's input.
func submissionInput(r *Request, body api.OnboardingSubmitRequest) remit.OnboardingSubmission {
	return remit.OnboardingSubmission{
		Environment: (*string)(body.Environment), SubmittedByType: (*string)(body.SubmittedByType),
		IPAddress: body.MerchantAgreementIpAddress, UserAgent: body.MerchantAgreementUserAgent,
		ClientIP: clientIP(r), ClientUserAgent: r.HTTP.UserAgent(),
	}
}

// getPayoutProfile handles GET /v1/merchant-accounts/{merchantAccountId}/payout-profile.
func (s *Server) getPayoutProfile(ctx context.Context, r *Request) (any, error) {
	return s.eng.Merchants.GetPayoutProfile(ctx, r.Scope, r.Path("merchantAccountId"))
}

// updateMerchantAccount handles PATCH /v1/merchant-accounts/{merchantAccountId}.
func (s *Server) updateMerchantAccount(ctx context.Context, r *Request) (any, error) {
	patch, err := remit.ParsePatch(r.Body)
	if err != nil {
		return nil, err
	}
	return s.eng.Merchants.UpdateMerchantAccount(ctx, r.Scope, r.Path("merchantAccountId"), patch)
}

// claimOrganization handles POST /claims/{token}.
func (s *Server) claimOrganization(ctx context.Context, r *Request) (any, error) {
	return s.eng.Merchants.ClaimOrganization(ctx, r.Path("token"))
}

// clientIP is the address the request came from (the host of RemoteAddr).
func clientIP(r *Request) string {
	host, _, err := net.SplitHostPort(r.HTTP.RemoteAddr)
	if err != nil {
		return r.HTTP.RemoteAddr
	}
	return host
}

// merchantInput converts the contract's create body into the engine's input: the profile as it will
// be stored, with the secrets (account number, tax IDs) set apart.
func merchantInput(b api.MerchantAccountCreateRequest) remit.MerchantAccountInput {
	in := remit.MerchantAccountInput{
		Environment: string(b.Environment), ExternalMerchantRef: b.ExternalMerchantRef, DisplayName: b.DisplayName,
		LegalEntityType: string(b.LegalEntityType), Country: b.Country, MerchantMode: string(b.MerchantMode),
		DefaultCurrency: b.DefaultCurrency, TenantID: b.TenantId, PlatformMerchantAccountID: b.PlatformMerchantAccountId,
		ProcessorAccountID: b.ProcessorAccountId,
		BusinessTaxID:      b.BusinessTaxId, TaxID: b.TaxId,
		Profile: remit.MerchantProfile{
			DoingBusinessAs: b.DoingBusinessAs, BusinessPhone: b.BusinessPhone, Phone: b.Phone, Email: b.Email,
			FirstName: b.FirstName, LastName: b.LastName, MCC: b.Mcc, URL: b.Url,
			MaxTransactionAmount: b.MaxTransactionAmount, AchMaxTransactionAmount: b.AchMaxTransactionAmount,
			AnnualCardVolume: b.AnnualCardVolume, PrincipalPercentageOwnership: b.PrincipalPercentageOwnership,
			HasAcceptedCreditCardsPreviously: b.HasAcceptedCreditCardsPreviously,
			DateOfBirth:                      profileDate(b.DateOfBirth), IncorporationDate: profileDate(b.IncorporationDate),
			BusinessAddress: postalAddress(b.BusinessAddress), PersonalAddress: postalAddress(b.PersonalAddress),
		},
	}
	if b.Metadata != nil {
		in.Profile.Metadata = map[string]string(*b.Metadata)
	}
	if ba := b.SettlementBankAccount; ba != nil {
		number := ba.AccountNumber
		in.BankAccountNumber = &number
		in.Profile.SettlementBankAccount = &remit.MaskedBankAccount{Name: ba.Name, BankCode: ba.BankCode,
			AccountType: string(ba.AccountType), AttemptValidationCheck: ba.AttemptValidationCheck}
	}
	if b.AssociatedIdentities != nil {
		for _, id := range *b.AssociatedIdentities {
			roles := make([]string, len(id.IdentityRoles))
			for i, r := range id.IdentityRoles {
				roles[i] = string(r)
			}
			in.Profile.AssociatedIdentities = append(in.Profile.AssociatedIdentities, remit.AssociatedIdentity{
				IdentityRoles: roles, RelationType: (*string)(id.RelationType), FirstName: id.FirstName, LastName: id.LastName,
				Title: id.Title, Email: id.Email, Phone: id.Phone, PrincipalPercentageOwnership: id.PrincipalPercentageOwnership,
				DateOfBirth: profileDate(id.DateOfBirth), PersonalAddress: postalAddress(id.PersonalAddress),
			})
			in.IdentityTaxIDs = append(in.IdentityTaxIDs, id.TaxId)
		}
	}
	if u := b.Underwriting; u != nil {
		w := &remit.Underwriting{
			AnnualAchVolume: u.AnnualAchVolume, AverageAchTransferAmount: u.AverageAchTransferAmount,
			AverageCardTransferAmount: u.AverageCardTransferAmount, BusinessDescription: u.BusinessDescription,
			CreditCheckAllowed: u.CreditCheckAllowed, CreditCheckIPAddress: u.CreditCheckIpAddress,
			CreditCheckTimestamp: u.CreditCheckTimestamp, CreditCheckUserAgent: u.CreditCheckUserAgent, RefundPolicy: u.RefundPolicy,
		}
		if c := u.CardVolumeDistribution; c != nil {
			w.CardVolumeDistribution = &remit.CardVolumeDistribution{CardPresentPercentage: c.CardPresentPercentage,
				EcommercePercentage: c.EcommercePercentage, MailOrderTelephoneOrderPercentage: c.MailOrderTelephoneOrderPercentage}
		}
		if v := u.VolumeDistributionByBusinessType; v != nil {
			w.VolumeDistributionByBusinessType = &remit.VolumeDistributionByBusinessType{
				BusinessToConsumerVolumePercentage: v.BusinessToConsumerVolumePercentage,
				ConsumerToConsumerVolumePercentage: v.ConsumerToConsumerVolumePercentage,
				OtherVolumePercentage:              v.OtherVolumePercentage}
		}
		in.Profile.Underwriting = w
	}
	return in
}

func profileDate(d *api.MerchantProfileDate) *remit.ProfileDate {
	if d == nil {
		return nil
	}
	return &remit.ProfileDate{Day: d.Day, Month: d.Month, Year: d.Year}
}

func postalAddress(a *api.MerchantAddress) *remit.PostalAddress {
	if a == nil {
		return nil
	}
	return &remit.PostalAddress{Line1: a.Line1, Line2: a.Line2, City: a.City, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
}
