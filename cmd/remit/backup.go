package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"net"
	"net/http"
	"strings"
	"time"

	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/store"
)

// The operations commands: backup, restore, migrate and healthcheck (docs/operations.md).

// The commands take their words (About) and flags from the table in commands.go.

// backupCommand runs `remit backup`.
func backupCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	to := fs.String("to", "", "the backup file to write (required; must not exist)")
	return func(ctx context.Context, c *cli) error {
		if err := sqliteFile(c, *to == "", "backup needs --to FILE"); err != nil {
			return err
		}
		f, err := store.BackupSQLite(ctx, c.cfg.DatabaseURL, *to)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "backup %s: %d bytes, migration %d, in %s\n", f.Path, f.Bytes, f.Migration, f.Took.Round(time.Millisecond))
		return nil
	}
}

const postgresBackups = `This store is PostgreSQL. Back it up with PostgreSQL's own tools (docs/operations.md, "Backups"):
  a logical dump:   pg_dump --format=custom --file=remit.dump "$REMIT_DATABASE_URL"
                    (restore: pg_restore --clean --if-exists --dbname="$REMIT_DATABASE_URL" remit.dump)
  point in time:    continuous WAL archiving with base backups (pgBackRest, WAL-G, barman or your
                    provider's managed backups), then recover to a chosen time.
Then run remit verify on the restored store.`

// sqliteFile checks the arguments of backup and restore: missing says the file flag is absent. A
// PostgreSQL store is refused with what to use instead.
func sqliteFile(c *cli, missing bool, need string) error {
	if missing || len(c.args) > 0 {
		return errors.New(need + " (and no other argument)")
	}
	if !strings.HasPrefix(c.cfg.DatabaseURL, "sqlite:") {
		fmt.Fprintln(c.stderr, postgresBackups)
		return errors.New("this command works on SQLite stores only; on PostgreSQL use pg_dump and pg_restore, or point-in-time recovery (docs/operations.md)")
	}
	return nil
}

// restoreCommand runs `remit restore`.
func restoreCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	from := fs.String("from", "", "the backup to restore (required)")
	force := fs.Bool("force", false, "replace a store that holds data")
	return func(ctx context.Context, c *cli) error {
		if err := sqliteFile(c, *from == "", "restore needs --from FILE"); err != nil {
			return err
		}
		f, err := store.RestoreSQLite(ctx, c.cfg.DatabaseURL, *from, *force)
		if errors.Is(err, store.ErrStoreHasData) {
			return fmt.Errorf("%w; nothing was changed (--force replaces it)", err)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "restored %s from %s: migration %d, in %s; run remit verify before serving it\n",
			f.Path, *from, f.Migration, f.Took.Round(time.Millisecond))
		return nil
	}
}

// migrateCommand runs `remit migrate`: it lists the pending migrations and, without --dry-run,
// applies them (REMIT_AUTO_MIGRATE=false leaves migrating to this command).
func migrateCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	dryRun := fs.Bool("dry-run", false, "list the pending migrations and apply none (exit 0 either way)")
	return func(ctx context.Context, c *cli) error {
		db, err := store.Open(ctx, c.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		pending, err := db.PendingMigrations(ctx)
		db.Close()
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			fmt.Fprintln(c.stdout, "schema up to date: no pending migration")
			return nil
		}
		verb := "pending"
		if !*dryRun {
			verb = "applying"
		}
		fmt.Fprintf(c.stdout, "%d migration(s) %s:\n", len(pending), verb)
		for _, m := range pending {
			fmt.Fprintln(c.stdout, "  "+m.String())
		}
		if *dryRun {
			return nil
		}
		c.cfg.NoAutoMigrate = false
		return c.withEngine(ctx, func(*app.App) error { // opening migrates the store
			fmt.Fprintln(c.stdout, "schema up to date")
			return nil
		})
	}
}

// healthcheckCommand runs `remit healthcheck`.
func healthcheckCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	base := fs.String("url", "", "the server's base URL (default http://ADDR, with 0.0.0.0 or :: asked on 127.0.0.1)")
	return func(ctx context.Context, c *cli) error { return healthcheck(ctx, *base, c) }
}

// healthcheck asks GET /healthz of the server at base (or at the listen address) within 3 s.
func healthcheck(ctx context.Context, base string, c *cli) error {
	cfg, stdout := &c.cfg, c.stdout
	if base == "" {
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return fmt.Errorf("REMIT_ADDR %q: %w", cfg.Addr, err)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		base = "http://" + net.JoinHostPort(host, port)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/healthz", nil)
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
