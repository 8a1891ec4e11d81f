package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Hosted tokens are the credential of the customer-portal routes (/customer-portal/...?token=).
// A token is "hpt_" and 64 hex characters; only its SHA-256 is stored (hosted_tokens), with the
// kind and ID of the one resource it may act on, the merchant account that resource belongs to and
// an expiry on that account's clock. Setup sessions and invoices share them: IssueHostedToken when
// the resource is created, ResolveHostedToken in the portal, then HostedToken.Authorize (403 for
// another resource).

const hostedTokenPrefix = "hpt_"

// IssueHostedToken creates a token for the resource (kind remit.HostedSetupSession or
// remit.HostedInvoice) in tx and returns it. The token is shown once: the store keeps its hash only.
// expiresAt is on the merchant clock; after it the token is unauthorized.
func (ac *Access) IssueHostedToken(ctx context.Context, tx *store.Tx, merchantAccountID, kind, resourceID string, expiresAt time.Time) (string, error) {
	if kind != remit.HostedSetupSession && kind != remit.HostedInvoice && kind != remit.HostedPayment {
		return "", remit.Internal(fmt.Errorf("app.IssueHostedToken: unknown kind %q", kind))
	}
	token := hostedTokenPrefix + NewSecret()
	err := tx.CreateHostedToken(ctx, remit.HostedToken{
		TokenHash: HashSecret(token), Kind: kind, ResourceID: resourceID, MerchantAccountID: merchantAccountID,
		ExpiresAt: micro(expiresAt), CreatedAt: micro(ac.Clock.Now()),
	})
	return token, err
}

var errHostedToken = remit.Errorf(remit.EUnauthorized, "The token is missing, malformed, unknown or expired. Use the token of the hosted page's URL.")

// ResolveHostedToken finds the token's record and the merchant account it acts for. The portal has
// no API key and no scope: the merchant account comes from the token.
//
// Errors: unauthorized (missing, malformed, unknown or expired, with no hint of which).
func (ac *Access) ResolveHostedToken(ctx context.Context, token string) (remit.HostedToken, remit.MerchantAccount, error) {
	secret, ok := strings.CutPrefix(token, hostedTokenPrefix)
	if !ok || len(secret) != 64 {
		return remit.HostedToken{}, remit.MerchantAccount{}, errHostedToken
	}
	q := ac.DB.Read(ctx)
	t, err := q.GetHostedToken(ctx, HashSecret(token))
	if remit.ErrorCode(err) == remit.ENotFound {
		return t, remit.MerchantAccount{}, errHostedToken
	}
	if err != nil {
		return t, remit.MerchantAccount{}, err
	}
	m, err := q.GetMerchantAccount(ctx, t.MerchantAccountID, store.Unlocked)
	if err != nil {
		return t, m, err
	}
	if !ac.Now(m).Before(t.ExpiresAt) {
		return t, m, errHostedToken
	}
	return t, m, nil
}

// AuthorizeHostedToken checks that the token was issued for the resource the request acts on.
//
// Errors: forbidden (a token of another resource).
func AuthorizeHostedToken(t remit.HostedToken, kind, resourceID string) error {
	return t.Authorize(kind, resourceID)
}
