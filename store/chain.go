package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/remit-billing/remit"
)

// The event chain (docs/verification.md): every event of a merchant account has its place in the
// account's chain, a sequence 1, 2, 3, ... and a hash over its predecessor's hash and its own
// canonical form (remit.ChainHash).
//
// Where the link is made differs by store, for throughput:
//   - SQLite: at commit, inside the transaction (writeEvents). The one writer orders transactions
//     anyway, and a transaction of a group commit continues from the link the one before it wrote.
//   - PostgreSQL: just after commit (DB.chainAfterCommit), before Tx returns. The transaction
//     inserts its events unchained; then, under the account's chain lock (an advisory lock), one
//     short transaction chains every unchained event of the account, its own and those of
//     concurrent requests. Within a process the passes are coalesced like a group commit
//     (chainGroups): one pass per account runs at a time, and every request that committed while
//     it ran is served by the next one. Holding the chain lock through each request's own commit
//     instead made one account's writes commit one at a time (half the throughput of a
//     single-account grant load), and so did a chaining transaction per request. Unchained events
//     are not listed (GET /v1/events), not dispatched to webhooks, and not part of a
//     verification; if the step after commit fails, the webhook worker chains what is left
//     (DB.ChainLeftovers).

// writeEvents inserts the transaction's events: chained on SQLite, unchained on PostgreSQL (chained
// after the commit). Accounts are taken in ID order.
func (tx *Tx) writeEvents(ctx context.Context) error {
	pending := tx.events
	tx.events = nil
	accounts := make([]string, 0, 1)
	for _, e := range pending {
		if !slices.Contains(accounts, e.MerchantAccountID) {
			accounts = append(accounts, e.MerchantAccountID)
		}
	}
	slices.Sort(accounts)
	if tx.d == Postgres {
		tx.unchained = accounts
		for _, e := range pending {
			if err := tx.insertEvent(ctx, e, nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if tx.heads == nil {
		tx.heads = map[string]chainLink{}
	}
	for _, account := range accounts {
		seq, prev, err := tx.chainHead(ctx, account)
		if err != nil {
			return err
		}
		for _, e := range pending {
			if e.MerchantAccountID != account {
				continue
			}
			seq++
			e.Sequence = seq
			if e.Hash, err = remit.ChainHash(prev, e.Event); err != nil {
				return err
			}
			if err := tx.insertEvent(ctx, e, e.Sequence, e.Hash); err != nil {
				return err
			}
			prev = e.Hash
		}
		tx.heads[account] = chainLink{seq, prev}
	}
	return nil
}

func (tx *Tx) insertEvent(ctx context.Context, e pendingEvent, seq, hash any) error {
	_, err := tx.exec(ctx, `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at, sequence, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.ID, e.MerchantAccountID, string(e.Environment), e.Type, e.objectID, string(e.Data), remit.Micros(e.CreatedAt), seq, hash)
	return wrapErr(err, "store.AppendEvent")
}

// chainLink is the last link of a merchant account's chain: its sequence and hash.
type chainLink struct {
	seq  int64
	hash string
}

// chainHead returns the merchant account's last sequence and hash (0 and "" for an empty chain).
// A transaction that follows another in the same SQLite group commit takes the link that one
// wrote (Tx.batchHeads) instead of reading it: the batch is one write transaction, so nothing else
// can have written in between.
func (tx *Tx) chainHead(ctx context.Context, account string) (int64, string, error) {
	if l, ok := tx.batchHeads[account]; ok {
		return l.seq, l.hash, nil
	}
	return lastLink(ctx, tx.Q, account)
}

// lastLink is the last sequence and hash of a merchant account's chain (0 and "" when empty).
func lastLink(ctx context.Context, q Q, account string) (seq int64, hash string, err error) {
	err = q.QueryRow(ctx, `SELECT sequence, hash FROM events WHERE merchant_account_id = $1 AND sequence IS NOT NULL
		ORDER BY sequence DESC LIMIT 1`, account).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	return seq, hash, wrapErr(err, "store.lastLink")
}

// chainAfterCommit chains the events a PostgreSQL transaction committed unchained, account by
// account. The transaction has committed: a failure here is logged, not returned (the caller must
// not think its change undone), and the webhook worker chains what is left.
func (db *DB) chainAfterCommit(ctx context.Context, accounts []string) {
	ctx = context.WithoutCancel(ctx)
	for _, account := range accounts {
		err := db.chains.wait(account, func() error { return db.ChainPending(ctx, account, true) })
		if err != nil {
			slog.Default().Warn("events committed, chaining them failed; the webhook worker chains them", "merchantAccountId", account, "err", err.Error())
		}
	}
}

// chainGroups coalesces one process's chaining passes per merchant account: wait returns once a
// pass that started after the call has ended, and at most one pass per account runs at a time,
// so the requests that commit while one runs share the next.
type chainGroups struct {
	mu      sync.Mutex
	waiting map[string][]chan error // by account; present while the account's pass loop runs
}

// wait asks for a pass over the account and waits for its outcome.
func (c *chainGroups) wait(account string, pass func() error) error {
	done := make(chan error, 1)
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[string][]chan error{}
	}
	q, running := c.waiting[account]
	c.waiting[account] = append(q, done)
	c.mu.Unlock()
	if !running {
		go c.loop(account, pass)
	}
	return <-done
}

// loop runs passes over the account while requests wait for one, then ends.
func (c *chainGroups) loop(account string, pass func() error) {
	for {
		c.mu.Lock()
		batch := c.waiting[account]
		if len(batch) == 0 {
			delete(c.waiting, account)
			c.mu.Unlock()
			return
		}
		c.waiting[account] = batch[:0:0]
		c.mu.Unlock()
		err := pass()
		for _, done := range batch {
			done <- err
		}
	}
}

// ChainPending gives the merchant account's unchained events their place in its chain, in the
// order they were written (created_at, then ID), in one transaction that holds the account's chain.
// With wait false it does nothing when another transaction holds the chain (it is chaining them).
func (db *DB) ChainPending(ctx context.Context, account string, wait bool) error {
	return db.Tx(withoutTx(ctx), func(ctx context.Context, tx *Tx) error {
		if tx.d == Postgres {
			var locked bool
			lock := `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`
			if wait {
				lock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0)) IS NOT NULL`
			}
			if err := tx.QueryRow(ctx, lock, "event_chain|"+account).Scan(&locked); err != nil || !locked {
				return wrapErr(err, "store.ChainPending: lock chain")
			}
		}
		seq, prev, err := tx.chainHead(ctx, account)
		if err != nil {
			return err
		}
		if seq, prev, err = chainUnchained(ctx, tx.Q, account, seq, prev); err != nil {
			return err
		}
		if tx.heads == nil {
			tx.heads = map[string]chainLink{}
		}
		tx.heads[account] = chainLink{seq, prev}
		return nil
	})
}

