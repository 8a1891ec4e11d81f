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

// TestValueRules: the rules the contract names (x-remit-rule) and the small request rules the
// edge runs before the engine, each on its own.
func TestValueRules(t *testing.T) {
	ptr := func(s string) *string { return &s }
	secs := func(n int64) *int64 { return &n }
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	tooFar := now.Add(remit.MaxClockAdvance + time.Second)
	for _, c := range []struct {
		name string
		run  func(p *remit.Problems)
		want []string
	}{
		{"currency supported", func(p *remit.Problems) { remit.ValueRules["currency"](p, "currency", "JPY") }, nil},
		{"currency not on the rails", func(p *remit.Problems) { remit.ValueRules["currency"](p, "currency", "MXN") }, []string{"currency:currency_not_supported"}},
		{"currency not a code", func(p *remit.Problems) { remit.ValueRules["currency"](p, "currency", "usd") }, []string{"currency:invalid_currency"}},
		{"country assigned", func(p *remit.Problems) { remit.ValueRules["country"](p, "country", "AX") }, nil},
		{"country unassigned", func(p *remit.Problems) { remit.ValueRules["country"](p, "country", "XB") }, []string{"country:invalid_country"}},
		{"country malformed", func(p *remit.Problems) { remit.ValueRules["country"](p, "country", "U") }, []string{"country:invalid_format"}},
		{"event type", func(p *remit.Problems) { remit.ValueRules["event_type"](p, "e", "invoice.paid") }, nil},
		{"every event", func(p *remit.Problems) { remit.ValueRules["event_type"](p, "e", "*") }, nil},
		{"unknown event", func(p *remit.Problems) { remit.ValueRules["event_type"](p, "e", "invoice.*") }, []string{"e:unknown_event_type"}},
		{"account number with spaces", func(p *remit.Problems) { remit.ValueRules["account_number"](p, "n", "12 34-56") }, nil},
		{"account number short", func(p *remit.Problems) { remit.ValueRules["account_number"](p, "n", "12-34") }, []string{"n:invalid_account_number"}},
		{"clock by seconds", func(p *remit.Problems) { remit.ClockTarget(now, nil, secs(60), p) }, nil},
		{"clock to a later time", func(p *remit.Problems) { remit.ClockTarget(now, &later, nil, p) }, nil},
		{"clock both", func(p *remit.Problems) { remit.ClockTarget(now, &later, secs(1), p) }, []string{"to:mutually_exclusive", "seconds:mutually_exclusive"}},
		{"clock neither", func(p *remit.Problems) { remit.ClockTarget(now, nil, nil, p) }, []string{"to:required"}},
		{"clock backwards", func(p *remit.Problems) { remit.ClockTarget(now, &earlier, nil, p) }, []string{"to:not_in_future"}},
		{"clock too far", func(p *remit.Problems) { remit.ClockTarget(now, &tooFar, nil, p) }, []string{"to:too_far"}},
		{"clock seconds too many", func(p *remit.Problems) {
			remit.CheckClockAdvance(nil, secs(int64(remit.MaxClockAdvance/time.Second)+1), p)
		}, []string{"seconds:out_of_range"}},
		{"default without account", func(p *remit.Problems) { remit.CheckSetupSession(remit.SetupSessionInput{SetAsDefault: true}, p) }, []string{"setAsDefault:requires_billing_account"}},
		{"default with account", func(p *remit.Problems) {
			remit.CheckSetupSession(remit.SetupSessionInput{SetAsDefault: true, BillingAccountID: ptr("ba")}, p)
		}, nil},
		{"submission", func(p *remit.Problems) {
			remit.CheckOnboardingSubmission(remit.OnboardingSubmission{Environment: ptr("production"), SubmittedByType: ptr("robot"), IPAddress: ptr("300.1.1.1")}, remit.Sandbox, p)
		}, []string{"environment:environment_mismatch", "submittedByType:invalid_enum", "merchantAgreementIpAddress:invalid_ip_address"}},
		{"webhook endpoint", func(p *remit.Problems) {
			remit.CheckWebhookEndpoint(remit.WebhookEndpointInput{URL: "http://h.example.com/#x", EnabledEvents: []string{"*", "nope"}}, remit.Production, p)
		}, []string{"url:https_required", "url:invalid_url", "enabledEvents[1]:unknown_event_type"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p remit.Problems
			c.run(&p)
			var got []string
			for _, f := range p.Fields() {
				got = append(got, f.Field+":"+f.Reason)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("problems %v, want %v", got, c.want)
			}
		})
	}
}

// TestPaymentStateMachine: the moves a payment attempt may make (docs/payments.md).
func TestPaymentStateMachine(t *testing.T) {
	all := remit.PaymentStatuses
	allowed := map[remit.PaymentStatus][]remit.PaymentStatus{
		remit.PaymentProcessing:     {remit.PaymentSucceeded, remit.PaymentFailed, remit.PaymentRequiresAction},
		remit.PaymentRequiresAction: {remit.PaymentProcessing, remit.PaymentSucceeded, remit.PaymentFailed, remit.PaymentCanceled},
	}
	for _, from := range all {
		for _, to := range all {
			want := slices.Contains(allowed[from], to)
			if got := from.CanMove(to); got != want {
				t.Errorf("%s → %s: %v, want %v", from, to, got, want)
			}
		}
		if open := from == remit.PaymentProcessing || from == remit.PaymentRequiresAction; from.Open() != open {
			t.Errorf("%s.Open() = %v", from, from.Open())
		}
	}
}

func TestDocumentNumber(t *testing.T) {
	for _, c := range []struct {
		kind remit.NumberedDocument
		n    int64
		want string
	}{
		{remit.InvoiceNumbers, 1, "INV-000001"}, {remit.ReceiptNumbers, 42, "RCPT-000042"}, {remit.CreditNoteNumbers, 999999, "CN-999999"},
		{remit.InvoiceNumbers, 1234567, "INV-1234567"}, // past six digits the number grows
	} {
		if got := remit.DocumentNumber(c.kind, c.n); got != c.want {
			t.Errorf("DocumentNumber(%s, %d) = %s, want %s", c.kind.Prefix, c.n, got, c.want)
		}
	}
}
