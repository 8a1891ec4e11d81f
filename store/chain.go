package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/telemetry"
)

// The event chain (docs/verification.md): every event of a merchant account has its place in the
// account's chain, a sequence 1, 2, 3, ... and a hash over its predecessor's hash and its own
// canonical form (remit.ChainHash).
//
// Where the link is made differs by store, for throughput:
//   - SQLite: at commit, inside the transaction (writeEvents). The one writer orders transactions
//     anyway, and a transaction of a group commit continues from the link the one before it wrote.
//   - PostgreSQL: just after commit, in the background. The transaction inserts its events
//     unchained; after its commit the store asks for a chaining pass over the account
//     (DB.chainAfterCommit) and returns without waiting for it. A pass, under the account's chain
//     lock (an advisory lock), chains every unchained event of the account in one short
//     transaction, its own and those of concurrent requests. Within a process the passes are
//     coalesced (chainGroups): one pass per account runs at a time, every request that committed
//     while it ran is served by the next one, and passes that only commits ask for start at least
//     chainInterval apart. Holding the chain lock through each request's own commit instead made
//     one account's writes commit one at a time (half the throughput of a single-account grant
//     load); a chaining transaction per request was as bad; waiting for the coalesced pass before
//     answering cost 9-12 %, and a pass after every commit without the spacing 15 %
//     (docs/performance.md, "The chain's cost on writes").
//     Unchained events are not listed (GET /v1/events), not dispatched to webhooks, and not part
//     of a verification. A read of events first chains what its account has pending
//     (DB.ChainBeforeRead), so a caller sees the events of every change that answered before it
//     asked, whichever process made it. After each pass the store calls the function given to
//     DB.OnChained (the webhook worker's wake-up). If a pass fails, the webhook worker chains
//     what is left (DB.ChainLeftovers).

