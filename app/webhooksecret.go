package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit/store"
)

// Webhook signing secrets (Standard Webhooks): "whsec_" + base64 of 32 random bytes, shown once
// when the endpoint is created. The delivery worker must sign with the secret, so it cannot be
// stored as a hash like API keys: it is stored encrypted with AES-256-GCM, bound to its endpoint
// (the merchant account and endpoint ID are the additional data, so a ciphertext copied to another
// row does not open).
//
// The key machinery (REMIT_SECRET_KEY or a per-store key) is shared with the other sealed values:
// app/sealing.go.

const webhookSecretPrefix = "whsec_"

// newWebhookSecret returns a new signing secret.
func newWebhookSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return webhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// webhookSecretBytes is the HMAC key of a secret: the base64-decoded part after whsec_.
func webhookSecretBytes(secret string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, webhookSecretPrefix))
}

// SignWebhook returns the Standard Webhooks signature header value for a message:
// "v1," + base64(HMAC-SHA256(secret bytes, id.timestamp.body)).
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := webhookSecretBytes(secret)
	if err != nil {
		return "", fmt.Errorf("malformed webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// signatureHeader is the webhook-signature header of a message signed with each secret, in
// order: Standard Webhooks' space-separated list ("v1,<sig> v1,<sig>"), which a receiver checks
// against the secret it holds.
func signatureHeader(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		var err error
		if sigs[i], err = SignWebhook(secret, id, timestamp, body); err != nil {
			return "", err
		}
	}
	return strings.Join(sigs, " "), nil
}

// signingSecrets are the secrets a claimed delivery is signed with, attempted at real time at:
// the endpoint's secret, and the one its last rotation replaced while that still signs on the
// merchant clock (remit.WebhookEndpoint.PreviousSecretSigns).
func (wh *Webhooks) signingSecrets(ctx context.Context, d store.DueDelivery, at time.Time) ([]string, error) {
	secret, err := wh.openSecret(ctx, d.MerchantAccountID, d.EndpointID, d.EndpointSecret)
	if err != nil {
		return nil, err
	}
	secrets := []string{secret}
	if d.EndpointPreviousSecret == "" || d.Endpoint.PreviousSecretExpiresAt == nil {
		return secrets, nil
	}
	m, err := wh.DB.Read(ctx).GetMerchantAccount(ctx, d.MerchantAccountID, store.Unlocked)
	if err != nil {
		return nil, errors.New("the merchant account could not be read")
	}
	if !d.Endpoint.PreviousSecretSigns(at.Add(m.ClockOffset)) {
		return secrets, nil
	}
	previous, err := wh.openSecret(ctx, d.MerchantAccountID, d.EndpointID, d.EndpointPreviousSecret)
	if err != nil {
		return nil, err
	}
	return append(secrets, previous), nil
}

func endpointAAD(merchantAccountID, endpointID string) []byte {
	return []byte(merchantAccountID + "/" + endpointID)
}

// sealSecret encrypts an endpoint's signing secret for storage (app/sealing.go).
func (wh *Webhooks) sealSecret(ctx context.Context, merchantAccountID, endpointID, secret string) (string, error) {
	return wh.seal(ctx, purposeWebhookSecret, endpointAAD(merchantAccountID, endpointID), []byte(secret))
}

// openSecret decrypts a stored signing secret.
func (wh *Webhooks) openSecret(ctx context.Context, merchantAccountID, endpointID, stored string) (string, error) {
	plain, err := wh.open(ctx, purposeWebhookSecret, endpointAAD(merchantAccountID, endpointID), stored)
	if err != nil {
		return "", errors.New(strings.Replace(err.Error(), "value", "signing secret", 1))
	}
	return string(plain), nil
}
