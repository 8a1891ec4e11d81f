package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

func cliRun(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

// tablesIn counts the tables of a PostgreSQL store's schema.
func tablesIn(t *testing.T, dbURL string) int {
	t.Helper()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every command but serve, migrate and bootstrap refuses a store that does not exist, with a
// message that says what to do and a non-zero exit, and creates nothing: on SQLite a missing file
// (or an empty one), on PostgreSQL a schema that was never migrated. migrate then creates it, and
// the same commands work on it.
func TestCommandsRefuseAStoreThatDoesNotExist(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			dbURL := testkit.NewStoreURL(t, s) // PostgreSQL: a new, empty schema
			var path string
			absent := func() bool { return tablesIn(t, dbURL) == 0 }
			if s == testkit.SQLite {
				path = filepath.Join(t.TempDir(), "nonexist.db")
				dbURL = "sqlite:" + path
				absent = func() bool {
					entries, _ := os.ReadDir(filepath.Dir(path))
					return len(entries) == 0
				}
			}
			for _, args := range [][]string{
				{"verify"}, {"verify", "--json"}, {"reconcile"},
				{"apikey", "create", "--organization-id", "org_x"}, {"apikey", "revoke", "key_x"},
				{"user", "create", "--organization-id", "org_x", "--email", "a@example.com", "--role", "admin"},
				{"user", "list", "--organization-id", "org_x"}, {"user", "disable", "--email", "a@example.com"},
				{"merchant", "decide", "ma_x", "approve"}, {"ledger", "backfill"},
			} {
				words := 1
				if args[0] == "apikey" || args[0] == "user" || args[0] == "merchant" || args[0] == "ledger" {
					words = 2
				}
				full := append(append(append([]string(nil), args[:words]...), "--database-url", dbURL), args[words:]...)
				out, _, err := cliRun(full...)
				if err == nil || !strings.Contains(err.Error(), "no Remit store at") || !strings.Contains(err.Error(), "remit migrate") ||
					strings.Contains(err.Error(), "secret") {
					t.Errorf("%v: %v", args, err)
				}
				if !absent() {
					t.Fatalf("%v created the store", args)
				}
				if args[0] == "verify" && len(args) == 1 && out != "" {
					t.Errorf("verify printed %q", out)
				}
			}
			if s == testkit.SQLite {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, _, err := cliRun("verify", "--database-url", dbURL); err == nil || !strings.Contains(err.Error(), "the file is empty") {
					t.Errorf("an empty file: %v", err)
				}
				if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
					t.Fatalf("the empty file was written: %v %v", fi, err)
				}
			}
			if out, _, err := cliRun("migrate", "--database-url", dbURL); err != nil || !strings.Contains(out, "schema up to date") {
				t.Fatalf("migrate: %q %v", out, err)
			}
			if out, _, err := cliRun("verify", "--database-url", dbURL); err != nil || !strings.Contains(out, "0 merchant account(s) verified") {
				t.Fatalf("verify after migrate: %q %v", out, err)
			}
		})
	}
}

// A PostgreSQL schema holding other tables but never migrated is no store either, and stays as
// it was.
func TestPostgresSchemaNeverMigrated(t *testing.T) {
	dbURL := testkit.NewStoreURL(t, testkit.Postgres)
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL().Exec(`CREATE TABLE other_app (id INT)`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun("user", "list", "--organization-id", "org_x", "--database-url", dbURL); err == nil || !strings.Contains(err.Error(), "never been migrated") {
		t.Fatalf("user list: %v", err)
	}
	if n := tablesIn(t, dbURL); n != 1 {
		t.Fatalf("%d tables in the schema, want the one it had", n)
	}
}

// oneJSON decodes out as exactly one JSON document.
func oneJSON(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not a JSON document: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("more than one JSON document:\n%s", out)
	}
}

