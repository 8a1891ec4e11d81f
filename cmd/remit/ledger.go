package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/remit-billing/remit/app"
)

// ledgerBackfillCommand is `remit ledger backfill` (docs/ledger.md "Backfill").
func ledgerBackfillCommand(fs *flag.FlagSet) func(context.Context, *cli) error {
	account := fs.String("merchant-account", "", "backfill only this merchant account (ma_...)")
	asJSON := fs.Bool("json", false, `print one JSON document: {"accounts": [...], "seconds": n}`)
	return func(ctx context.Context, c *cli) error {
		start := time.Now()
		doc := struct {
			Accounts []app.BackfillResult `json:"accounts"`
			Seconds  float64              `json:"seconds"`
		}{Accounts: []app.BackfillResult{}}
		err := c.withEngine(ctx, func(a *app.App) error {
			return a.Journal.Backfill(ctx, *account, func(r app.BackfillResult) error {
				doc.Accounts = append(doc.Accounts, r)
				if !*asJSON {
					fmt.Fprintf(c.stdout, "%s: %d movements posted, %d already posted\n", r.MerchantAccountID, r.Events, r.Skipped)
				}
				return nil
			})
		})
		if err != nil {
			return cliError(err)
		}
		doc.Seconds = time.Since(start).Seconds()
		if !*asJSON {
			fmt.Fprintf(c.stdout, "backfill done in %.1fs; run remit verify\n", doc.Seconds)
			return nil
		}
		return json.NewEncoder(c.stdout).Encode(doc)
	}
}
