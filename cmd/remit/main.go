// Command remit is the Remit server and its operator tools. `remit --help` lists the commands and
// `remit COMMAND --help` (or `remit help COMMAND`) says what one does, its flags and the
// environment variables it reads (wire.Variables, the README's configuration table).
//
//	remit serve                       run the API server
//	remit migrate                     bring the store's schema up to date (creating the store)
//	remit bootstrap --organization NAME [--platform] [--json]
//	remit apikey create --organization-id ID [--environments sandbox,production] [--json]
//	remit apikey revoke APIKEYID
//	remit user create --organization-id ID --email E --role admin|viewer [--json]
//	remit user list --organization-id ID [--json]
//	remit user disable --email E
//	remit merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update
//	remit reconcile
//	remit verify [--merchant-account ID] [--json]
//
// Every command reads the same configuration (REMIT_* variables, overridden by flags) and
// migrates the store before it acts, so each works on an older store, and while serve runs.
// Every command but serve, migrate and bootstrap refuses a store that does not exist
// (store.OpenExisting) instead of creating an empty one.
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
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/internal/telemetry"
	"github.com/remit-billing/remit/wire"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "remit:", err)
		os.Exit(1)
	}
}

// run runs the command args name: a command of the table, or help.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return errors.New("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		return help(args[1:], stdout)
	}
	cmd, rest, err := find(args)
	if err != nil {
		fmt.Fprint(stderr, usage())
		return err
	}
	if cmd.Run == nil { // a group: `remit user`
		if len(rest) > 0 && isHelp(rest[0]) {
			fmt.Fprint(stdout, groupHelp(cmd.Name))
			return nil
		}
		fmt.Fprint(stderr, groupHelp(cmd.Name))
		if len(rest) == 0 {
			return fmt.Errorf("remit %s needs a command", cmd.Name)
		}
		return fmt.Errorf("unknown %s command %q", cmd.Name, rest[0])
	}
	return cmd.run(ctx, rest, stdout, stderr)
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// help answers `remit help [COMMAND...]`: the commands, or one command's help.
func help(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage())
		return nil
	}
	cmd, rest, err := find(args)
	switch {
	case err != nil:
		return err
	case len(rest) > 0:
		return fmt.Errorf("unknown %s command %q", cmd.Name, rest[0])
	case cmd.Run == nil:
		fmt.Fprint(stdout, groupHelp(cmd.Name))
	default:
		fmt.Fprint(stdout, cmd.help())
	}
	return nil
}

// cli is what a command's body works with: the configuration (the environment, then the flags),
// the positional arguments and the outputs.
type cli struct {
	cfg            wire.Config
	args           []string
	stdout, stderr io.Writer
}

// withEngine opens the store (migrating it; one that does not exist only for the commands that
// create it) and runs fn with the engine, then closes it.
func (c *cli) withEngine(ctx context.Context, fn func(a *app.App) error) error {
	r, err := wire.Open(ctx, c.cfg, c.cfg.Logger(c.stderr), nil)
	if err != nil {
		return noStoreHint(err)
	}
	defer r.Close()
	return fn(r.App)
}

// engineCall runs a command's one engine call with the engine open (withEngine) and shows its
// result with show; the call's error is said as cliError says it.
func engineCall[T any](ctx context.Context, c *cli, call func(a *app.App) (T, error), show func(v T) error) error {
	return c.withEngine(ctx, func(a *app.App) error {
		v, err := call(a)
		if err != nil {
			return cliError(err)
		}
		return show(v)
	})
}

// The commands. Each declares its flags (beside the common ones) and returns its body.

func serveCommand(*flag.FlagSet) func(context.Context, *cli) error {
	return func(ctx context.Context, c *cli) error { return serve(ctx, c.cfg, c.stderr) }
}