// writeEvents inserts the transaction's events: chained on SQLite, unchained on PostgreSQL (chained
// after the commit). Accounts are taken in ID order.
func (tx *Tx) writeEvents(ctx context.Context) error {
	pending := tx.events
	tx.events = nil
	if telemetry.On() {
		for _, e := range pending { // the webhook worker continues the write's trace (telemetry.Keep)
			telemetry.Keep(ctx, e.ID)
		}
	}
	accounts := make([]string, 0, 1)
	for _, e := range pending {
		if !slices.Contains(accounts, e.MerchantAccountID) {
			accounts = append(accounts, e.MerchantAccountID)
		}
	}
	slices.Sort(accounts)
	if tx.d == Postgres {
		tx.unchained = accounts
		for _, e := range pending { // sent with the COMMIT (pipeline.go)
			if err := tx.Later(ctx, nil, insertEventSQL, e.insertArgs(nil, nil)...); err != nil {
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

const insertEventSQL = `INSERT INTO events (id, merchant_account_id, environment, type, object_id, data, created_at, sequence, hash, actor)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// insertArgs are insertEventSQL's arguments for e with its link (nil and nil: unchained).
func (e pendingEvent) insertArgs(seq, hash any) []any {
	return []any{e.ID, e.MerchantAccountID, string(e.Environment), e.Type, e.objectID, string(e.Data), remit.Micros(e.CreatedAt), seq, hash,
		remit.ActorColumn(e.Actor)}
}

func (tx *Tx) insertEvent(ctx context.Context, e pendingEvent, seq, hash any) error {
	_, err := tx.exec(ctx, insertEventSQL, e.insertArgs(seq, hash)...)
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
	_, err = foundOr(err, "store.lastLink")
	return seq, hash, err
}

// chainAfterCommit asks for a chaining pass over each account whose events a PostgreSQL
// transaction committed unchained, and returns at once: the pass runs in the background. A failure
// there is logged, and the webhook worker chains what is left.
func (db *DB) chainAfterCommit(accounts []string) {
	for _, account := range accounts {
		db.chains.request(account, db.chainPass(account))
	}
}

// chainPass is one background pass over the account: chain what is pending, then tell OnChained.
func (db *DB) chainPass(account string) func() error {
	return func() error {
		err := db.ChainPending(context.Background(), account, true)
		if err != nil {
			slog.Default().Warn("events committed, chaining them failed; the webhook worker chains them", "merchantAccountId", account, "err", err.Error())
		} else if f := db.onChained.Load(); f != nil {
			(*f)()
		}
		return err
	}
}

// OnChained sets what runs after each background chaining pass (PostgreSQL): this process's
// webhook worker is woken there, since a change's events become dispatchable only then.
func (db *DB) OnChained(f func()) { db.onChained.Store(&f) }

// ChainBeforeRead makes sure that every event the merchant account committed before the call has
// its place in the chain, so that a read of events that follows sees it, whichever process wrote
// it: when the account has unchained events it waits for this process's coalesced pass over it.
// On PostgreSQL that is the background pass of a recent change; on SQLite, where events are
// chained at commit, only what a failure left unchained.
func (db *DB) ChainBeforeRead(ctx context.Context, account string) error {
	var pending bool
	err := db.Read(withoutTx(ctx)).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE merchant_account_id = $1 AND sequence IS NULL)`, account).Scan(&pending)
	if err != nil || !pending {
		return wrapErr(err, "store.ChainBeforeRead")
	}
	return db.chains.wait(account, db.chainPass(account))
}

// chainGroups coalesces one process's chaining passes per merchant account: at most one pass per
// account runs at a time, and every request made while one runs is served by the next. wait
// returns once a pass that started after the call has ended, at once; request does not wait, and
// the passes that only requests ask for start at least chainInterval apart, so that a steady
// write load is chained in a few passes a second, each over many requests' events, rather than
// in one pass after every commit.
type chainGroups struct {
	mu       sync.Mutex
	accounts map[string]*chainQueue // present while the account's pass loop runs
	loops    sync.WaitGroup         // the running loops (DB.Close waits for them)
}

// chainInterval is the least time between the starts of two passes over an account that no
// reader waits for (docs/verification.md, "Order and cost").
const chainInterval = 10 * time.Millisecond

// chainQueue is what an account's pass loop has to do next.
type chainQueue struct {
	waiting   []chan error  // readers waiting for a pass
	requested bool          // a commit asked for a pass
	kick      chan struct{} // a reader arrived while the loop was spacing passes
}

// request asks for a pass over the account without waiting for it.
func (c *chainGroups) request(account string, pass func() error) { c.enqueue(account, pass, nil) }

// wait asks for a pass over the account and waits for its outcome.
func (c *chainGroups) wait(account string, pass func() error) error {
	done := make(chan error, 1)
	c.enqueue(account, pass, done)
	return <-done
}

// enqueue adds a request (done nil) or a waiter and starts the account's loop unless it runs.
func (c *chainGroups) enqueue(account string, pass func() error, done chan error) {
	c.mu.Lock()
	if c.accounts == nil {
		c.accounts = map[string]*chainQueue{}
	}
	q, running := c.accounts[account]
	if !running {
		q = &chainQueue{kick: make(chan struct{}, 1)}
		c.accounts[account] = q
		c.loops.Add(1)
	}
	if done == nil {
		q.requested = true
	} else {
		q.waiting = append(q.waiting, done)
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	if !running {
		go c.loop(account, q, pass)
	}
}

// loop runs passes over the account while there are requests or waiters, then ends.
func (c *chainGroups) loop(account string, q *chainQueue, pass func() error) {
	defer c.loops.Done()
	var last time.Time
	for {
		c.mu.Lock()
		if len(q.waiting) == 0 && !q.requested {
			delete(c.accounts, account)
			c.mu.Unlock()
			return
		}
		if d := chainInterval - time.Since(last); len(q.waiting) == 0 && d > 0 {
			c.mu.Unlock()
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-q.kick:
			}
			t.Stop()
			continue
		}
		batch := q.waiting
		q.waiting, q.requested = nil, false
		c.mu.Unlock()
		last = time.Now()
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
		if seq, prev, err = chainUnchained(ctx, tx.Q, account, seq, prev, db.dispatchIn(tx), true); err != nil {
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

// ChainDispatch dispatches events as a chaining pass chains them (DB.OnChainDispatch): given the
// pass's transaction and the events it chains that were not dispatched yet, it inserts their
// webhook deliveries and answers the dispatch time, which the pass writes with the links, in the
// same UPDATE: an event row is rewritten once for both instead of twice.
type ChainDispatch func(ctx context.Context, tx *Tx, events []remit.Event) (time.Time, error)

// OnChainDispatch sets what dispatches the events a chaining pass chains (the webhook engine's
// dispatch). Without it the pass only chains, and the webhook worker dispatches later.
func (db *DB) OnChainDispatch(f ChainDispatch) { db.chainDispatch.Store(&f) }

// dispatchIn is the pass's dispatch in tx, or nil.
func (db *DB) dispatchIn(tx *Tx) func(context.Context, []remit.Event) (time.Time, error) {
	f := db.chainDispatch.Load()
	if f == nil {
		return nil
	}
	return func(ctx context.Context, evs []remit.Event) (time.Time, error) { return (*f)(ctx, tx, evs) }
}

// chainUnchained numbers and hashes the account's unchained events after the link (seq, prev), in
// pages of chainPage, and returns the new last link. The caller holds the account's chain. It ends
// after a short page: events committed meanwhile are chained by whoever committed them. With
// dispatch, the events of a page not dispatched yet are dispatched in the same UPDATE. actors:
// the events table has its actor column (false only for migration 19, which runs before 40).
func chainUnchained(ctx context.Context, q Q, account string, seq int64, prev string,
	dispatch func(context.Context, []remit.Event) (time.Time, error), actors bool) (int64, string, error) {
	afterCreated, afterID := int64(-1<<63), ""
	for {
		page, dispatched, err := unchainedPage(ctx, q, account, afterCreated, afterID, actors)
		if err != nil || len(page) == 0 {
			return seq, prev, err
		}
		args := make([]any, 0, 3*len(page)+1)
		var undispatched []remit.Event
		for i := range page {
			e := &page[i]
			seq++
			e.Sequence = seq
			if e.Hash, err = remit.ChainHash(prev, *e); err != nil {
				return seq, prev, err
			}
			args = append(args, e.ID, e.Sequence, e.Hash)
			prev = e.Hash
			if !dispatched[i] {
				undispatched = append(undispatched, *e)
			}
		}
		var at any // the dispatch time, or NULL
		if dispatch != nil && len(undispatched) > 0 {
			t, err := dispatch(ctx, undispatched)
			if err != nil {
				return seq, prev, err
			}
			at = remit.Micros(t)
		}
		if _, err := q.exec(ctx, setLinks(len(page)), append(args, at)...); err != nil {
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
// hash for each, then the dispatch time or NULL, set where the event was not dispatched): one
// round trip per page instead of one per event.
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
	b.WriteString(`) UPDATE events SET sequence = v.seq, hash = v.hash, dispatched_at = COALESCE(events.dispatched_at, CAST($` + itoa(3*n+1) +
		` AS BIGINT)) FROM v WHERE events.id = v.id`)
	return b.String()
}

// unchainedPage reads a page of the account's unchained events, and whether each was dispatched.
func unchainedPage(ctx context.Context, q Q, account string, afterCreated int64, afterID string, actors bool) ([]remit.Event, []bool, error) {
	var dispatched []bool
	actorColumn := "NULL"
	if actors {
		actorColumn = "actor"
	}
	page, err := queryAll(ctx, q, "store.chainUnchained", func(r interface{ Scan(...any) error }) (e remit.Event, err error) {
		var env, data string
		var created int64
		var at sql.NullInt64
		var actor sql.NullString
		if err := r.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created, &at, &actor); err != nil {
			return e, err
		}
		e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
		e.Actor = remit.ParseActorColumn(actor.String, actor.Valid)
		dispatched = append(dispatched, at.Valid)
		return e, nil
	}, nil, `SELECT id, merchant_account_id, environment, type, data, created_at, dispatched_at, `+actorColumn+` FROM events
		WHERE merchant_account_id = $1 AND sequence IS NULL AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT `+itoa(chainPage), account, afterCreated, afterID)
	return page, dispatched, err
}
