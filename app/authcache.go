package app

import (
	"context"
	"sync"

	"github.com/remit-billing/remit"
)

// Who is calling, from memory (docs/performance.md "Who is calling, from memory"). Every request
// reads its API key and merchant account; instead of reading both every time, a process keeps what
// it read, tagged with the store's auth version read just before (store/auth_version.go). The
// version moves, by trigger, in the same transaction as any change to a key or a merchant account,
// made by any process, so a request that finds the current version on its entry uses it, and one
// that does not reads both again. A revoked key is refused by the next request, in this process
// and in every other: the check costs one read of one row instead of the joined read of both.
//
// Only what was found is kept: a missing account may be created without moving the version (an
// insert changes nothing that was kept). The secret is compared on every request, kept or not.

// authCacheSize bounds the entries; past it the cache starts over.
const authCacheSize = 10_000

type authCache struct {
	mu      sync.RWMutex
	entries map[string]authEntry // by key ID and merchant account ID
}

type authEntry struct {
	version int64
	key     remit.APIKey
	account remit.MerchantAccount
}

// keyAndMerchant returns the API key keyID and the merchant account merchantAccountID (nil when it
// does not exist), from memory when nothing about keys or accounts has changed since they were
// read. Errors as store.GetAPIKeyAndMerchant.
func (ac *Access) keyAndMerchant(ctx context.Context, keyID, merchantAccountID string) (remit.APIKey, *remit.MerchantAccount, error) {
	q := ac.DB.Read(ctx)
	version, err := ac.DB.AuthVersion(ctx)
	if err != nil {
		return remit.APIKey{}, nil, err
	}
	id := keyID + "\x00" + merchantAccountID
	if e, ok := ac.known.get(id); ok && e.version == version {
		m := e.account
		return e.key, &m, nil
	}
	k, m, err := q.GetAPIKeyAndMerchant(ctx, keyID, merchantAccountID)
	if err == nil && m != nil {
		ac.known.put(id, authEntry{version: version, key: k, account: *m})
	}
	return k, m, err
}

func (c *authCache) get(id string) (authEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[id]
	return e, ok
}

func (c *authCache) put(id string, e authEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= authCacheSize {
		c.entries = make(map[string]authEntry)
	}
	c.entries[id] = e
}