// ChainLeftovers chains the unchained events of every merchant account that has some and whose
// chain no other transaction holds: what a failed step after commit left (the webhook worker calls
// it before it dispatches).
func (db *DB) ChainLeftovers(ctx context.Context) error {
	accounts, err := queryAll(ctx, db.Read(withoutTx(ctx)), "store.ChainLeftovers", func(r interface{ Scan(...any) error }) (a string, err error) {
		return a, r.Scan(&a)
	}, nil, `SELECT DISTINCT merchant_account_id FROM events WHERE sequence IS NULL LIMIT 100`)
	if err != nil {
		return err
	}
	for _, account := range accounts {
		if err := db.ChainPending(ctx, account, false); err != nil {
			return err
		}
	}
	return nil
}

const chainPage = 1000

// chainUnchained numbers and hashes the account's unchained events after the link (seq, prev), in
// pages of chainPage, and returns the new last link. The caller holds the account's chain. It ends
// after a short page: events committed meanwhile are chained by whoever committed them.
func chainUnchained(ctx context.Context, q Q, account string, seq int64, prev string) (int64, string, error) {
	afterCreated, afterID := int64(-1<<63), ""
	for {
		page, err := unchainedPage(ctx, q, account, afterCreated, afterID)
		if err != nil || len(page) == 0 {
			return seq, prev, err
		}
		args := make([]any, 0, 3*len(page))
		for _, e := range page {
			seq++
			e.Sequence = seq
			if e.Hash, err = remit.ChainHash(prev, e); err != nil {
				return seq, prev, err
			}
			args = append(args, e.ID, e.Sequence, e.Hash)
			prev = e.Hash
		}
		if _, err := q.exec(ctx, setLinks(len(page)), args...); err != nil {
			return seq, prev, wrapErr(err, "store.chainUnchained")
		}
		if len(page) < chainPage {
			return seq, prev, nil
		}
		last := page[len(page)-1]
		afterCreated, afterID = remit.Micros(last.CreatedAt), last.ID
	}
}

// setLinks is one UPDATE that sets the sequence and hash of n events (arguments: ID, sequence,
// hash for each): one round trip per page instead of one per event.
func setLinks(n int) string {
	var b strings.Builder
	b.WriteString(`WITH v(id, seq, hash) AS (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		j := 3*i + 1
		b.WriteString("(CAST($" + itoa(j) + " AS TEXT), CAST($" + itoa(j+1) + " AS BIGINT), CAST($" + itoa(j+2) + " AS TEXT))")
	}
	b.WriteString(`) UPDATE events SET sequence = v.seq, hash = v.hash FROM v WHERE events.id = v.id`)
	return b.String()
}

func unchainedPage(ctx context.Context, q Q, account string, afterCreated int64, afterID string) ([]remit.Event, error) {
	return queryAll(ctx, q, "store.chainUnchained", func(r interface{ Scan(...any) error }) (e remit.Event, err error) {
		var env, data string
		var created int64
		if err := r.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created); err != nil {
			return e, err
		}
		e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
		return e, nil
	}, nil, `SELECT id, merchant_account_id, environment, type, data, created_at FROM events
		WHERE merchant_account_id = $1 AND sequence IS NULL AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT `+itoa(chainPage), account, afterCreated, afterID)
}
