package testkit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// StoreDigest hashes every row of every table of the env's store: two equal digests mean the
// store holds the same data (a preview wrote nothing). Settings (keys created on first use) and
// the tables named in skip are left out.
func StoreDigest(t testing.TB, e *Env, skip ...string) map[string]string {
	t.Helper()
	db, ctx := e.App.DB.SQL(), context.Background()
	// On PostgreSQL the events of the last write are chained after its commit: wait for that pass.
	if err := e.App.DB.ChainBeforeRead(ctx, e.Tenant.Sandbox); err != nil {
		t.Fatal(err)
	}
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if e.Store == Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	var tables []string
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != "settings" && !slices.Contains(skip, n) {
			tables = append(tables, n)
		}
	}
	rows.Close()
	out := map[string]string{}
	for _, tb := range tables {
		out[tb] = tableDigest(t, db, tb)
	}
	if len(out) < 20 {
		t.Fatalf("only %d tables", len(out))
	}
	return out
}

func tableDigest(t testing.TB, db *sql.DB, table string) string {
	t.Helper()
	lines := TableRows(t, db, table)
	slices.Sort(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return fmt.Sprintf("%d:%s", len(lines), hex.EncodeToString(h[:8]))
}

// TableRows returns every row of a table as one line of text, its values tab-separated (bytes
// as text), in the order the store returns them.
func TableRows(t testing.TB, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%v\t", v)
		}
		lines = append(lines, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
