package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
	"github.com/remit-billing/remit/wire"
)

// userCommand runs `remit user create|list|disable`: the dashboard's operators (docs/dashboard.md).
func userCommand(ctx context.Context, cfgp *wire.Config, fs *flag.FlagSet, rest []string, stdout, stderr io.Writer) error {
	const use = "usage: remit user create --organization-id ID --email E --role admin|viewer | user list --organization-id ID | user disable --email E"
	if len(rest) == 0 {
		return errors.New(use)
	}
	sub, rest := rest[0], rest[1:]
	orgID := fs.String("organization-id", "", "organization ID")
	email := fs.String("email", "", "the operator's e-mail address")
	role := fs.String("role", "", "admin or viewer")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	cfg := *cfgp // after parsing: the common flags (--database-url, --public-url) are in it
	switch sub {
	case "create":
		if *orgID == "" || *email == "" || *role == "" {
			return errors.New("user create needs --organization-id ID --email E --role admin|viewer")
		}
		return withEngine(ctx, cfg, stderr, func(a *app.App) error {
			op, link, err := a.Operators.CreateOperator(ctx, *orgID, *email, remit.OperatorRole(*role))
			if err != nil {
				return cliError(err)
			}
			return printOut(stdout, *asJSON, map[string]any{"operatorId": op.ID, "email": op.Email, "role": op.Role, "setPasswordUrl": link},
				fmt.Sprintf("operator %s (%s, %s)\nset-password link, once, within %s:\n%s", op.ID, op.Email, op.Role, remit.OperatorLinkTTL, link))
		})
	case "list":
		if *orgID == "" {
			return errors.New("user list needs --organization-id ID")
		}
		return withEngine(ctx, cfg, stderr, func(a *app.App) error {
			ops, err := a.Operators.ListOperators(ctx, *orgID)
			if err != nil {
				return cliError(err)
			}
			rows := make([]map[string]any, 0, len(ops))
			var text strings.Builder
			for _, o := range ops {
				state := "active"
				switch {
				case o.DisabledAt != nil:
					state = "disabled " + o.DisabledAt.Format(time.RFC3339)
				case o.PasswordHash == "":
					state = "password not set"
				}
				rows = append(rows, map[string]any{"operatorId": o.ID, "email": o.Email, "role": o.Role, "state": state})
				fmt.Fprintf(&text, "%s  %s  %s  %s\n", o.ID, o.Email, o.Role, state)
			}
			return printOut(stdout, *asJSON, rows, strings.TrimSuffix(text.String(), "\n"))
		})
	case "disable":
		if *email == "" {
			return errors.New("user disable needs --email E")
		}
		return withEngine(ctx, cfg, stderr, func(a *app.App) error {
			op, err := a.Operators.DisableOperator(ctx, *email)
			if err != nil {
				return cliError(err)
			}
			fmt.Fprintf(stdout, "disabled %s (%s); their sessions end at their next request\n", op.Email, op.ID)
			return nil
		})
	}
	return fmt.Errorf("unknown user command %q; %s", sub, use)
}
