package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The price migration (docs/benchmarks.md, "The price migration"): N active monthly
// subscriptions of the seed's basic plan, seeded through the store's tables, are moved to a new
// price with POST /v1/price-migrations effective next_renewal; the harness measures from the 202
// until GET /v1/price-migrations/{id} answers completed, and checks the counts and the store.

// priceNext is the price the scenario migrates to: the basic plan's currency and interval.
const priceNext = "price_load_basic_2027"

// PriceMigrationRun is the price-migration scenario's measurement.
type PriceMigrationRun struct {
	Subscriptions int     `json:"subscriptions"`
	SeedSeconds   float64 `json:"seedSeconds"`
	Seconds       float64 `json:"secondsUntilCompleted"`
	PerSecond     float64 `json:"subscriptionsPerSecond"`
	TargetSeconds float64 `json:"targetSeconds"`
	Met           bool    `json:"met"`
	Migrated      int     `json:"migrated"`
	Skipped       int     `json:"skipped"`
	Failed        int     `json:"failed"`
	StoreMigrated int     `json:"storeRowsMigrated"` // price_migration_items rows migrated, read from the store
	FailedJobs    int     `json:"failedJobs"`
	ServerCores   float64 `json:"serverCores"`
	PeakRSSMiB    float64 `json:"peakRssMiB"`
}

// priceMigrationTarget is the brief's target, 100,000 subscriptions in under 2 minutes on SQLite,
// scaled to the run's N (the same figure is reported against on PostgreSQL, which has none).
func priceMigrationTarget(n int) time.Duration {
	return time.Duration(float64(2*time.Minute) * float64(n) / 100000)
}

// seedPriceMigration adds n customers to the fixture's merchant account, each with a send_invoice
// billing account and one active monthly subscription of the basic plan, in multi-row INSERTs.
func seedPriceMigration(ctx context.Context, dbURL string, fx *Fixture, n int, log io.Writer) error {
	return seedOwn(ctx, dbURL, func(s *seeder) error {
		us := remit.Micros
		start := time.Now().UTC().Truncate(time.Microsecond)
		end := remit.AddInterval(start, "month", 1)
		items := basicPlanItems()
		customers := s.table("customers", "merchant_account_id", "id", "external_id", "name", "email", "tax_exempt", "metadata", "created_at")
		accounts := s.table("billing_accounts", "merchant_account_id", "id", "customer_id", "currency", "collection_method", "metadata", "created_at", "updated_at")
		subs := s.table("subscriptions", subscriptionColumns...)
		tables := []*bulk{customers, accounts, subs}
		mid := fx.MerchantID
		for i := range n {
			cid, ba := remit.NewID("cus"), remit.NewID("ba")
			if err := customers.add(mid, cid, fmt.Sprintf("pmig-%07d", i), fmt.Sprintf("Subscriber %d", i), fmt.Sprintf("pmig%d@example.com", i),
				false, "{}", us(start)); err != nil {
				return err
			}
			if err := accounts.add(mid, ba, cid, "USD", remit.SendInvoice, "{}", us(start), us(start)); err != nil {
				return err
			}
			if err := subs.add(mid, remit.NewID("sub"), remit.SubscriptionActive, cid, ba, "USD", items, "month", 1, us(start), 1, us(start), us(end),
				"[]", "{}", us(start), us(start), "[]"); err != nil {
				return err
			}
			if err := s.flushEvery(tables, i, n); err != nil {
				return err
			}
			if i > 0 && i%50000 == 0 {
				fmt.Fprintf(log, "  seeded %d/%d subscriptions\n", i, n)
			}
		}
		return nil
	})
}

