package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"strings"

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
	opts = append(opts, goose.WithGoMigrations(chainMigration(), authVersionMigration(db.dialect), usageClusteredMigration(db.dialect), linesDocMigration(db.dialect), authNotifyMigration(db.dialect), catalogMigration(db.dialect)))
	return goose.NewProvider(dialect, pool, fsys, opts...)
}

func isDomain(err error) bool {
	var e *remit.Error
	return errors.As(err, &e)
}

// ErrNoStore is OpenExisting's answer for a URL that names no Remit store (errors.Is).
var ErrNoStore = errors.New("no Remit store")

// NoStoreError says which store does not exist and why; it wraps ErrNoStore.
type NoStoreError struct {
	URL    string // the store's URL, without its password
	Reason string // "the file does not exist", ...
}

func (e *NoStoreError) Error() string {
	return fmt.Sprintf("no Remit store at %s (%s)", e.URL, e.Reason)
}
func (e *NoStoreError) Unwrap() error { return ErrNoStore }

// OpenExisting opens the store named by rawURL as Open does, but only a store that exists, and
// creates nothing otherwise (*NoStoreError). A store exists once it has been migrated: it holds
// the migrations' version table (goose_db_version). A SQLite file that is missing or empty is no
// store, and is not created; an existing SQLite file or a PostgreSQL schema without the table is
// no store either, and is left as it was. (PostgreSQL: the database itself must exist, as for
// Open; the schema is the connection's current one, search_path.) It does not migrate: a store of
// an older version is brought up to date by Migrate, as any other.
func OpenExisting(ctx context.Context, rawURL string) (db *DB, err error) {
	if path, ok := strings.CutPrefix(rawURL, "sqlite:"); ok {
		path = strings.TrimPrefix(path, "//")
		if fi, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &NoStoreError{URL: rawURL, Reason: "the file does not exist"}
		} else if err == nil && fi.Size() == 0 {
			return nil, &NoStoreError{URL: rawURL, Reason: "the file is empty"}
		}
	}
	if db, err = Open(ctx, rawURL); err != nil {
		return nil, err
	}
	migrated, err := db.migrated(ctx)
	if err == nil && !migrated {
		err = &NoStoreError{URL: redactURL(rawURL), Reason: "it has never been migrated"}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// migrated reports whether the store holds the migrations' version table.
func (db *DB) migrated(ctx context.Context) (bool, error) {
	query := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'`
	if db.dialect == Postgres {
		query = `SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'goose_db_version'`
	}
	var n int
	err := db.write.QueryRowContext(ctx, query).Scan(&n)
	return n > 0, wrapErr(err, "store.OpenExisting")
}
