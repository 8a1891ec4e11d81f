package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// API keys look like "rk_<id>.<secret>": the ID part finds the stored key, and the secret is
// compared with the stored SHA-256 hash in constant time. Only the hash is stored.

// NewSecret returns 32 random bytes, hex encoded.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// HashSecret is the stored form of a secret (API key or hosted token).
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretsEqual compares a presented secret with a stored hash in constant time.
func SecretsEqual(secret, storedHash string) bool {
	h := HashSecret(secret)
	return subtle.ConstantTimeCompare([]byte(h), []byte(storedHash)) == 1
}

func formatAPIKey(keyID, secret string) string {
	return "rk_" + strings.TrimPrefix(keyID, "key_") + "." + secret
}

func parseAPIKey(s string) (keyID, secret string, ok bool) {
	rest, found := strings.CutPrefix(s, "rk_")
	if !found {
		return "", "", false
	}
	id, secret, found := strings.Cut(rest, ".")
	if !found || id == "" || len(secret) != 64 {
		return "", "", false
	}
	return "key_" + id, secret, true
}

var errUnauthorized = remit.Errorf(remit.EUnauthorized, "The API key is missing, malformed, unknown or revoked. Send 'Authorization: Bearer <API key>'.")

// Authenticate resolves a bearer API key. Any failure is unauthorized, with no hint of which part
// was wrong.
//
// Errors: unauthorized.
func (ac *Access) Authenticate(ctx context.Context, apiKey string) (remit.Principal, error) {
	keyID, secret, ok := parseAPIKey(apiKey)
	if !ok {
		return remit.Principal{}, errUnauthorized
	}
	k, err := ac.DB.Read(ctx).GetAPIKey(ctx, keyID)
	if remit.ErrorCode(err) == remit.ENotFound {
		return remit.Principal{}, errUnauthorized
	}
	if err != nil {
		return remit.Principal{}, err
	}
	if !SecretsEqual(secret, k.SecretHash) || k.RevokedAt != nil {
		return remit.Principal{}, errUnauthorized
	}
	return remit.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID, Environments: k.Environments}, nil
}

// AuthenticateScoped is Authenticate for a request that names merchantAccountID: the key and the
// merchant account are read together (one statement, or from memory: authcache.go), and the
// account comes back for ResolveScopeWith, which then needs no read of its own. m is nil when the account does not exist
// (ResolveScopeWith answers forbidden then). The answer is the same as Authenticate's.
//
// Errors: unauthorized.
func (ac *Access) AuthenticateScoped(ctx context.Context, apiKey, merchantAccountID string) (p remit.Principal, m *remit.MerchantAccount, err error) {
	keyID, secret, ok := parseAPIKey(apiKey)
	if !ok {
		return remit.Principal{}, nil, errUnauthorized
	}
	k, m, err := ac.keyAndMerchant(ctx, keyID, merchantAccountID)
	if remit.ErrorCode(err) == remit.ENotFound {
		return remit.Principal{}, nil, errUnauthorized
	}
	if err != nil {
		return remit.Principal{}, nil, err
	}
	if !SecretsEqual(secret, k.SecretHash) || k.RevokedAt != nil {
		return remit.Principal{}, nil, errUnauthorized
	}
	return remit.Principal{APIKeyID: k.ID, OrganizationID: k.OrganizationID, Environments: k.Environments}, m, nil
}

// ResolveScopeWith is ResolveScope with the merchant account already read (AuthenticateScoped):
// m is the account named merchantAccountID, or nil when it does not exist.
//
// Errors: forbidden.
func (ac *Access) ResolveScopeWith(p remit.Principal, env remit.Environment, merchantAccountID string, m *remit.MerchantAccount) (remit.Scope, remit.MerchantAccount, error) {
	if !p.Allows(env) {
		return remit.Scope{}, remit.MerchantAccount{}, remit.Errorf(remit.EForbidden, "This API key is not allowed in the %s environment.", env)
	}
	if m == nil || m.ID != merchantAccountID || m.OrganizationID != p.OrganizationID || m.Environment != env {
		return remit.Scope{}, remit.MerchantAccount{}, remit.Errorf(remit.EForbidden, "This API key cannot act for merchant account '%s' in the %s environment.", merchantAccountID, env)
	}
	return remit.Scope{OrganizationID: p.OrganizationID, Environment: env, MerchantAccountID: m.ID}, *m, nil
}

// ResolveScope checks that the principal may act in env for merchantAccountID: the key must be
// allowed in the environment, and the account must belong to the key's organization and live in
// that environment. Whether or not the account exists, a failure is forbidden, so that nothing is
// learned about other organizations' accounts.
//
// Errors: forbidden.
func (ac *Access) ResolveScope(ctx context.Context, p remit.Principal, env remit.Environment, merchantAccountID string) (remit.Scope, remit.MerchantAccount, error) {
	if !p.Allows(env) {
		return remit.Scope{}, remit.MerchantAccount{}, remit.Errorf(remit.EForbidden, "This API key is not allowed in the %s environment.", env)
	}
	m, err := ac.DB.Read(ctx).GetMerchantAccount(ctx, merchantAccountID, store.Unlocked)
	if remit.ErrorCode(err) == remit.ENotFound || (err == nil && (m.OrganizationID != p.OrganizationID || m.Environment != env)) {
		return remit.Scope{}, remit.MerchantAccount{}, remit.Errorf(remit.EForbidden, "This API key cannot act for merchant account '%s' in the %s environment.", merchantAccountID, env)
	}
	if err != nil {
		return remit.Scope{}, remit.MerchantAccount{}, err
	}
	return remit.Scope{OrganizationID: p.OrganizationID, Environment: env, MerchantAccountID: m.ID}, m, nil
}

// CreateAPIKey issues a key for an organization in the given environments and returns the key's
// ID and the full key, which is shown once and never stored.
//
// Errors: not_found (organization), validation_failure (environments).
func (ac *Access) CreateAPIKey(ctx context.Context, organizationID string, envs []remit.Environment) (keyID, apiKey string, err error) {
	if len(envs) == 0 {
		return "", "", remit.Invalid(remit.FieldError{Field: "environments", Location: remit.InBody, Reason: "required", Message: "At least one environment is required."})
	}
	for _, e := range envs {
		if !e.Valid() {
			return "", "", remit.Invalid(remit.FieldError{Field: "environments", Location: remit.InBody, Reason: "invalid_enum", Message: "Environments are sandbox and production."})
		}
	}
	err = ac.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var exists int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM organizations WHERE id = $1`, organizationID).Scan(&exists); err != nil {
			return remit.NotFound("organization", organizationID, "")
		}
		keyID = remit.NewID("key")
		secret := NewSecret()
		apiKey = formatAPIKey(keyID, secret)
		return tx.CreateAPIKey(ctx, remit.APIKey{ID: keyID, OrganizationID: organizationID, SecretHash: HashSecret(secret), Environments: envs, CreatedAt: ac.Clock.Now()})
	})
	return keyID, apiKey, err
}

// RevokeAPIKey revokes a key; requests with it are unauthorized from then on.
//
// Errors: not_found.
func (ac *Access) RevokeAPIKey(ctx context.Context, keyID string) error {
	return ac.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return tx.RevokeAPIKey(ctx, keyID, ac.Clock.Now())
	})
}