// runPriceMigration seeds the subscriptions, starts a server, creates the new price and the
// migration, and measures until the migration completed (or 4 × the target, at least 10 minutes).
func runPriceMigration(ctx context.Context, o options, bin, dbURL, tmp string, fx *Fixture, out io.Writer) (PriceMigrationRun, error) {
	res := PriceMigrationRun{Subscriptions: o.migrations}
	fmt.Fprintf(out, "price migration: seeding %d subscriptions ...\n", o.migrations)
	began := time.Now()
	if err := seedPriceMigration(ctx, dbURL, fx, o.migrations, out); err != nil {
		return res, fmt.Errorf("price migration seed: %w", err)
	}
	res.SeedSeconds = time.Since(began).Seconds()
	srv, err := startFree(ctx, bin, dbURL, tmp, o)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	if st, body := apiCall(srv.base, fx, "POST", "/v1/prices", map[string]any{"priceId": priceNext, "productId": "basic", "name": "Basic plan 2027",
		"priceType": "fixed_recurring", "currency": "USD", "billingInterval": "month", "unitAmount": 2400}); st != 200 {
		return res, fmt.Errorf("create %s: %d %v", priceNext, st, body)
	}
	target := priceMigrationTarget(o.migrations)
	res.TargetSeconds = target.Seconds()
	fmt.Fprintf(out, "price migration: %d subscriptions seeded in %.1f s; migrating next_renewal (target < %s) ...\n",
		o.migrations, res.SeedSeconds, target.Round(time.Second))
	srv.resetPeakRSS()
	cpu0 := srv.cpuTime()
	start := time.Now()
	st, pm := apiCall(srv.base, fx, "POST", "/v1/price-migrations", map[string]any{"fromPriceId": priceBasic, "toPriceId": priceNext, "effective": "next_renewal"})
	if st != 202 {
		return res, fmt.Errorf("create the migration: %d %v", st, pm)
	}
	id, _ := pm["migrationId"].(string)
	if err := waitMigration(ctx, srv.base, fx, id, start.Add(max(4*target, 10*time.Minute)), &res, out); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.ServerCores = srv.coresSince(cpu0, res.Seconds)
	res.PeakRSSMiB = srv.peakRSS()
	res.PerSecond = float64(res.Migrated) / res.Seconds
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer db.Close()
	_ = db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM price_migration_items WHERE merchant_account_id = $1 AND migration_id = $2
		AND status = 'migrated'`, fx.MerchantID, id).Scan(&res.StoreMigrated)
	res.FailedJobs = failedJobs(ctx, db, fx.MerchantID)
	res.Met = res.Migrated == o.migrations && res.StoreMigrated == o.migrations && res.Seconds < target.Seconds()
	return res, nil
}

// waitMigration polls the migration until it is no longer running (or the deadline), with its
// counts in res.
func waitMigration(ctx context.Context, base string, fx *Fixture, id string, deadline time.Time, res *PriceMigrationRun, out io.Writer) error {
	lastLog := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, pm := apiCall(base, fx, "GET", "/v1/price-migrations/"+id, nil)
		if st != 200 {
			return fmt.Errorf("GET the migration: %d %v", st, pm)
		}
		n := func(k string) int { f, _ := pm[k].(float64); return int(f) }
		res.Migrated, res.Skipped, res.Failed = n("migrated"), n("skipped"), n("failed")
		if pm["status"] != "running" || time.Now().After(deadline) {
			return nil
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			fmt.Fprintf(out, "    %d migrated\n", res.Migrated)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// apiCall sends one request to the server as the fixture's merchant account and answers the
// status and the envelope's data (or the error).
func apiCall(base string, fx *Fixture, method, path string, body any) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path+"?environment=sandbox&merchantAccountId="+url.QueryEscape(fx.MerchantID), rd)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+fx.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	defer res.Body.Close()
	var env struct {
		Data  map[string]any `json:"data"`
		Error map[string]any `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	if env.Data == nil {
		return res.StatusCode, env.Error
	}
	return res.StatusCode, env.Data
}

func printPriceMigration(out io.Writer, storeName string, r *PriceMigrationRun) {
	met := "missed"
	if r.Met {
		met = "met"
	}
	fmt.Fprintf(out, "\n(m) price-migration on %s: %d subscriptions next_renewal completed after %.1f s: %.0f subscriptions/s; target < %.0f s: %s; migrated %d, skipped %d, failed %d (store: %d rows migrated); %d jobs failed; server %.2f cores, peak RSS %.0f MiB\n",
		storeName, r.Subscriptions, r.Seconds, r.PerSecond, r.TargetSeconds, met, r.Migrated, r.Skipped, r.Failed, r.StoreMigrated, r.FailedJobs,
		r.ServerCores, r.PeakRSSMiB)
}
