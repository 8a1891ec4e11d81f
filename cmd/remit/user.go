package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
)

// `remit user create|list|disable`: the dashboard's operators (docs/dashboard.md).

func userCreateCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	orgID := fs.String("organization-id", "", "the organization's ID, org_... (required)")
	email := fs.String("email", "", "the operator's e-mail address (required)")
	role := fs.String("role", "", "admin (acts) or viewer (reads) (required)")
	asJSON := fs.Bool("json", false, "print JSON: {operatorId, email, role, setPasswordUrl}")
	return func(ctx context.Context, c *cli) error {
		if *orgID == "" || *email == "" || *role == "" {
			return errors.New("user create needs --organization-id ID --email E --role admin|viewer")
		}
		return c.withEngine(ctx, func(a *app.App) error {
			op, link, err := a.Operators.CreateOperator(ctx, *orgID, *email, remit.OperatorRole(*role))
			if err != nil {
				return cliError(err)
			}
			return printOut(c.stdout, *asJSON, map[string]any{"operatorId": op.ID, "email": op.Email, "role": op.Role, "setPasswordUrl": link},
				fmt.Sprintf("operator %s (%s, %s)\nset-password link, once, within %s:\n%s", op.ID, op.Email, op.Role, remit.OperatorLinkTTL, link))
		})
	}
}

func userListCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	orgID := fs.String("organization-id", "", "the organization's ID, org_... (required)")
	asJSON := fs.Bool("json", false, "print JSON: [{operatorId, email, role, state}]")
	return func(ctx context.Context, c *cli) error {
		if *orgID == "" {
			return errors.New("user list needs --organization-id ID")
		}
		list := func(a *app.App) ([]remit.Operator, error) { return a.Operators.ListOperators(ctx, *orgID) }
		return engineCall(ctx, c, list, func(ops []remit.Operator) error {
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
			return printOut(c.stdout, *asJSON, rows, strings.TrimSuffix(text.String(), "\n"))
		})
	}
}

func userDisableCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	email := fs.String("email", "", "the operator's e-mail address (required)")
	return func(ctx context.Context, c *cli) error {
		if *email == "" {
			return errors.New("user disable needs --email E")
		}
		disable := func(a *app.App) (remit.Operator, error) { return a.Operators.DisableOperator(ctx, *email) }
		return engineCall(ctx, c, disable, func(op remit.Operator) error {
			fmt.Fprintf(c.stdout, "disabled %s (%s); their sessions end at their next request\n", op.Email, op.ID)
			return nil
		})
	}
}
