package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// The operations commands: backup, restore, migrate and healthcheck (docs/operations.md).

const backupUsage = `usage: remit backup --to FILE [--database-url URL]

Writes a consistent copy of the SQLite store to FILE while serve may be running on it: SQLite's
online backup (one snapshot: every write committed before the backup began is in it, none is
half in it), checked (quick_check, Remit's migrations) and renamed into place when complete.
FILE must not exist. Restore it with remit restore --from FILE.

PostgreSQL stores are backed up with PostgreSQL's tools (pg_dump, or continuous archiving for
point-in-time recovery): docs/operations.md, "Backups".

flags:
  --to FILE            the backup file to write (required; must not exist)
  --database-url URL   the store (REMIT_DATABASE_URL; default sqlite:remit.db)

variables: REMIT_DATABASE_URL`

const restoreUsage = `usage: remit restore --from FILE [--force] [--database-url URL]

Replaces the SQLite store with the backup FILE (made by remit backup), then migrates it, so a
backup of an older Remit is brought up to date; remit verify passes on the result. Stop every
remit serve on the store first.

FILE must be a Remit store whose migrations this binary knows. A store that holds data (an
organization), or a file that is not an empty Remit store, is refused unless --force.

flags:
  --from FILE          the backup to restore (required)
  --force              replace a store that holds data
  --database-url URL   the store to replace or create (REMIT_DATABASE_URL; default sqlite:remit.db)

variables: REMIT_DATABASE_URL`

const migrateUsage = `usage: remit migrate [--dry-run] [--database-url URL]

Brings the store's schema up to date, printing each migration it applies. Safe beside running
servers (on PostgreSQL an advisory lock makes concurrent runs wait for each other). serve
migrates at start too; the Helm chart runs this in a Job before an install or upgrade.

flags:
  --dry-run            list the pending migrations and apply none (exit 0 either way)
  --database-url URL   the store (REMIT_DATABASE_URL; default sqlite:remit.db)

variables: REMIT_DATABASE_URL, REMIT_DATABASE_MAX_CONNS`

const healthcheckUsage = `usage: remit healthcheck [--url URL] [--addr HOST:PORT]

Asks a running serve for GET /healthz and exits 0 on 200, 1 otherwise (within 3 s): the
container image's HEALTHCHECK, which has no curl.

flags:
  --url URL            the server's base URL (default http://REMIT_ADDR, with 0.0.0.0 or :: asked on 127.0.0.1)
  --addr HOST:PORT     the address serve listens on (REMIT_ADDR; default 127.0.0.1:8080)

variables: REMIT_ADDR`

// usageOf makes fs print text (and fail with it on a bad flag).
func usageOf(fs *flag.FlagSet, text string, stderr io.Writer) {
	fs.Usage = func() { fmt.Fprintln(stderr, text) }
}

// backupCommand runs `remit backup`.
func backupCommand(ctx context.Context, cfg *wire.Config, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usageOf(fs, backupUsage, stderr)
	to := fs.String("to", "", "the backup file to write")
	if err := parseSQLiteFile(cfg, fs, args, func() bool { return *to == "" }, "backup needs --to FILE", stderr); err != nil {
		return err
	}
	f, err := store.BackupSQLite(ctx, cfg.DatabaseURL, *to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup %s: %d bytes, migration %d, in %s\n", f.Path, f.Bytes, f.Migration, f.Took.Round(time.Millisecond))
	return nil
}

const postgresBackups = `This store is PostgreSQL. Back it up with PostgreSQL's own tools (docs/operations.md, "Backups"):
  a logical dump:   pg_dump --format=custom --file=remit.dump "$REMIT_DATABASE_URL"
                    (restore: pg_restore --clean --if-exists --dbname="$REMIT_DATABASE_URL" remit.dump)
  point in time:    continuous WAL archiving with base backups (pgBackRest, WAL-G, barman or your
                    provider's managed backups), then recover to a chosen time.
Then run remit verify on the restored store.`

// parseSQLiteFile parses the flags of backup and restore: missing (after parsing) says the file
// flag is absent. A PostgreSQL store is refused with what to use instead.
func parseSQLiteFile(cfg *wire.Config, fs *flag.FlagSet, args []string, missing func() bool, need string, stderr io.Writer) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if missing() || fs.NArg() > 0 {
		fs.Usage()
		return errors.New(need)
	}
	if !strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
		fmt.Fprintln(stderr, postgresBackups)
		return fmt.Errorf("remit %s works on SQLite stores only; on PostgreSQL use pg_dump and pg_restore, or point-in-time recovery (docs/operations.md)", fs.Name())
	}
	return nil
}

// restoreCommand runs `remit restore`.
func restoreCommand(ctx context.Context, cfg *wire.Config, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usageOf(fs, restoreUsage, stderr)
	from := fs.String("from", "", "the backup to restore")
	force := fs.Bool("force", false, "replace a store that holds data")
	if err := parseSQLiteFile(cfg, fs, args, func() bool { return *from == "" }, "restore needs --from FILE", stderr); err != nil {
		return err
	}
	f, err := store.RestoreSQLite(ctx, cfg.DatabaseURL, *from, *force)
	if errors.Is(err, store.ErrStoreHasData) {
		return fmt.Errorf("%w; nothing was changed (--force replaces it)", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s: migration %d, in %s; run remit verify before serving it\n",
		f.Path, *from, f.Migration, f.Took.Round(time.Millisecond))
	return nil
}

// migrateCommand runs `remit migrate`.
func migrateCommand(ctx context.Context, cfg *wire.Config, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usageOf(fs, migrateUsage, stderr)
	dryRun := fs.Bool("dry-run", false, "list the pending migrations and apply none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	pending, err := db.PendingMigrations(ctx)
	db.Close()
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		fmt.Fprintln(stdout, "schema up to date: no pending migration")
		return nil
	}
	verb := "pending"
	if !*dryRun {
		verb = "applying"
	}
	fmt.Fprintf(stdout, "%d migration(s) %s:\n", len(pending), verb)
	for _, m := range pending {
		fmt.Fprintln(stdout, "  "+m.String())
	}
	if *dryRun {
		return nil
	}
	r, err := wire.Open(ctx, *cfg, cfg.Logger(stderr), nil) // opening migrates the store
	if err != nil {
		return err
	}
	defer r.Close()
	fmt.Fprintln(stdout, "schema up to date")
	return nil
}

// healthcheckCommand runs `remit healthcheck`.
func healthcheckCommand(ctx context.Context, cfg *wire.Config, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usageOf(fs, healthcheckUsage, stderr)
	base := fs.String("url", "", "the server's base URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *base == "" {
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return fmt.Errorf("REMIT_ADDR %q: %w", cfg.Addr, err)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		*base = "http://" + net.JoinHostPort(host, port)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(*base, "/")+"/healthz", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", req.URL, res.StatusCode)
	}
	fmt.Fprintln(stdout, "healthy:", req.URL)
	return nil
}
