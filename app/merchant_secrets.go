package app

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// Merchant secrets (the full settlement account number and tax IDs) are stored sealed with
// AES-256-GCM under a per-store key kept in the settings table, so that a copy of the
// merchant_accounts table (a dump, a log of a query, a backup of one table) does not reveal them. The
// key lives in the same store: this does not protect against someone holding the whole store.
//
// The key is created inside the transaction that first uses it and cached only once that
// transaction committed, so data is never sealed under a key that was rolled back.

const sealedPrefix = "v1:"

var (
	secretsKeyMu sync.Mutex
	secretsKeys  = map[*store.DB][]byte{}
)

func (ms *Merchants) merchantSecretsKey(ctx context.Context, tx *store.Tx) ([]byte, error) {
	secretsKeyMu.Lock()
	k, ok := secretsKeys[ms.DB]
	secretsKeyMu.Unlock()
	if ok {
		return k, nil
	}
	v, err := tx.Setting(ctx, "merchant_secrets_key", NewSecret)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) != 32 {
		return nil, remit.Internal(errors.New("merchant_secrets_key setting is malformed"))
	}
	tx.AfterCommit(func() {
		secretsKeyMu.Lock()
		secretsKeys[ms.DB] = key
		secretsKeyMu.Unlock()
	})
	return key, nil
}

func (ms *Merchants) sealMerchantSecrets(ctx context.Context, tx *store.Tx, s remit.MerchantSecrets) (string, error) {
	if s.BankAccountNumber == "" && s.BusinessTaxID == "" && s.TaxID == "" && len(s.IdentityTaxIDs) == 0 {
		return "", nil
	}
	key, err := ms.merchantSecretsKey(ctx, tx)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return "", remit.Internal(err)
	}
	gcm, err := newGCM(key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", remit.Internal(err)
	}
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(gcm.Seal(nonce, nonce, plain, nil)), nil
}

func (ms *Merchants) openMerchantSecrets(ctx context.Context, tx *store.Tx, sealed string) (remit.MerchantSecrets, error) {
	var s remit.MerchantSecrets
	if sealed == "" {
		return s, nil
	}
	raw, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return s, remit.Internal(errors.New("merchant secrets: unknown format"))
	}
	key, err := ms.merchantSecretsKey(ctx, tx)
	if err != nil {
		return s, err
	}
	box, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil {
		return s, remit.Internal(errors.New("merchant secrets: malformed"))
	}
	gcm, err := newGCM(key)
	if err != nil {
		return s, err
	}
	if len(box) < gcm.NonceSize() {
		return s, remit.Internal(errors.New("merchant secrets: malformed"))
	}
	plain, err := gcm.Open(nil, box[:gcm.NonceSize()], box[gcm.NonceSize():], nil)
	if err != nil {
		return s, remit.Internal(errors.New("merchant secrets: cannot be opened with this store's key"))
	}
	if err := json.Unmarshal(plain, &s); err != nil {
		return s, remit.Internal(errors.New("merchant secrets: malformed"))
	}
	return s, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, remit.Internal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, remit.Internal(err)
	}
	return gcm, nil
}
