// Package remit holds Remit's domain vocabulary: the types, errors, identifiers, money and time
// rules that every other package shares. It does no I/O.
//
// Data flows one way: the HTTP edge (package httpapi) decodes a request and calls a service in
// package app; app applies the rules written here and persists through package store. Nothing in
// store knows HTTP, and nothing here knows either.
package remit

// Environment is where a merchant account lives and an API key may act.
type Environment string

const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// Valid reports whether e is one of the two environments.
func (e Environment) Valid() bool { return e == Sandbox || e == Production }

// Principal is an authenticated API key.
type Principal struct {
	APIKeyID       string
	OrganizationID string
	Environments   []Environment
}

// Allows reports whether the key may act in env.
func (p Principal) Allows(env Environment) bool {
	for _, e := range p.Environments {
		if e == env {
			return true
		}
	}
	return false
}

// Scope is what every /v1 request acts within: an organization, an environment and one of its
// merchant accounts. Every billing resource belongs to exactly one merchant account.
type Scope struct {
	OrganizationID    string
	Environment       Environment
	MerchantAccountID string
}
