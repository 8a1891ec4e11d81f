package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"

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
//     concurrent requests. Holding the chain lock through each request's commit instead made one
//     account's writes wait on one another's commits: half the throughput of a single-account grant
//     load. Unchained events are not listed (GET /v1/events), not dispatched to webhooks, and not
//     part of a verification; if the step after commit fails, the webhook worker chains what is
//     left (DB.ChainLeftovers).

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
		if err := db.ChainPending(ctx, account, true); err != nil {
			slog.Default().Warn("events committed, chaining them failed; the webhook worker chains them", "merchantAccountId", account, "err", err.Error())
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
		for _, e := range page {
			seq++
			e.Sequence = seq
			if e.Hash, err = remit.ChainHash(prev, e); err != nil {
				return seq, prev, err
			}
			if _, err := q.exec(ctx, `UPDATE events SET sequence = $1, hash = $2 WHERE id = $3`, e.Sequence, e.Hash, e.ID); err != nil {
				return seq, prev, wrapErr(err, "store.chainUnchained")
			}
			prev = e.Hash
		}
		if len(page) < chainPage {
			return seq, prev, nil
		}
		last := page[len(page)-1]
		afterCreated, afterID = remit.Micros(last.CreatedAt), last.ID
	}
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
