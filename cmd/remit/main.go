// Command remit is the Remit server and its operator tools:
//
//	remit serve                       run the API server
//	remit migrate                     bring the store's schema up to date
//	remit bootstrap --organization NAME [--platform] [--json]
//	remit apikey create --organization-id ID [--environments sandbox,production] [--json]
//	remit apikey revoke APIKEYID
//	remit user create --organization-id ID --email E --role admin|viewer [--json]
//	remit user list --organization-id ID [--json]
//	remit user disable --email E
//	remit merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update
//	remit verify [--merchant-account ID] [--json]
//
// Every subcommand reads the same configuration (REMIT_* variables, overridden by flags) and
// migrates the store before it acts, so each works on a new or older store, and while serve runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/wire"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "remit:", err)
		os.Exit(1)
	}
}

const usage = `usage: remit <command> [flags]

commands:
  serve                                   run the API server
  migrate                                 bring the store's schema up to date
  bootstrap --organization NAME [--platform] [--json]
  apikey create --organization-id ID [--environments sandbox,production] [--json]
  apikey revoke APIKEYID
  user create --organization-id ID --email E --role admin|viewer [--json]
                                          add a dashboard operator; prints the one-time set-password link
  user list --organization-id ID [--json]
  user disable --email E                  the operator can no longer sign in; open sessions end
  merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update
  reconcile                               finish payment attempts left processing (serve does it every REMIT_RECONCILE_INTERVAL)
  verify [--merchant-account ID] [--json] check the event chain and every money invariant (docs/verification.md);
                                          exits 1 naming each violation (serve runs it every REMIT_VERIFY_INTERVAL)

common flags: --database-url URL (REMIT_DATABASE_URL), --addr HOST:PORT (REMIT_ADDR)`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errors.New("no command given")
	}
	cfg, err := wire.FromEnv()
	if err != nil {
		return err
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store URL: sqlite:PATH or postgres://...")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "public base URL")
	switch cmd {
	case "serve":
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return serve(ctx, cfg, stderr)
	case "migrate":
		return migrateCommand(ctx, &cfg, fs, rest, stdout, stderr)
	case "backup":
		return backupCommand(ctx, &cfg, fs, rest, stdout, stderr)
	case "restore":
		return restoreCommand(ctx, &cfg, fs, rest, stdout, stderr)
	case "healthcheck":
		return healthcheckCommand(ctx, &cfg, fs, rest, stdout, stderr)
	case "reconcile":
		if err := fs.Parse(rest); err != nil {
			return err
		}
		r, err := wire.Open(ctx, cfg, cfg.Logger(stderr), nil) // opening migrates the store
		if err != nil {
			return err
		}
		defer r.Close()
		n, err := r.App.Payments.Reconcile(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d payment attempt(s) looked at\n", n)
		return nil
	case "bootstrap":
		org := fs.String("organization", "", "organization name")
		platform := fs.Bool("platform", false, "grant the platform capability to the sandbox merchant account")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if *org == "" {
			return errors.New("bootstrap needs --organization NAME")
		}
		r, err := wire.Open(ctx, cfg, cfg.Logger(stderr), nil)
		if err != nil {
			return err
		}
		defer r.Close()
		res, err := r.App.Merchants.Bootstrap(ctx, *org, *platform)
		if err != nil {
			return err
		}
		out := map[string]any{"organizationId": res.OrganizationID, "apiKey": res.APIKey, "apiKeyId": res.APIKeyID, "merchantAccounts": res.MerchantAccounts}
		return printOut(stdout, *asJSON, out, fmt.Sprintf("organization %s\napi key %s (shown once)\nsandbox merchant account %s\nproduction merchant account %s",
			res.OrganizationID, res.APIKey, res.MerchantAccounts["sandbox"], res.MerchantAccounts["production"]))
	case "apikey":
		if len(rest) == 0 {
			return errors.New("usage: remit apikey create|revoke ...")
		}
		sub, rest := rest[0], rest[1:]
		switch sub {
		case "create":
			orgID := fs.String("organization-id", "", "organization ID")
			envs := fs.String("environments", "sandbox,production", "comma-separated environments")
			asJSON := fs.Bool("json", false, "print JSON")
			if err := fs.Parse(rest); err != nil {
				return err
			}
			if *orgID == "" {
				return errors.New("apikey create needs --organization-id ID")
			}
			var list []remit.Environment
			for _, e := range strings.Split(*envs, ",") {
				if e = strings.TrimSpace(e); e != "" {
					list = append(list, remit.Environment(e))
				}
			}
			return withEngine(ctx, cfg, stderr, func(a *app.App) error {
				id, key, err := a.Access.CreateAPIKey(ctx, *orgID, list)
				if err != nil {
					return cliError(err)
				}
				return printOut(stdout, *asJSON, map[string]any{"apiKeyId": id, "apiKey": key, "environments": list},
					fmt.Sprintf("api key %s: %s (shown once)", id, key))
			})
		case "revoke":
			if err := fs.Parse(rest); err != nil {
				return err
			}
			if fs.NArg() != 1 {
				return errors.New("usage: remit apikey revoke APIKEYID")
			}
			return withEngine(ctx, cfg, stderr, func(a *app.App) error {
				if err := a.Access.RevokeAPIKey(ctx, fs.Arg(0)); err != nil {
					return cliError(err)
				}
				fmt.Fprintln(stdout, "revoked", fs.Arg(0))
				return nil
			})
		}
		return fmt.Errorf("unknown apikey command %q", sub)
	case "user":
		return userCommand(ctx, &cfg, fs, rest, stdout, stderr)
	case "merchant":
		if len(rest) == 0 || rest[0] != "decide" {
			return errors.New("usage: remit merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update")
		}
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return errors.New("usage: remit merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update")
		}
		return withEngine(ctx, cfg, stderr, func(a *app.App) error {
			status, err := a.Merchants.DecideMerchant(ctx, fs.Arg(0), fs.Arg(1))
			if err != nil {
				return cliError(err)
			}
			fmt.Fprintf(stdout, "merchant account %s is now %s\n", fs.Arg(0), status)
			return nil
		})
	case "verify":
		account := fs.String("merchant-account", "", "verify only this merchant account (ma_...)")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return withEngine(ctx, cfg, stderr, func(a *app.App) error { return verify(ctx, a, *account, *asJSON, stdout) })
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

func serve(ctx context.Context, cfg wire.Config, stderr io.Writer) error {
	log := cfg.Logger(stderr)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Listen first: with port 0 (--addr 127.0.0.1:0) the system picks a free port, which then
	// makes the default public URL and is logged in the "serving" line.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg.Addr = ln.Addr().String()
	r, err := wire.Open(ctx, cfg, log, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Serve(ctx, ln)
}

func printOut(w io.Writer, asJSON bool, v any, text string) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(w, text)
	return err
}

// cliError shows a domain error's safe message.
func cliError(err error) error {
	var e *remit.Error
	if errors.As(err, &e) && e.Code != remit.EInvalid && e.Code != remit.EInternal {
		return errors.New(e.Message)
	}
	if errors.As(err, &e) && e.Code == remit.EInvalid {
		var b strings.Builder
		b.WriteString("invalid input:")
		for _, f := range e.Fields {
			b.WriteString("\n  " + f.Field + ": " + f.Message)
		}
		return errors.New(b.String())
	}
	return err
}

// withEngine opens the store (migrating it) and runs fn with the engine, then closes it.
func withEngine(ctx context.Context, cfg wire.Config, stderr io.Writer, fn func(a *app.App) error) error {
	r, err := wire.Open(ctx, cfg, cfg.Logger(stderr), nil)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r.App)
}

// verify runs the money checks (docs/verification.md) and prints each merchant account's result as
// it is ready: text, or with asJSON one JSON document {"verifications": [...], "ok": bool}. Any
// violation makes it return an error (exit status 1).
func verify(ctx context.Context, a *app.App, account string, asJSON bool, stdout io.Writer) error {
	accounts, failed, violations := 0, 0, 0
	if asJSON {
		fmt.Fprint(stdout, `{"verifications":[`)
	}
	enc := json.NewEncoder(stdout)
	err := a.Verification.VerifyAll(ctx, account, func(v remit.Verification) error {
		if asJSON && accounts > 0 {
			fmt.Fprint(stdout, ",")
		}
		accounts++
		if !v.OK {
			failed++
		}
		for _, c := range v.Checks {
			violations += c.ViolationCount
		}
		if asJSON {
			return enc.Encode(v)
		}
		printVerification(stdout, v)
		return nil
	})
	if err != nil {
		return cliError(err)
	}
	if asJSON {
		fmt.Fprintf(stdout, "],\"ok\":%t}\n", failed == 0)
	} else {
		fmt.Fprintf(stdout, "%d merchant account(s) verified, %d with violations\n", accounts, failed)
	}
	if failed > 0 {
		return fmt.Errorf("verification failed: %d violation(s) in %d merchant account(s)", violations, failed)
	}
	return nil
}

func printVerification(w io.Writer, v remit.Verification) {
	status := "ok"
	if !v.OK {
		status = "VIOLATIONS"
	}
	fmt.Fprintf(w, "%s: %s\n", v.MerchantAccountID, status)
	for _, c := range v.Checks {
		if c.OK {
			fmt.Fprintf(w, "  %-18s ok\n", c.Name)
			continue
		}
		fmt.Fprintf(w, "  %-18s %d violation(s)\n", c.Name, c.ViolationCount)
		for _, x := range c.Violations {
			fmt.Fprintf(w, "    %s %s: %s\n", x.Resource, x.ID, x.Detail)
		}
		if more := c.ViolationCount - len(c.Violations); more > 0 {
			fmt.Fprintf(w, "    ... and %d more\n", more)
		}
	}
}
