package app

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/remit-billing/remit/store"
)

// Sealing: secrets that Remit must be able to read back (webhook signing secrets; remembered
// Idempotency-Key answers, which may carry a shown-once secret such as a signing secret, a
// setup-session token or a claim URL) are stored encrypted with AES-256-GCM, bound to their row by
// additional data, so a ciphertext copied to another row does not open.
//
// The key of each purpose is derived with HKDF-SHA256 from REMIT_SECRET_KEY when it is set ("env"
// key), otherwise from a random per-store key kept in the settings table ("store" key, created on
// first use; the setting keeps its first name, webhook_secret_key). The stored form names the key
// it was sealed with ("v1.env.<b64>" or "v1.store.<b64>"), so values sealed before
// REMIT_SECRET_KEY was set keep opening after it is. The store key lives next to the ciphertexts:
// it protects against a leak of one table, not of the whole store; production deployments should
// set REMIT_SECRET_KEY (and keep it: values sealed with it cannot be opened without it).

// Sealing purposes (the HKDF info of each key).
const (
	purposeWebhookSecret = "remit webhook endpoint secret v1"
	purposeIdempotency   = "remit idempotent response v1"
)

const sealedFormat = "v1"

type sealer struct {
	mu       sync.Mutex
	storeKey []byte
	aeads    map[string]cipher.AEAD // by source + "|" + purpose
}

// seal encrypts plain for storage under the key of purpose, bound to aad.
func (co *core) seal(ctx context.Context, purpose string, aad, plain []byte) (string, error) {
	source := "store"
	if co.Config.SecretKey != "" {
		source = "env"
	}
	gcm, err := co.sealCipher(ctx, source, purpose)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := gcm.Seal(nonce, nonce, plain, aad)
	return sealedFormat + "." + source + "." + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// isSealed reports whether stored has the form seal produces.
func isSealed(stored string) bool {
	return strings.HasPrefix(stored, sealedFormat+".env.") || strings.HasPrefix(stored, sealedFormat+".store.")
}

// open decrypts a value sealed for purpose and aad.
func (co *core) open(ctx context.Context, purpose string, aad []byte, stored string) ([]byte, error) {
	parts := strings.SplitN(stored, ".", 3)
	if len(parts) != 3 || parts[0] != sealedFormat {
		return nil, errors.New("the stored value has an unknown format")
	}
	if parts[1] == "env" && co.Config.SecretKey == "" {
		return nil, errors.New("the value was sealed with REMIT_SECRET_KEY, which is not set")
	}
	gcm, err := co.sealCipher(ctx, parts[1], purpose)
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < gcm.NonceSize() {
		return nil, errors.New("the stored value is corrupt")
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], aad)
	if err != nil {
		return nil, errors.New("the stored value could not be decrypted (was REMIT_SECRET_KEY changed?)")
	}
	return plain, nil
}

func (co *core) sealCipher(ctx context.Context, source, purpose string) (cipher.AEAD, error) {
	s := co.sealer
	s.mu.Lock()
	gcm := s.aeads[source+"|"+purpose]
	s.mu.Unlock()
	if gcm != nil {
		return gcm, nil
	}
	var material []byte
	cache := true
	switch source {
	case "env":
		material = []byte(co.Config.SecretKey)
	case "store":
		k, committed, err := co.storeSealKey(ctx)
		if err != nil {
			return nil, err
		}
		material, cache = k, committed
	default:
		return nil, fmt.Errorf("unknown secret key %q", source)
	}
	key, err := hkdf.Key(sha256.New, material, nil, purpose, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if gcm, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	if cache {
		s.mu.Lock()
		if s.aeads == nil {
			s.aeads = map[string]cipher.AEAD{}
		}
		s.aeads[source+"|"+purpose] = gcm
		s.mu.Unlock()
	}
	return gcm, nil
}

// storeSealKey is the per-store random key (settings "webhook_secret_key"). It is cached only once
// the transaction that read or created it committed (committed reports whether it already is):
// inside a caller's transaction that later rolls back, a key created there would vanish, and
// values sealed with a cached copy could never be opened again. The lock is not held across the
// store call: a caller may be inside a write transaction (SQLite has one writer), and concurrent
// first calls agree on one value anyway.
func (co *core) storeSealKey(ctx context.Context) (key []byte, committed bool, err error) {
	s := co.sealer
	s.mu.Lock()
	k := s.storeKey
	s.mu.Unlock()
	if k != nil {
		return k, true, nil
	}
	err = co.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		v, err := tx.Setting(ctx, "webhook_secret_key", NewSecret)
		if err != nil {
			return err
		}
		if k, err = hex.DecodeString(v); err != nil {
			return fmt.Errorf("settings webhook_secret_key: %w", err)
		}
		key := k
		tx.AfterCommit(func() {
			s.mu.Lock()
			s.storeKey = key
			s.mu.Unlock()
		})
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	// When the transaction was the caller's, it has not committed yet and the key is not cached.
	s.mu.Lock()
	committed = s.storeKey != nil
	s.mu.Unlock()
	return k, committed, nil
}
