package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/pressly/goose/v3"
	"github.com/remit-billing/remit"
)

// chainMigration (version 19) gives a store's existing events their chain: per merchant account,
// in the order they were written (created_at, then ID), each event gets its sequence and hash
// (remit.ChainHash). It reads in pages of chainPage events, so memory stays flat on a store of any
// size, and it runs in the migration's transaction. Then the index that keeps sequences unique.
func chainMigration() *goose.Migration {
	return goose.NewGoMigration(19, &goose.GoFunc{RunTx: backfillChain}, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DROP INDEX events_chain`)
		return err
	}})
}

const chainPage = 1000

func backfillChain(ctx context.Context, tx *sql.Tx) error {
	accounts, err := chainAccounts(ctx, tx)
	if err != nil {
		return err
	}
	for _, account := range accounts {
		if err := backfillAccount(ctx, tx, account); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `CREATE UNIQUE INDEX events_chain ON events(merchant_account_id, sequence)`)
	return err
}

func chainAccounts(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT merchant_account_id FROM events WHERE sequence IS NULL ORDER BY merchant_account_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func backfillAccount(ctx context.Context, tx *sql.Tx, account string) error {
	var seq int64
	var prev string
	afterCreated, afterID := int64(-1<<63), ""
	for {
		page, err := unchainedPage(ctx, tx, account, afterCreated, afterID)
		if err != nil || len(page) == 0 {
			return err
		}
		for _, e := range page {
			seq++
			e.Sequence = seq
			if e.Hash, err = remit.ChainHash(prev, e); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE events SET sequence = $1, hash = $2 WHERE id = $3`, e.Sequence, e.Hash, e.ID); err != nil {
				return err
			}
			prev = e.Hash
		}
		last := page[len(page)-1]
		afterCreated, afterID = remit.Micros(last.CreatedAt), last.ID
	}
}

func unchainedPage(ctx context.Context, tx *sql.Tx, account string, afterCreated int64, afterID string) ([]remit.Event, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, merchant_account_id, environment, type, data, created_at FROM events
		WHERE merchant_account_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT `+itoa(chainPage), account, afterCreated, afterID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []remit.Event
	for rows.Next() {
		var e remit.Event
		var env, data string
		var created int64
		if err := rows.Scan(&e.ID, &e.MerchantAccountID, &env, &e.Type, &data, &created); err != nil {
			return nil, err
		}
		e.Object, e.Environment, e.Data, e.CreatedAt = "event", remit.Environment(env), json.RawMessage(data), remit.FromMicros(created)
		out = append(out, e)
	}
	return out, rows.Err()
}
