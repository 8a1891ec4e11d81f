package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/remit-billing/remit"
)

// The events outbox: events are written in the transaction of the change they describe.

// AppendEvent adds an event to the transaction's outbox. It is written, with its place in the
// merchant account's chain (sequence, hash), when the transaction commits: the chain's order is the
// commit order. An event appended inside a savepoint that is rolled back is dropped with it.
func (tx *Tx) AppendEvent(e remit.Event, objectID string) {
	if len(tx.events) == 0 {
		tx.BeforeCommit(tx.writeEvents)
	}
	tx.events = append(tx.events, pendingEvent{e, objectID})
}

type pendingEvent struct {
	remit.Event
	objectID string
}

// writeEvents chains and inserts the transaction's events, account by account in ID order. On
// PostgreSQL each account's chain is ordered by a transaction-level advisory lock held to the
// commit (taken last, so it waits for no other lock while held); SQLite's one writer orders them
// anyway. docs/verification.md.
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
			if _, err := tx.exec(ctx, `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at, sequence, hash)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				e.ID, e.MerchantAccountID, string(e.Environment), e.Type, e.objectID, string(e.Data), remit.Micros(e.CreatedAt), e.Sequence, e.Hash); err != nil {
				return wrapErr(err, "store.AppendEvent")
			}
			prev = e.Hash
		}
		tx.heads[account] = chainLink{seq, prev}
	}
	return nil
}

// chainLink is the last link of a merchant account's chain: its sequence and hash.
type chainLink struct {
	seq  int64
	hash string
}

// chainHead locks the merchant account's chain (PostgreSQL) and returns its last sequence and
// hash (0 and "" for an empty chain). On SQLite a transaction that follows another in the same
// group commit takes the link that one wrote (Tx.batchHeads) instead of reading it: the batch is
// one write transaction, so nothing else can have written in between.
func (tx *Tx) chainHead(ctx context.Context, account string) (int64, string, error) {
	if l, ok := tx.batchHeads[account]; ok {
		return l.seq, l.hash, nil
	}
	if tx.d == Postgres {
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "event_chain|"+account); err != nil {
			return 0, "", wrapErr(err, "store.AppendEvent: lock chain")
		}
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

// ListEventsByObject returns a merchant account's events about one object, oldest first.
func (q Q) ListEventsByObject(ctx context.Context, merchantAccountID, objectID string) ([]remit.Event, error) {
	return queryAll(ctx, q, "store.ListEventsByObject", scanEvent, nil, `SELECT `+eventColumns+` FROM events
		WHERE merchant_account_id = $1 AND object_id = $2 ORDER BY created_at, id`, merchantAccountID, objectID)
}
