package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// command is one command of the CLI. A group (Run nil: apikey, user, merchant) only names the
// commands under it ("user create", ...), which it lists when asked.
type command struct {
	Name    string   // "verify", "user create"
	Args    string   // positional arguments, for the usage line ("APIKEYID")
	Summary string   // one line, for `remit --help`
	About   string   // what it does, for `remit NAME --help`
	Env     []string // the variables that change what it does (wire.Variables); nil with AllEnv
	AllEnv  bool     // it reads every variable (serve)
	Creates bool     // a store that does not exist is created (serve, migrate, bootstrap); others refuse it
	// Run declares the command's own flags on fs and returns its body, run once they are parsed.
	Run func(fs *flag.FlagSet) func(ctx context.Context, c *cli) error
}

// The variables every command that opens the store reads.
var storeEnv = []string{"REMIT_DATABASE_URL", "REMIT_DATABASE_MAX_CONNS", "REMIT_LOG_LEVEL"}

func withStoreEnv(names ...string) []string {
	return append(append([]string(nil), storeEnv...), names...)
}

// commands is the CLI, in the order `remit --help` lists it.
var commands = []*command{
	{Name: "serve", Summary: "run the API server (and the dashboard, the scheduler and the workers)", AllEnv: true, Creates: true, Run: serveCommand,
		About: "Runs the API server on --addr with the dashboard at /dashboard, the scheduler, the webhook and e-mail workers, the payment reconciler and the hourly money checks. It migrates the store first, creating it if it does not exist. --addr 127.0.0.1:0 picks a free port and logs it. SIGINT or SIGTERM stops it gracefully."},
	{Name: "migrate", Summary: "bring the store's schema up to date (creating the store); --dry-run lists what is pending", Env: storeEnv, Creates: true, Run: migrateCommand,
		About: "Creates the store if it does not exist and applies every migration it lacks, printing each. Safe while serve runs (on PostgreSQL an advisory lock makes concurrent runs wait for each other). serve migrates at start too unless REMIT_AUTO_MIGRATE=false; the Helm chart runs this in a Job before an install or upgrade. With --dry-run it lists the pending migrations and applies none."},
	{Name: "bootstrap", Summary: "an organization, an approved merchant account per environment, one API key", Env: storeEnv, Creates: true, Run: bootstrapCommand,
		About: "Creates an organization with one approved merchant account in each environment (sandbox and production) and one API key for both, shown once. It creates the store if it does not exist."},
	{Name: "apikey", Summary: "API keys"},
	{Name: "apikey create", Summary: "a new API key of an organization (shown once; stored hashed)", Env: storeEnv, Run: apikeyCreateCommand,
		About: "Creates an API key of the organization for the environments given; the key is printed once and stored hashed."},
	{Name: "apikey revoke", Args: "APIKEYID", Summary: "revoke an API key", Env: storeEnv, Run: apikeyRevokeCommand,
		About: "Revokes the key: a running serve refuses it from its next request on SQLite, within a second on PostgreSQL."},
	{Name: "user", Summary: "the dashboard's operators"},
	{Name: "user create", Summary: "add a dashboard operator; prints the one-time set-password link", Env: withStoreEnv("REMIT_PUBLIC_URL", "REMIT_ADDR"), Run: userCreateCommand,
		About: "Adds an operator of the organization (admin acts, viewer reads) and prints the one-time link, valid 72 hours, under REMIT_PUBLIC_URL (default http:// and the listen address), that sets the operator's password (docs/dashboard.md)."},
	{Name: "user list", Summary: "the organization's operators: e-mail, role, state", Env: storeEnv, Run: userListCommand,
		About: "Lists the organization's operators: ID, e-mail address, role and state (active, password not set, disabled)."},
	{Name: "user disable", Summary: "the operator can no longer sign in; open sessions end", Env: storeEnv, Run: userDisableCommand,
		About: "Disables the operator with that e-mail address: signing in is refused at once, and an open session ends at its next request."},
	{Name: "merchant", Summary: "merchant accounts"},
	{Name: "merchant decide", Args: "MERCHANT_ACCOUNT_ID approve|reject|request-update", Summary: "decide the underwriting of a production merchant account in review", Env: storeEnv, Run: merchantDecideCommand,
		About: "Decides the underwriting of a production merchant account in review (docs/merchant-accounts.md), as the dashboard's decision does."},
	{Name: "reconcile", Summary: "finish payment attempts left processing (serve does it every REMIT_RECONCILE_INTERVAL)",
		Env: withStoreEnv("REMIT_STRIPE_SECRET_KEY", "REMIT_STRIPE_API_URL", "REMIT_STRIPE_SANDBOX", "REMIT_PROCESSOR_TIMEOUT", "REMIT_SANDBOX_PROCESSOR_LATENCY", "REMIT_DUNNING_SCHEDULE", "REMIT_PUBLIC_URL", "REMIT_ADDR"), Run: reconcileCommand,
		About: "Asks the processor about every payment attempt left processing (a crash, a timeout) and records its answer, once; serve does the same every REMIT_RECONCILE_INTERVAL."},
	{Name: "backup", Summary: "a consistent copy of the SQLite store, while serve runs", Env: storeEnv, Run: backupCommand,
		About: "Writes a consistent copy of the SQLite store to --to FILE while serve may be running on it: SQLite's online backup (one snapshot: every write committed before the backup began is in it, none is half in it), checked (quick_check, Remit's migrations) and renamed into place when complete. FILE must not exist. Restore it with remit restore --from FILE. PostgreSQL stores are backed up with PostgreSQL's tools (pg_dump, or continuous archiving for point-in-time recovery): docs/operations.md, \"Backups\"."},
	{Name: "restore", Summary: "replace the SQLite store with a backup (--force over a store with data)", Env: storeEnv, Creates: true, Run: restoreCommand,
		About: "Replaces the SQLite store with the backup --from FILE (made by remit backup), then migrates it, so a backup of an older Remit is brought up to date; remit verify passes on the result. Stop every remit serve on the store first. FILE must be a Remit store whose migrations this binary knows. A store that holds data (an organization) is refused unless --force."},
	{Name: "healthcheck", Summary: "ask a running serve for GET /healthz (the container image's HEALTHCHECK)", Env: []string{"REMIT_ADDR"}, Creates: true, Run: healthcheckCommand,
		About: "Asks a running serve for GET /healthz and exits 0 on 200, 1 otherwise (within 3 s): the container image's HEALTHCHECK, which has no curl. It opens no store."},
	{Name: "ledger", Summary: "the general ledger (docs/ledger.md)"},
	{Name: "ledger backfill", Summary: "post the journal of a store from before the general ledger, replaying its history", Env: storeEnv, Run: ledgerBackfillCommand,
		About: "Replays, per merchant account (or of --merchant-account only) and in the order they happened, the events of every money movement through the postings the engine runs live, then recognizes revenue up to now (docs/ledger.md, \"Backfill\"). A movement already posted is skipped, so it may run again, and while serve runs. Run remit verify after. With --json it prints one JSON document, {\"accounts\": [{\"merchantAccountId\", \"events\", \"skipped\"}], \"seconds\"}."},
	{Name: "verify", Summary: "check the event chain and every money invariant (docs/verification.md)", Env: storeEnv, Run: verifyCommand,
		About: "Checks the event chain and every money invariant of every merchant account of the store, or of one (docs/verification.md), and exits 1 naming each violation; serve runs the same checks every REMIT_VERIFY_INTERVAL. With --json it prints exactly one JSON document, {\"verifications\": [...], \"ok\": bool}, with \"error\" when it could not verify."},
}

