package remit

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// The merchant-account record rule (docs/merchant-accounts.md).

// NormalizeAccountNumber drops the spaces and hyphens people write account numbers with.
func NormalizeAccountNumber(s string) string {
	return strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s))
}

var (
	merchantMCCPattern       = regexp.MustCompile(`^[0-9]{4}$`)
	bankAccountNumberPattern = regexp.MustCompile(`^[A-Za-z0-9]{5,34}$`)
)

// merchantChecks adds the problems of one merchant-account record.
type merchantChecks struct{ *Problems }

// CheckMerchantAccount records every problem of a merchant-account record to create
// (docs/merchant-accounts.md): beyond what the contract checks, and, so that the rule stands on
// its own, the value sets and bounds the contract also checks. env is the request's environment;
// today is the acting account's clock, for dates that may not lie in the future. It reads any
// input, including one decoded leniently from a body that broke the contract (the edge runs it
// then too, so one 422 lists both kinds of problems).
func CheckMerchantAccount(in MerchantAccountInput, env Environment, today time.Time, p *Problems) {
	c := merchantChecks{p}
	c.record(in, env)
	c.profile(in, today)
	c.identities(in, today)
	if u := in.Profile.Underwriting; u != nil {
		c.underwriting(*u)
	}
	MetadataProblems(p, "metadata", in.Profile.Metadata)
}

// record checks the account's own fields.
func (c merchantChecks) record(in MerchantAccountInput, env Environment) {
	if in.Environment != string(env) {
		c.Body("environment", "environment_mismatch", fmt.Sprintf("environment must equal the environment query parameter (%s).", env))
	}
	if in.ExternalMerchantRef != nil && strings.TrimSpace(*in.ExternalMerchantRef) == "" {
		c.Body("externalMerchantRef", "blank", "externalMerchantRef must not be blank; omit it to have one generated.")
	}
	if strings.TrimSpace(in.DisplayName) == "" {
		c.Body("displayName", "blank", "displayName must not be blank.")
	}
	c.enum("legalEntityType", in.LegalEntityType, LegalEntityTypes)
	c.country("country", in.Country)
	c.enum("merchantMode", in.MerchantMode, MerchantModes)
	CurrencyProblem(c.Problems, InBody, "defaultCurrency", in.DefaultCurrency)
	if in.TenantID != nil && strings.TrimSpace(*in.TenantID) == "" {
		c.Body("tenantId", "blank", "tenantId must not be blank; omit it or send your organization ID.")
	}
	c.notBlank("businessTaxId", in.BusinessTaxID)
	c.notBlank("taxId", in.TaxID)
}

// profile checks the business and its principal, and the settlement bank account.
func (c merchantChecks) profile(in MerchantAccountInput, today time.Time) {
	pr := in.Profile
	c.email("email", pr.Email)
	if pr.URL != nil && !ValidWebURL(*pr.URL) {
		c.Body("url", "invalid_url", "url must be an absolute http or https URL, such as https://example.com.")
	}
	if pr.MCC != nil && !merchantMCCPattern.MatchString(*pr.MCC) {
		c.Body("mcc", "invalid_mcc", "mcc must be a four-digit merchant category code, such as 5814.")
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
		number := ""
		if in.BankAccountNumber != nil {
			number = *in.BankAccountNumber
		}
		AccountNumberProblem(c.Problems, "settlementBankAccount.accountNumber", number)
		if strings.TrimSpace(b.Name) == "" {
			c.Body("settlementBankAccount.name", "blank", "settlementBankAccount.name (the account holder) must not be blank.")
		}
		if strings.TrimSpace(b.BankCode) == "" {
			c.Body("settlementBankAccount.bankCode", "blank", "settlementBankAccount.bankCode must not be blank.")
		}
		c.enum("settlementBankAccount.accountType", b.AccountType, BankAccountTypes)
	}
}

// identities checks the associated identities and that together they own at most 100%.
func (c merchantChecks) identities(in MerchantAccountInput, today time.Time) {
	var owned float64
	for i, id := range in.Profile.AssociatedIdentities {
		f := fmt.Sprintf("associatedIdentities[%d]", i)
		if len(id.IdentityRoles) == 0 {
			c.Body(f+".identityRoles", "required", f+".identityRoles needs at least one role.")
		}
		for j, r := range id.IdentityRoles {
			c.enum(fmt.Sprintf("%s.identityRoles[%d]", f, j), r, IdentityRoles)
		}
		if id.RelationType != nil {
			c.enum(f+".relationType", *id.RelationType, RelationTypes)
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
		c.Body("associatedIdentities", "ownership_exceeds_100", fmt.Sprintf("The associated identities' principalPercentageOwnership add up to %s; together they may own at most 100.", formatShare(owned)))
	}
}

// underwriting checks the volumes and the distributions, which sum to 100.
func (c merchantChecks) underwriting(u Underwriting) {
	c.nonNegative("underwriting.annualAchVolume", u.AnnualAchVolume)
	c.nonNegative("underwriting.averageAchTransferAmount", u.AverageAchTransferAmount)
	c.nonNegative("underwriting.averageCardTransferAmount", u.AverageCardTransferAmount)
	if u.CreditCheckIPAddress != nil {
		IPAddressProblem(c.Problems, "underwriting.creditCheckIpAddress", *u.CreditCheckIPAddress)
	}
	if cv := u.CardVolumeDistribution; cv != nil {
		c.distribution("underwriting.cardVolumeDistribution", []merchantShare{{"cardPresentPercentage", cv.CardPresentPercentage},
			{"ecommercePercentage", cv.EcommercePercentage}, {"mailOrderTelephoneOrderPercentage", cv.MailOrderTelephoneOrderPercentage}})
	}
	if v := u.VolumeDistributionByBusinessType; v != nil {
		c.distribution("underwriting.volumeDistributionByBusinessType", []merchantShare{{"businessToConsumerVolumePercentage", v.BusinessToConsumerVolumePercentage},
			{"consumerToConsumerVolumePercentage", v.ConsumerToConsumerVolumePercentage}, {"otherVolumePercentage", v.OtherVolumePercentage}})
	}
}

func (c merchantChecks) enum(field, v string, set []string) {
	if !OneOf(v, set) {
		c.Body(field, "invalid_enum", fmt.Sprintf("%s must be one of %s.", field, strings.Join(set, ", ")))
	}
}

func (c merchantChecks) country(field, v string) {
	CountryProblem(c.Problems, field, v)
}

func (c merchantChecks) notBlank(field string, v *string) {
	if v != nil && strings.TrimSpace(*v) == "" {
		c.Body(field, "blank", fmt.Sprintf("%s must not be blank; omit it instead.", field))
	}
}

func (c merchantChecks) email(field string, v *string) {
	if v != nil && !ValidEmail(*v) {
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
func (c merchantChecks) pastDate(field string, d *ProfileDate, today time.Time) {
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

func (c merchantChecks) address(field string, a *PostalAddress) {
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
