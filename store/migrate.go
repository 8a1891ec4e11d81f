package store

import (
	"context"
	"database/sql"
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

// MigrationsPending reports whether the store's schema is behind this binary's migrations: one it
// knows is not applied (a new store, a store another process is migrating right now, or one a
// process started with REMIT_AUTO_MIGRATE=false reads before `remit migrate` ran). It reads the
// version table through the read pool and without the migration lock, so it waits neither for a
// migration in progress nor for the SQLite writer. A store that answers but has no version table
// has nothing applied: pending. A migration of a newer binary is not pending for this one.
func (db *DB) MigrationsPending(ctx context.Context) (bool, error) {
	p := db.checker.Load()
	if p == nil {
		var err error
		if p, err = db.migrationsOn(ctx, db.read, false); err != nil {
			return false, wrapErr(err, "store.MigrationsPending")
		}
		db.checker.Store(p)
	}
	pending, err := p.HasPending(ctx)
	if err == nil {
		return pending, nil
	}
	if perr := db.Ping(ctx); perr != nil {
		return false, wrapErr(perr, "store.MigrationsPending")
	}
	return true, nil // the store answers, its version table does not: nothing is applied yet
}

// migrations is the goose provider of the store's migrations: the SQL files and the Go ones.
func (db *DB) migrations(ctx context.Context) (*goose.Provider, error) {
	return db.migrationsOn(ctx, db.write, true)
}

// migrationsOn is the goose provider over pool; locked: with PostgreSQL's session lock, for
// migrating.
func (db *DB) migrationsOn(ctx context.Context, pool *sql.DB, locked bool) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	if db.dialect == Postgres && locked {
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
	return goose.NewProvider(dialect, pool, fsys, opts...)
}

func isDomain(err error) bool {
	var e *remit.Error
	return errors.As(err, &e)
}
