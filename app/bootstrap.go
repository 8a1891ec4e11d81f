package app

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// BootstrapResult is what `remit bootstrap` prints.
type BootstrapResult struct {
	OrganizationID   string            `json:"organizationId"`
	APIKeyID         string            `json:"apiKeyId"`
	APIKey           string            `json:"apiKey"`
	MerchantAccounts map[string]string `json:"merchantAccounts"`
}

// Bootstrap creates an organization with one approved merchant account in each environment and
// one API key for both. With platform, the sandbox account gets the platform capability.
func (ms *Merchants) Bootstrap(ctx context.Context, name string, platform bool) (BootstrapResult, error) {
	if name == "" {
		return BootstrapResult{}, remit.Invalid(remit.FieldError{Field: "organization", Location: remit.InBody, Reason: "required", Message: "An organization name is required."})
	}
	res := BootstrapResult{MerchantAccounts: map[string]string{}}
	err := ms.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := ms.Clock.Now()
		org := remit.Organization{ID: remit.NewID("org"), Name: name, CreatedAt: now}
		if err := tx.CreateOrganization(ctx, org); err != nil {
			return err
		}
		res.OrganizationID = org.ID
		for _, env := range []remit.Environment{remit.Sandbox, remit.Production} {
			m := remit.MerchantAccount{
				ID: remit.NewID("ma"), OrganizationID: org.ID, Environment: env, ExternalRef: "bootstrap-" + string(env),
				DisplayName: name, LegalEntityType: "corporation", Country: "US", MerchantMode: "direct",
				DefaultCurrency: "USD", Status: remit.MerchantApproved, PlatformEnabled: platform && env == remit.Sandbox,
				CreatedAt: now, UpdatedAt: now,
			}
			if err := duplicateAs(tx.CreateMerchantAccount(ctx, m), "merchant account", "externalMerchantRef", m.ExternalRef); err != nil {
				return err
			}
			res.MerchantAccounts[string(env)] = m.ID
		}
		var err error
		res.APIKeyID, res.APIKey, err = ms.access.CreateAPIKey(ctx, org.ID, []remit.Environment{remit.Sandbox, remit.Production})
		return err
	})
	return res, err
}
