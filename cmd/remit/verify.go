package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/app"
)

func verifyCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	account := fs.String("merchant-account", "", "verify only this merchant account (ma_...)")
	asJSON := fs.Bool("json", false, `print exactly one JSON document: {"verifications": [...], "ok": bool}, with "error" when it could not verify`)
	return func(ctx context.Context, c *cli) error {
		if !*asJSON {
			return c.withEngine(ctx, func(a *app.App) error { return verifyText(ctx, a, *account, c.stdout) })
		}
		doc := verifyDocument{Verifications: []remit.Verification{}}
		err := c.withEngine(ctx, func(a *app.App) error {
			return a.Verification.VerifyAll(ctx, *account, func(v remit.Verification) error {
				doc.Verifications = append(doc.Verifications, v)
				return nil
			})
		})
		if err != nil {
			err = cliError(err)
		} else {
			err = verdict(doc.Verifications)
		}
		doc.OK = err == nil
		if err != nil {
			doc.Error = err.Error()
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(doc); jerr != nil {
			return jerr
		}
		return err
	}
}

// verifyDocument is what `remit verify --json` prints, once, whatever happened.
type verifyDocument struct {
	Verifications []remit.Verification `json:"verifications"`
	OK            bool                 `json:"ok"`
	Error         string               `json:"error,omitempty"` // why it failed: the violations counted, or why it could not verify
}

// verdict is nil when no merchant account has a violation, else the error naming how many.
func verdict(vs []remit.Verification) error {
	failed, violations := 0, 0
	for _, v := range vs {
		if !v.OK {
			failed++
		}
		for _, c := range v.Checks {
			violations += c.ViolationCount
		}
	}
	if failed > 0 {
		return fmt.Errorf("verification failed: %d violation(s) in %d merchant account(s)", violations, failed)
	}
	return nil
}

// verifyText runs the money checks (docs/verification.md) and prints each merchant account's
// result as it is ready. Any violation makes it return an error (exit status 1).
func verifyText(ctx context.Context, a *app.App, account string, stdout io.Writer) error {
	var all []remit.Verification
	err := a.Verification.VerifyAll(ctx, account, func(v remit.Verification) error {
		all = append(all, remit.Verification{OK: v.OK, Checks: v.Checks})
		printVerification(stdout, v)
		return nil
	})
	if err != nil {
		return cliError(err)
	}
	failed := 0
	for _, v := range all {
		if !v.OK {
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d merchant account(s) verified, %d with violations\n", len(all), failed)
	return verdict(all)
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
