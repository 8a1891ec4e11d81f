package store

import (
	"context"
	"embed"
	"errors"
	"hash/fnv"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/remit-billing/remit"
)

// migrations holds one folder of SQL migrations written in the subset both dialects accept
// (TEXT, BIGINT, INTEGER, BOOLEAN; times as Unix microseconds; JSON as TEXT). A migration that must
// differ per dialect is a Go migration in this package.
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrate brings the schema up to date. On PostgreSQL a session advisory lock lets several
// processes start at once.
func (db *DB) Migrate(ctx context.Context) (err error) {
	defer wrap(&err, "store.Migrate")
	p, err := db.migrations(ctx)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// migrations is the goose provider of the store's migrations: the SQL files and the Go ones.
func (db *DB) migrations(ctx context.Context) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
		// One lock per database and schema: processes migrating the same store wait for each
		// other; different schemas (tests) do not.
		var where string
		if err := db.write.QueryRowContext(ctx, `SELECT current_database() || '.' || current_schema()`).Scan(&where); err != nil {
			return nil, err
		}
		h := fnv.New64a()
		h.Write([]byte(where))
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64() >> 1)))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	opts = append(opts, goose.WithGoMigrations(chainMigration(), authVersionMigration(db.dialect), usageClusteredMigration(db.dialect), linesDocMigration(db.dialect), authNotifyMigration(db.dialect)))
	return goose.NewProvider(dialect, db.write, fsys, opts...)
}

func isDomain(err error) bool {
	var e *remit.Error
	return errors.As(err, &e)
}
