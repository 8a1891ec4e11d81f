package store

import (
	"context"
	"database/sql"

	"github.com/pressly/goose/v3"
)

// The auth version (docs/performance.md "Who is calling, from memory"): one row whose version
// moves in the same transaction as every change to an API key or a merchant account, whoever
// makes it (this process, another `serve`, the CLI), because triggers move it. A process keeps
// the keys and merchant accounts it authenticated with the version it read before reading them;
// an entry whose version is not the current one is read again.

// authVersionMigration (version 23) adds the auth_version row and its triggers, in each
// dialect's own syntax (a trigger is written differently on SQLite and PostgreSQL).
func authVersionMigration(d Dialect) *goose.Migration {
	up := []string{
		`CREATE TABLE auth_version (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)`,
		`INSERT INTO auth_version (id, version) VALUES (1, 0)`,
	}
	down := []string{`DROP TABLE auth_version`}
	if d == Postgres {
		up = append(up,
			`CREATE FUNCTION bump_auth_version() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE auth_version SET version = version + 1; RETURN NULL; END $$`,
			`CREATE TRIGGER api_keys_auth_version AFTER UPDATE OR DELETE ON api_keys
			FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_version()`,
			`CREATE TRIGGER merchant_accounts_auth_version AFTER UPDATE OR DELETE ON merchant_accounts
			FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_version()`)
		down = append([]string{`DROP TRIGGER merchant_accounts_auth_version ON merchant_accounts`,
			`DROP TRIGGER api_keys_auth_version ON api_keys`, `DROP FUNCTION bump_auth_version()`}, down...)
	} else {
		for _, t := range []string{"api_keys", "merchant_accounts"} {
			for _, op := range []string{"UPDATE", "DELETE"} {
				name := t + "_auth_version_" + op
				up = append(up, `CREATE TRIGGER `+name+` AFTER `+op+` ON `+t+
					` BEGIN UPDATE auth_version SET version = version + 1; END`)
				down = append([]string{`DROP TRIGGER ` + name}, down...)
			}
		}
	}
	return statementsMigration(23, up, down)
}

// AuthVersion is the current auth version.
func (q Q) AuthVersion(ctx context.Context) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `SELECT version FROM auth_version WHERE id = 1`).Scan(&v)
	return v, wrapErr(err, "store.AuthVersion")
}

// statementsMigration is a Go migration (one whose statements depend on the dialect) that runs
// up's statements, or down's, in order in the migration's transaction.
func statementsMigration(version int64, up, down []string) *goose.Migration {
	run := func(stmts []string) *goose.GoFunc {
		return &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			for _, s := range stmts {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}}
	}
	return goose.NewGoMigration(version, run(up), run(down))
}
