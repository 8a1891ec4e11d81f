package store

import (
	"context"
	"fmt"
	"path"

	"github.com/pressly/goose/v3"
)

// Migration is one of the store's migrations.
type Migration struct {
	Version int64
	Name    string // the SQL file (00030_write_indexes.sql), or "(Go)" for a migration written in Go
}

func (m Migration) String() string { return fmt.Sprintf("%05d %s", m.Version, m.Name) }

// PendingMigrations lists, in order, the migrations that Migrate would apply to the store, and
// applies none (`remit migrate --dry-run`, docs/operations.md).
func (db *DB) PendingMigrations(ctx context.Context) (pending []Migration, err error) {
	defer wrap(&err, "store.PendingMigrations")
	p, err := db.migrations(ctx)
	if err != nil {
		return nil, err
	}
	started, err := db.hasTable(ctx, "goose_db_version")
	if err != nil {
		return nil, err
	}
	if !started { // a new store: everything is pending (Status would fail on the missing table)
		for _, s := range p.ListSources() {
			pending = append(pending, migrationOf(s))
		}
		return pending, nil
	}
	status, err := p.Status(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range status {
		if s.State == goose.StatePending {
			pending = append(pending, migrationOf(s.Source))
		}
	}
	return pending, nil
}

// knownMigrations lists the versions of this binary's migrations, ascending.
func (db *DB) knownMigrations(ctx context.Context) ([]int64, error) {
	p, err := db.migrations(ctx)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, s := range p.ListSources() {
		out = append(out, s.Version)
	}
	return out, nil
}

func migrationOf(s *goose.Source) Migration {
	name := "(Go)"
	if s.Type == goose.TypeSQL {
		name = path.Base(s.Path)
	}
	return Migration{Version: s.Version, Name: name}
}

// hasTable reports whether the store has a table of that name (in PostgreSQL: in its schema).
func (db *DB) hasTable(ctx context.Context, name string) (bool, error) {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1`
	if db.dialect == Postgres {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`
	}
	var n int
	if err := db.write.QueryRowContext(ctx, q, name).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