// find finds the command args name ("user create" takes two words) and returns the rest.
func find(args []string) (*command, []string, error) {
	var found *command
	for _, c := range commands {
		if c.Name == args[0] {
			found = c
		}
	}
	if found == nil {
		return nil, nil, fmt.Errorf("unknown command %q", args[0])
	}
	if found.Run == nil && len(args) > 1 {
		for _, c := range commands {
			if c.Name == found.Name+" "+args[1] {
				return c, args[2:], nil
			}
		}
	}
	return found, args[1:], nil
}

// run parses the command's flags (the environment first, the flags over it) and runs it; --help
// prints its help on stdout and runs nothing.
func (cmd *command) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := wire.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // --help is answered below, a bad flag by the error
	commonFlags(fs, &cfg)
	body := cmd.Run(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, cmd.help())
		return nil
	} else if err != nil {
		return fmt.Errorf("%w (remit %s --help lists its flags)", err, cmd.Name)
	}
	cfg.ExistingStore = !cmd.Creates
	return body(ctx, &cli{cfg: cfg, args: fs.Args(), stdout: stdout, stderr: stderr})
}

// noStoreHint adds to a store that does not exist what to do about it.
func noStoreHint(err error) error {
	var none *store.NoStoreError
	if errors.As(err, &none) {
		return fmt.Errorf("%w: create it with `remit migrate` (or `remit serve`), or name another with --database-url or REMIT_DATABASE_URL", err)
	}
	return err
}