// `remit verify --json` prints exactly one JSON document whatever happens: an unknown merchant
// account, a store that does not exist.
func TestVerifyJSONIsOneDocument(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		type doc struct {
			Verifications []json.RawMessage
			OK            *bool
			Error         string
		}
		out, _, err := cliRun("verify", "--json", "--database-url", e.DBURL, "--merchant-account", "ma_nope")
		var d doc
		oneJSON(t, out, &d)
		if err == nil || d.OK == nil || *d.OK || d.Verifications == nil || len(d.Verifications) != 0 || !strings.Contains(d.Error, "ma_nope") {
			t.Fatalf("an unknown account: %v\n%s", err, out)
		}
		out, _, err = cliRun("verify", "--json", "--database-url", e.DBURL)
		d = doc{}
		oneJSON(t, out, &d)
		if err != nil || d.OK == nil || !*d.OK || len(d.Verifications) != 2 || d.Error != "" {
			t.Fatalf("a clean store: %v\n%s", err, out)
		}
	})
	out, _, err := cliRun("verify", "--json", "--database-url", "sqlite:"+filepath.Join(t.TempDir(), "none.db"))
	var d struct {
		OK    bool
		Error string
	}
	oneJSON(t, out, &d)
	if err == nil || d.OK || !strings.Contains(d.Error, "no Remit store at") {
		t.Fatalf("no store: %v\n%s", err, out)
	}
}

// Every command and subcommand answers --help and -h with exit 0: its synopsis, its flags and the
// environment variables it reads, under their names in wire.Variables (serve: all of them); help
// shows defaults, never what the environment holds. A group lists its commands, and `remit
// --help` every command.
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Setenv("REMIT_DATABASE_URL", "postgres://remit:hunter2@db.internal:5432/remit")
	for _, c := range commands {
		for _, h := range []string{"--help", "-h"} {
			out, _, err := cliRun(append(strings.Fields(c.Name), h)...)
			if err != nil || !strings.HasPrefix(out, "usage: remit "+c.Name+" ") || strings.Contains(out, "hunter2") {
				t.Fatalf("remit %s %s: %v\n%s", c.Name, h, err, out)
			}
			if c.Run == nil {
				for _, sub := range commands {
					if strings.HasPrefix(sub.Name, c.Name+" ") && !strings.Contains(out, sub.Name+" ") {
						t.Errorf("remit %s %s does not list %s:\n%s", c.Name, h, sub.Name, out)
					}
				}
				continue
			}
			fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
			commonFlags(fs, &wire.Config{})
			c.Run(fs)
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(out, "  -"+f.Name+" ") && !strings.Contains(out, "  -"+f.Name+"\n") {
					t.Errorf("remit %s %s does not name its flag --%s:\n%s", c.Name, h, f.Name, out)
				}
			})
			names := c.Env
			if c.AllEnv {
				names = nil
				for _, v := range wire.Variables {
					names = append(names, v.Name)
				}
			}
			if len(names) == 0 {
				t.Errorf("remit %s names no variable", c.Name)
			}
			for _, n := range names {
				v, ok := wire.LookupVariable(n)
				if !ok || !strings.Contains(out, "  "+n+" (default "+wire.Plain(v.Default)+")") {
					t.Errorf("remit %s %s does not name %s:\n%s", c.Name, h, n, out)
				}
			}
		}
		if c.Run != nil {
			via, _, err := cliRun(append([]string{"help"}, strings.Fields(c.Name)...)...)
			flagged, _, _ := cliRun(append(strings.Fields(c.Name), "--json", "--help")...)
			if own, _, _ := cliRun(append(strings.Fields(c.Name), "--help")...); err != nil || via != own || (strings.Contains(own, "-json") && flagged != own) {
				t.Errorf("remit help %s differs from remit %s --help (%v)", c.Name, c.Name, err)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, err := cliRun(args...)
		if err != nil {
			t.Fatalf("remit %v: %v", args, err)
		}
		for _, c := range commands {
			if c.Run != nil && !strings.Contains(out, "  "+c.Name+" ") {
				t.Errorf("remit %v does not list %s", args, c.Name)
			}
		}
	}
	if _, _, err := cliRun("verify", "--nope"); err == nil || !strings.Contains(err.Error(), "remit verify --help") {
		t.Errorf("an unknown flag: %v", err)
	}
	for _, args := range [][]string{{"user"}, {"user", "promote"}, {"nope"}, {"help", "nope"}} {
		if _, _, err := cliRun(args...); err == nil {
			t.Errorf("remit %v answered no error", args)
		}
	}
}

// `remit ledger backfill --json` on a store prints one document naming every merchant account.
func TestLedgerBackfillCommand(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			dbURL := testkit.MigratedStoreURL(t, s)
			if _, _, err := cliRun("bootstrap", "--database-url", dbURL, "--organization", "Books", "--json"); err != nil {
				t.Fatal(err)
			}
			out, _, err := cliRun("ledger", "backfill", "--database-url", dbURL, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Accounts []map[string]any `json:"accounts"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Accounts) != 2 {
				t.Fatalf("%v: %s", err, out)
			}
		})
	}
}