func reconcileCommand(*flag.FlagSet) func(context.Context, *cli) error {
	return func(ctx context.Context, c *cli) error {
		return c.withEngine(ctx, func(a *app.App) error {
			n, err := a.Payments.Reconcile(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%d payment attempt(s) looked at\n", n)
			return nil
		})
	}
}

func bootstrapCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	org := fs.String("organization", "", "the organization's name (required)")
	platform := fs.Bool("platform", false, "grant the platform capability to the sandbox merchant account (it may create sub-merchants)")
	asJSON := fs.Bool("json", false, "print JSON: {organizationId, apiKey, apiKeyId, merchantAccounts: {sandbox, production}}")
	return func(ctx context.Context, c *cli) error {
		if *org == "" {
			return errors.New("bootstrap needs --organization NAME")
		}
		return c.withEngine(ctx, func(a *app.App) error {
			res, err := a.Merchants.Bootstrap(ctx, *org, *platform)
			if err != nil {
				return err
			}
			out := map[string]any{"organizationId": res.OrganizationID, "apiKey": res.APIKey, "apiKeyId": res.APIKeyID, "merchantAccounts": res.MerchantAccounts}
			return printOut(c.stdout, *asJSON, out, fmt.Sprintf("organization %s\napi key %s (shown once)\nsandbox merchant account %s\nproduction merchant account %s",
				res.OrganizationID, res.APIKey, res.MerchantAccounts["sandbox"], res.MerchantAccounts["production"]))
		})
	}
}

func apikeyCreateCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	orgID := fs.String("organization-id", "", "the organization's ID, org_... (required)")
	envs := fs.String("environments", "sandbox,production", "comma-separated environments the key may act in")
	asJSON := fs.Bool("json", false, "print JSON: {apiKeyId, apiKey, environments}")
	return func(ctx context.Context, c *cli) error {
		if *orgID == "" {
			return errors.New("apikey create needs --organization-id ID")
		}
		var list []remit.Environment
		for _, e := range strings.Split(*envs, ",") {
			if e = strings.TrimSpace(e); e != "" {
				list = append(list, remit.Environment(e))
			}
		}
		return c.withEngine(ctx, func(a *app.App) error {
			id, key, err := a.Access.CreateAPIKey(ctx, *orgID, list)
			if err != nil {
				return cliError(err)
			}
			return printOut(c.stdout, *asJSON, map[string]any{"apiKeyId": id, "apiKey": key, "environments": list},
				fmt.Sprintf("api key %s: %s (shown once)", id, key))
		})
	}
}

func apikeyRevokeCommand(*flag.FlagSet) func(context.Context, *cli) error {
	return func(ctx context.Context, c *cli) error {
		if len(c.args) != 1 {
			return errors.New("usage: remit apikey revoke APIKEYID")
		}
		return c.withEngine(ctx, func(a *app.App) error {
			if err := a.Access.RevokeAPIKey(ctx, c.args[0]); err != nil {
				return cliError(err)
			}
			fmt.Fprintln(c.stdout, "revoked", c.args[0])
			return nil
		})
	}
}

func merchantDecideCommand(*flag.FlagSet) func(context.Context, *cli) error {
	return func(ctx context.Context, c *cli) error {
		if len(c.args) != 2 {
			return errors.New("usage: remit merchant decide MERCHANT_ACCOUNT_ID approve|reject|request-update")
		}
		decide := func(a *app.App) (remit.MerchantStatus, error) {
			return a.Merchants.DecideMerchant(ctx, c.args[0], c.args[1])
		}
		return engineCall(ctx, c, decide, func(status remit.MerchantStatus) error {
			fmt.Fprintf(c.stdout, "merchant account %s is now %s\n", c.args[0], status)
			return nil
		})
	}
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
	// Traces, when the OTEL_* variables ask for them (docs/operations.md, "Traces"); the spans not
	// yet sent are flushed on the way out.
	stopTracing, err := telemetry.Setup(ctx)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("tracing: spans not sent at shutdown", "err", err.Error())
		}
	}()
	if telemetry.On() {
		log.Info("tracing on: spans are exported over OTLP/HTTP (OTEL_* variables)")
	}
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
