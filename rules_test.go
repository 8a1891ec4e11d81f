package remit_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
)

// TestMetadataProblems: the one metadata rule, counting characters (not bytes).
func TestMetadataProblems(t *testing.T) {
	many := map[string]string{}
	for i := range 51 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	for _, c := range []struct {
		name string
		md   map[string]string
		want []string
	}{
		{"none", nil, nil},
		{"40 characters of é (80 bytes)", map[string]string{strings.Repeat("é", 40): "v"}, nil},
		{"41 characters", map[string]string{strings.Repeat("é", 41): "v"}, []string{"metadata:invalid_key"}},
		{"empty key", map[string]string{"": "v"}, []string{"metadata:invalid_key"}},
		{"bad keys reported once for the object", map[string]string{"": "v", strings.Repeat("x", 41): "v"}, []string{"metadata:invalid_key"}},
		{"500-character value", map[string]string{"k": strings.Repeat("é", 500)}, nil},
		{"501-character value", map[string]string{"k": strings.Repeat("é", 501)}, []string{"metadata.k:invalid_length"}},
		{"51 keys", many, []string{"metadata:too_many_keys"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.MetadataProblems(&p, "metadata", c.md)
			wantProblems(t, &p, c.want...)
		})
	}
}

// TestCheckMerchantAccount: the merchant-account record rule reports every problem, and reads
// a leniently decoded (mostly empty) input without failing.
func TestCheckMerchantAccount(t *testing.T) {
	today := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	valid := func() remit.MerchantAccountInput {
		return remit.MerchantAccountInput{Environment: "sandbox", DisplayName: "Acme", LegalEntityType: "corporation",
			Country: "US", MerchantMode: "direct", DefaultCurrency: "USD"}
	}
	with := func(f func(*remit.MerchantAccountInput)) remit.MerchantAccountInput { in := valid(); f(&in); return in }
	pct := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		in   remit.MerchantAccountInput
		want []string
	}{
		{"valid", valid(), nil},
		{"the record's own fields", with(func(in *remit.MerchantAccountInput) {
			in.Environment, in.DisplayName, in.Country, in.DefaultCurrency = "production", " ", "USA", "XYZ"
		}), []string{"environment:environment_mismatch", "displayName:blank", "country:invalid_format", "defaultCurrency:invalid_currency"}},
		{"a date in the future and one that is not a date", with(func(in *remit.MerchantAccountInput) {
			in.Profile.DateOfBirth = &remit.ProfileDate{Day: 2, Month: 6, Year: 2030}
			in.Profile.IncorporationDate = &remit.ProfileDate{Day: 30, Month: 2, Year: 2016}
		}), []string{"dateOfBirth:in_future", "incorporationDate.day:invalid_date"}},
		{"identities own more than 100%", with(func(in *remit.MerchantAccountInput) {
			in.Profile.AssociatedIdentities = []remit.AssociatedIdentity{
				{IdentityRoles: []string{"beneficial_owner"}, PrincipalPercentageOwnership: pct(60)},
				{PrincipalPercentageOwnership: pct(50)}}
		}), []string{"associatedIdentities[1].identityRoles:required", "associatedIdentities:ownership_exceeds_100"}},
		{"a distribution that does not sum to 100", with(func(in *remit.MerchantAccountInput) {
			in.Profile.Underwriting = &remit.Underwriting{CardVolumeDistribution: &remit.CardVolumeDistribution{
				CardPresentPercentage: pct(50), EcommercePercentage: pct(30), MailOrderTelephoneOrderPercentage: pct(10)}}
		}), []string{"underwriting.cardVolumeDistribution:sum_not_100"}},
		{"a bank account without a usable number", with(func(in *remit.MerchantAccountInput) {
			in.Profile.SettlementBankAccount = &remit.MaskedBankAccount{Name: "Acme", BankCode: "110000000", AccountType: "checking"}
		}), []string{"settlementBankAccount.accountNumber:invalid_account_number"}},
		{"metadata, by the one rule", with(func(in *remit.MerchantAccountInput) {
			in.Profile.Metadata = map[string]string{strings.Repeat("é", 41): "v"}
		}), []string{"metadata:invalid_key"}},
		{"an empty input (a body that did not decode)", remit.MerchantAccountInput{},
			[]string{"environment:environment_mismatch", "displayName:blank", "legalEntityType:invalid_enum", "country:invalid_format",
				"merchantMode:invalid_enum", "defaultCurrency:invalid_currency"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			remit.CheckMerchantAccount(c.in, remit.Sandbox, today, &p)
			wantProblems(t, &p, c.want...)
		})
	}
}

func TestCountryTable(t *testing.T) {
	if len(remit.Countries) != 249 || !slices.IsSorted(remit.Countries) {
		t.Fatalf("Countries: %d codes, sorted %v; want the 249 assigned codes in order", len(remit.Countries), slices.IsSorted(remit.Countries))
	}
	for _, c := range []struct {
		code string
		ok   bool
	}{{"US", true}, {"GB", true}, {"ZW", true}, {"AX", true}, {"UK", false}, {"XK", false}, {"XB", false}, {"QK", false},
		{"EU", false}, {"AN", false}, {"us", false}, {"USA", false}, {"", false}} {
		if got := remit.ValidCountry(c.code); got != c.ok {
			t.Errorf("ValidCountry(%q) = %v, want %v", c.code, got, c.ok)
		}
	}
}
