package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The backfill (docs/ledger.md "Backfill"): a store from before the general ledger gets its journal
// by replaying, per merchant account and in the order they happened, the events of every money
// movement through the same postings the engine runs live (each event carries the resource as the
// movement left it), at the moment each happened; then recognition up to now. A movement already
// posted is skipped, so the backfill may run again, and beside serve.

// backfillBatch is how many events one page (and one transaction) of the backfill replays.
const backfillBatch = 200

// BackfillResult is what a backfill did for one merchant account.
type BackfillResult struct {
	MerchantAccountID string `json:"merchantAccountId"`
	Events            int    `json:"events"`  // movements replayed
	Skipped           int    `json:"skipped"` // already posted
}

// Backfill posts the journal of every merchant account (or of merchantID only), calling fn with
// each account's result.
//
// Errors: not_found (merchantID names no merchant account).
func (j *Journal) Backfill(ctx context.Context, merchantID string, fn func(BackfillResult) error) error {
	accounts, err := j.DB.Read(ctx).VerifiedAccounts(ctx, merchantID)
	if err != nil {
		return err
	}
	if merchantID != "" && len(accounts) == 0 {
		return remit.NotFound("merchant_account", merchantID, "")
	}
	for _, a := range accounts {
		r, err := j.backfillAccount(ctx, a.MerchantAccountID)
		if err != nil {
			return fmt.Errorf("backfill %s: %w", a.MerchantAccountID, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (j *Journal) backfillAccount(ctx context.Context, merchantID string) (BackfillResult, error) {
	out := BackfillResult{MerchantAccountID: merchantID}
	m, err := j.DB.Read(ctx).GetMerchantAccount(ctx, merchantID, store.Unlocked)
	if err != nil {
		return out, err
	}
	posts := j.postings()
	types := make([]string, 0, len(posts))
	for t := range posts {
		types = append(types, string(t))
	}
	slices.Sort(types)
	var after store.EventCursor
	for { // a page at a time, one transaction each: memory stays flat however long the history
		batch, err := j.DB.Read(ctx).EventsOfTypes(ctx, merchantID, types, after, backfillBatch)
		if err != nil {
			return out, err
		}
		if len(batch) == 0 {
			break
		}
		replayed, skipped, err := j.replayBatch(ctx, m, posts, batch)
		if err != nil {
			return out, err
		}
		out.Events, out.Skipped = out.Events+replayed, out.Skipped+skipped
		after = batch[len(batch)-1].After()
	}
	return out, j.RecognizeRevenue(ctx, m, micro(j.Now(m)))
}

// replayBatch replays one page of events in one transaction.
func (j *Journal) replayBatch(ctx context.Context, m remit.MerchantAccount, posts map[remit.EventType]reaction, batch []store.PostedEvent) (replayed, skipped int, err error) {
	err = j.DB.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
		replayed, skipped = 0, 0
		for _, ev := range batch {
			done, err := j.replay(ctx, tx, scopeOf(m), posts[remit.EventType(ev.Type)], ev)
			if err != nil {
				return fmt.Errorf("event %s (%s): %w", ev.ID, ev.Type, err)
			}
			if done {
				replayed++
			} else {
				skipped++
			}
		}
		return nil
	})
	return replayed, skipped, err
}

// replay runs one event's posting at the moment it happened, unless its movement is posted
// already (replayed false).
func (j *Journal) replay(ctx context.Context, tx *store.Tx, scope remit.Scope, post reaction, ev store.PostedEvent) (bool, error) {
	posted, err := tx.JournalSourcePosted(ctx, scope.MerchantAccountID, ev.Type, ev.ObjectID)
	if err != nil || posted {
		return false, err
	}
	var payload struct {
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(ev.Data, &payload); err != nil {
		return false, remit.Internal(err)
	}
	return true, post(ctx, tx, scope, micro(ev.CreatedAt), payload.Object)
}