// commonFlags are the flags of every command, over their variables.
func commonFlags(fs *flag.FlagSet, cfg *wire.Config) {
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the store: sqlite:PATH or postgres://... (REMIT_DATABASE_URL)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address, host:port; the public URL defaults to http://ADDR (REMIT_ADDR)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "public base URL of hosted pages and links (REMIT_PUBLIC_URL)")
}

// usageLine is the command's synopsis.
func (cmd *command) usageLine() string {
	line := "remit " + cmd.Name + " [flags]"
	if cmd.Args != "" {
		line += " " + cmd.Args
	}
	return line
}

// help is `remit NAME --help`: what the command does, its flags and its environment variables.
func (cmd *command) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", cmd.usageLine(), wrap(cmd.About, 96, ""))
	if !cmd.Creates {
		b.WriteString("\nThe store must exist: a missing SQLite file or a PostgreSQL schema never migrated is refused, and\nnothing is created (`remit migrate` creates a store).\n")
	}
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	cfg := wire.Defaults()
	commonFlags(fs, &cfg)
	cmd.Run(fs)
	b.WriteString("\nflags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	b.WriteString("\nenvironment (a flag overrides its variable):\n")
	names := cmd.Env
	if cmd.AllEnv {
		names = nil
		for _, v := range wire.Variables {
			names = append(names, v.Name)
		}
	}
	for _, name := range names {
		v, ok := wire.LookupVariable(name)
		if !ok {
			panic("cmd/remit: " + cmd.Name + " names " + name + ", which wire.Variables does not list")
		}
		fmt.Fprintf(&b, "  %s (default %s)\n%s\n", v.Name, wire.Plain(v.Default), wrap(wire.Plain(v.Meaning), 92, "      "))
	}
	if !cmd.AllEnv {
		b.WriteString("Every other REMIT_* variable is read and checked too (a malformed value stops the command) but\nchanges nothing here; `remit serve --help` lists them all.\n")
	}
	return b.String()
}

// usage is `remit --help`: every command.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: remit COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		if c.Run == nil {
			continue
		}
		listed(&b, c)
	}
	b.WriteString("\n`remit COMMAND --help` (or `remit help COMMAND`) says what a command does, its flags and the\nREMIT_* environment variables it reads; `remit serve --help` lists every variable.\n")
	return b.String()
}

// listed writes a command's line of a list: its synopsis and its summary (on the next line when
// the synopsis is long).
func listed(b *strings.Builder, c *command) {
	syn := strings.TrimPrefix(c.usageLine(), "remit ")
	if len(syn) > 34 {
		fmt.Fprintf(b, "  %s\n  %-34s %s\n", syn, "", c.Summary)
		return
	}
	fmt.Fprintf(b, "  %-34s %s\n", syn, c.Summary)
}

// groupHelp is `remit GROUP --help`: the group's commands.
func groupHelp(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: remit %s COMMAND [flags]\n\ncommands:\n", group)
	for _, c := range commands {
		if strings.HasPrefix(c.Name, group+" ") {
			listed(&b, c)
		}
	}
	fmt.Fprintf(&b, "\n`remit %s COMMAND --help` says what a command does, its flags and its environment variables.\n", group)
	return b.String()
}

// wrap breaks text into lines of at most width characters, each after indent.
func wrap(text string, width int, indent string) string {
	var lines []string
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}
