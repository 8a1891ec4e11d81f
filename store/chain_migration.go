package store

import (
	"context"
	"database/sql"

	"github.com/pressly/goose/v3"
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

func backfillChain(ctx context.Context, tx *sql.Tx) error {
	accounts, err := queryStrings(ctx, Q{q: tx}, "store.backfillChain",
		`SELECT DISTINCT merchant_account_id FROM events WHERE sequence IS NULL ORDER BY merchant_account_id`)
	if err != nil {
		return err
	}
	for _, account := range accounts {
		if _, _, err := chainUnchained(ctx, Q{q: tx}, account, 0, "", nil, false); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `CREATE UNIQUE INDEX events_chain ON events(merchant_account_id, sequence)`)
	return err
}
