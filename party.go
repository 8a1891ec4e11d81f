package remit

import "strings"

// The parties of a document (docs/documents.md "Parties"): whom an invoice is from and for. A
// finalized invoice keeps them as they were when it was finalized, so that an update of the
// customer or of the merchant account (PATCH) never changes a document already issued; a draft
// shows them as they are.

// CustomerParty is the customer a document is for: its name, e-mail, address and language.
type CustomerParty struct {
	Name            string   `json:"name"`
	Email           *string  `json:"email"`
	Address         *Address `json:"address"`
	PreferredLocale string   `json:"preferredLocale"`
}

// Party is the customer as a document names it now.
func (c Customer) Party() CustomerParty {
	return CustomerParty{Name: c.Name, Email: c.Email, Address: c.Address, PreferredLocale: c.PreferredLocale}
}

// MerchantParty is the seller a document is from: its display name and country, its business
// address, and the contacts a document gives (the support e-mail, else the profile's e-mail; the
// phone; the website).
type MerchantParty struct {
	DisplayName     string         `json:"displayName"`
	Country         string         `json:"country"`
	BusinessAddress *PostalAddress `json:"businessAddress"`
	Contacts        []string       `json:"contacts"`
}

// MerchantPartyOf is the merchant account m, of profile prof, as a document names it now.
func MerchantPartyOf(m MerchantAccount, prof MerchantProfile) MerchantParty {
	p := MerchantParty{DisplayName: m.DisplayName, Country: m.Country, BusinessAddress: prof.BusinessAddress, Contacts: []string{}}
	for _, s := range []*string{firstSet(prof.SupportEmail, prof.Email), firstSet(prof.BusinessPhone, prof.Phone), prof.URL} {
		if s != nil {
			p.Contacts = append(p.Contacts, strings.TrimSpace(*s))
		}
	}
	return p
}

// firstSet is the first of ss that holds more than white space, or nil.
func firstSet(ss ...*string) *string {
	for _, s := range ss {
		if s != nil && strings.TrimSpace(*s) != "" {
			return s
		}
	}
	return nil
}
