package app

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/remit-billing/remit/store"
)

// Webhook signing secrets (Standard Webhooks): "whsec_" + base64 of 32 random bytes, shown once
// when the endpoint is created. The delivery worker must sign with the secret, so it cannot be
// stored as a hash like API keys: it is stored encrypted with AES-256-GCM, bound to its endpoint
// (the merchant account and endpoint ID are the additional data, so a ciphertext copied to another
// row does not open).
//
// The key is derived with HKDF-SHA256 from REMIT_SECRET_KEY when it is set ("env" key), otherwise
// from a random per-store key kept in the settings table ("store" key, created on first use). The
// stored form names the key it was sealed with ("v1.env.<b64>" or "v1.store.<b64>"), so secrets
// sealed before REMIT_SECRET_KEY was set keep working after it is. The store key lives next to the
// ciphertexts: it protects against a leak of the endpoints table alone, not of the whole store;
// production deployments should set REMIT_SECRET_KEY (and keep it: secrets sealed with it cannot be
// opened without it, and their deliveries fail until it is restored).

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

func endpointAAD(merchantAccountID, endpointID string) []byte {
	return []byte(merchantAccountID + "/" + endpointID)
}

// sealSecret encrypts an endpoint's signing secret for storage.
func (a *App) sealSecret(ctx context.Context, merchantAccountID, endpointID, secret string) (string, error) {
	source := "store"
	if a.Config.SecretKey != "" {
		source = "env"
	}
	gcm, err := a.secretCipher(ctx, source)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := gcm.Seal(nonce, nonce, []byte(secret), endpointAAD(merchantAccountID, endpointID))
	return "v1." + source + "." + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// openSecret decrypts a stored signing secret.
func (a *App) openSecret(ctx context.Context, merchantAccountID, endpointID, stored string) (string, error) {
	parts := strings.SplitN(stored, ".", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errors.New("the stored signing secret has an unknown format")
	}
	if parts[1] == "env" && a.Config.SecretKey == "" {
		return "", errors.New("the signing secret was sealed with REMIT_SECRET_KEY, which is not set")
	}
	gcm, err := a.secretCipher(ctx, parts[1])
	if err != nil {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < gcm.NonceSize() {
		return "", errors.New("the stored signing secret is corrupt")
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], endpointAAD(merchantAccountID, endpointID))
	if err != nil {
		return "", errors.New("the signing secret could not be decrypted (was REMIT_SECRET_KEY changed?)")
	}
	return string(plain), nil
}

func (a *App) secretCipher(ctx context.Context, source string) (cipher.AEAD, error) {
	var material []byte
	switch source {
	case "env":
		material = []byte(a.Config.SecretKey)
	case "store":
		k, err := a.storeSecretKey(ctx)
		if err != nil {
			return nil, err
		}
		material = k
	default:
		return nil, fmt.Errorf("unknown secret key %q", source)
	}
	key, err := hkdf.Key(sha256.New, material, nil, "remit webhook endpoint secret v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// storeSecretKey is the per-store random key (settings "webhook_secret_key"), read once. The lock
// is not held across the store call: a caller may be inside a write transaction (SQLite has one
// writer), and concurrent first calls agree on one value anyway.
func (a *App) storeSecretKey(ctx context.Context) ([]byte, error) {
	w := a.webhooks
	w.keyMu.Lock()
	k := w.storeKey
	w.keyMu.Unlock()
	if k != nil {
		return k, nil
	}
	var v string
	err := a.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		v, err = tx.Setting(ctx, "webhook_secret_key", NewSecret)
		return err
	})
	if err != nil {
		return nil, err
	}
	k, err = hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("settings webhook_secret_key: %w", err)
	}
	w.keyMu.Lock()
	w.storeKey = k
	w.keyMu.Unlock()
	return k, nil
}
