package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestSQLiteDriver: the SQLite connections run with the store's pragmas, parameters $N bind by
// their number whatever their order (modernc.org/sqlite reads the digits; a driver that numbers
// parameters by first appearance, as github.com/ncruces/go-sqlite3 does, fails here:
// docs/performance.md, "The SQLite driver"), and a duplicate key is a unique violation.
func TestSQLiteDriver(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "driver.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		pool *sql.DB
		name string
		want map[string]string
	}{
		{db.write, "writer", map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "foreign_keys": "1", "query_only": "0", "cache_size": sqliteWriterCache, "temp_store": "2"}},
		{db.read, "reader", map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "foreign_keys": "1", "query_only": "1"}},
	} {
		for pragma, want := range c.want {
			var got string
			if err := c.pool.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", c.name, pragma, err)
			}
			if got != want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", c.name, pragma, got, want)
			}
		}
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE t (a TEXT PRIMARY KEY, b TEXT, c TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO t (c, b, a) VALUES ($3, '$2', $1) -- $2`, "a", "unused", "c"); err != nil {
		t.Fatal(err)
	}
	var a, b, c string
	if err := db.read.QueryRowContext(ctx, `SELECT a, b, c FROM t WHERE c = $2 AND a = $1`, "a", "c").Scan(&a, &b, &c); err != nil {
		t.Fatal(err)
	}
	if a != "a" || b != "$2" || c != "c" {
		t.Errorf("row = %q %q %q", a, b, c)
	}
	_, err = db.write.ExecContext(ctx, `INSERT INTO t (a) VALUES ($1)`, "a")
	if !IsUniqueViolation(err) {
		t.Errorf("duplicate: %v, not a unique violation", err)
	}
	t.Logf("duplicate: %v", err)
}
