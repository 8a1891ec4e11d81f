package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/store"
)

// The billing day (docs/benchmarks.md, "The billing day"): N subscriptions fall due at one instant
// and one sandbox clock advance renews them all: each renewal job makes the period's draft, whose
// automatic finalization an hour later charges the customer's card through the sandbox processor
// (its latency set to -billing-day-latency, 50 ms by default, on a server started for this
// scenario). The harness measures from the advance until every renewal invoice is paid.

// jobRenew is the engine's renewal job kind.
const jobRenew = remit.JobSubscriptionRenew

// BillingDay is the billing-day scenario's measurement.
type BillingDay struct {
	Subscriptions  int     `json:"subscriptions"`
	Latency        string  `json:"sandboxProcessorLatency"`
	SeedSeconds    float64 `json:"seedSeconds"`
	RenewedSeconds float64 `json:"secondsUntilAllRenewed"` // every renewal job ran (drafts made)
	Seconds        float64 `json:"secondsUntilAllPaid"`    // every renewal invoice finalized and paid
	RenewalsPerSec float64 `json:"renewalsPerSecond"`      // Subscriptions / Seconds
	TargetSeconds  float64 `json:"targetSeconds"`
	Met            bool    `json:"met"`
	Unfinished     int     `json:"unfinished,omitempty"` // renewal invoices not paid when the harness gave up
	FailedJobs     int     `json:"failedJobs"`
	ServerCores    float64 `json:"serverCores"`
	PeakRSSMiB     float64 `json:"peakRssMiB"`
	Profile        string  `json:"profile,omitempty"`
}

// billingDayTarget is the brief's target: 100,000 renewals in under 3 minutes on SQLite and 6 on
// PostgreSQL, scaled to the run's N.
func billingDayTarget(storeName string, n int) time.Duration {
	per := 3 * time.Minute
	if storeName == "postgres" {
		per = 6 * time.Minute
	}
	return time.Duration(float64(per) * float64(n) / 100000)
}

// seedBillingDay adds n customers to the fixture's merchant account, each with an address, a
// charge_automatically billing account with a default pm_card_visa and one monthly subscription of
// the seed's basic plan whose first period ends at due, with its renewal job due then. Rows go in
// through the store's tables in multi-row INSERTs, as the rest of the seed.
func seedBillingDay(ctx context.Context, dbURL string, fx *Fixture, n int, due time.Time, log io.Writer) error {
	return seedOwn(ctx, dbURL, func(s *seeder) error {
		us := remit.Micros
		now := time.Now().UTC().Truncate(time.Microsecond)
		start := due.AddDate(0, -1, 0)
		if !remit.AddInterval(start, "month", 1).Equal(due) {
			return fmt.Errorf("billing day: %s is not a month after %s", due, start)
		}
		region := "CA"
		addr := jsonText(remit.Address{Line1: "1 Market St", City: "San Francisco", Region: &region, PostalCode: "94105", Country: "US"})
		items := basicPlanItems()
		customers := s.table("customers", "merchant_account_id", "id", "external_id", "name", "email", "address", "tax_exempt", "metadata", "created_at")
		accounts := s.table("billing_accounts", "merchant_account_id", "id", "customer_id", "currency", "collection_method", "tax_address",
			"default_payment_method_id", "metadata", "created_at", "updated_at")
		methods := s.table("payment_methods", "merchant_account_id", "id", "customer_id", "billing_account_id", "type", "brand", "last4",
			"test_card", "created_at")
		subs := s.table("subscriptions", subscriptionColumns...)
		jobs := s.table("jobs", "id", "merchant_account_id", "kind", "due_at", "payload", "created_at")
		tables := []*bulk{customers, accounts, methods, subs, jobs}
		began := time.Now()
		for i := range n {
			mid, cid, ba, pm, sub := fx.MerchantID, remit.NewID("cus"), remit.NewID("ba"), remit.NewID("pm"), remit.NewID("sub")
			for _, add := range []func() error{
				func() error {
					return customers.add(mid, cid, fmt.Sprintf("day-%07d", i), fmt.Sprintf("Subscriber %d", i), fmt.Sprintf("subscriber%d@example.com", i),
						addr, false, "{}", us(start))
				},
				func() error {
					return accounts.add(mid, ba, cid, "USD", remit.ChargeAutomatically, nil, pm, "{}", us(start), us(start))
				},
				func() error { return methods.add(mid, pm, cid, ba, "card", "visa", "4242", "pm_card_visa", us(start)) },
				func() error {
					return subs.add(mid, sub, remit.SubscriptionActive, cid, ba, "USD", items, "month", 1, us(start), 1, us(start), us(due),
						"[]", "{}", us(start), us(start), "[]")
				},
				func() error {
					return jobs.add(remit.NewID("job"), mid, jobRenew, us(due), jsonText(map[string]any{"subscriptionId": sub, "periodEnd": due}), us(now))
				},
			} {
				if err := add(); err != nil {
					return err
				}
			}
			if err := s.flushEvery(tables, i, n); err != nil {
				return err
			}
			if i > 0 && i%20000 == 0 {
				fmt.Fprintf(log, "  seeded %d/%d subscriptions (%s)\n", i, n, time.Since(began).Round(time.Second))
			}
		}
		return nil
	})
}

// runBillingDay seeds the billing day into the store, starts a server with the sandbox's latency,
// advances the merchant clock past every renewal and its draft's automatic finalization, and
// measures until every renewal invoice is paid (or the deadline: 4 × the target, at least 10
// minutes).
func runBillingDay(ctx context.Context, o options, bin, dbURL, tmp string, fx *Fixture, out io.Writer) (BillingDay, error) {
	res := BillingDay{Subscriptions: o.billingDay, Latency: o.billingLatency.String()}
	due := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond) // not due before the advance
	fmt.Fprintf(out, "billing day: seeding %d subscriptions due at %s ...\n", o.billingDay, due.Format(time.RFC3339))
	began := time.Now()
	if err := seedBillingDay(ctx, dbURL, fx, o.billingDay, due, out); err != nil {
		return res, fmt.Errorf("billing day seed: %w", err)
	}
	res.SeedSeconds = time.Since(began).Seconds()
	so := o
	so.serverEnv = append(append(envList{}, o.serverEnv...), "REMIT_SANDBOX_PROCESSOR_LATENCY="+o.billingLatency.String())
	srv, err := startFree(ctx, bin, dbURL, tmp, so)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer db.Close()
	counts := func(q string) int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, q, fx.MerchantID, remit.Micros(due)).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	const renewedQ = `SELECT COUNT(*) FROM subscriptions WHERE merchant_account_id = $1 AND current_period_start = $2`
	const paidQ = `SELECT COUNT(*) FROM invoices WHERE merchant_account_id = $1 AND period_start = $2 AND status = 'paid'`

	target := billingDayTarget(o.store, o.billingDay)
	res.TargetSeconds = target.Seconds()
	fmt.Fprintf(out, "billing day: %d subscriptions seeded in %s; sandbox processor at %s; advancing the clock past %s (target < %s) ...\n",
		o.billingDay, time.Since(began).Round(time.Second), o.billingLatency, due.Format(time.RFC3339), target.Round(time.Second))
	srv.resetPeakRSS()
	cpu0 := srv.cpuTime()
	var profDone chan string
	if o.profileDir != "" {
		profDone = make(chan string, 1)
		go func() { profDone <- srv.profile(o.profileDir, "billing-day", 30*time.Second) }()
	}
	start := time.Now()
	go advanceClock(srv.base, fx, due.Add(time.Hour+time.Minute))
	deadline := start.Add(max(4*target, 10*time.Minute))
	lastLog := start
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		renewed, paid := counts(renewedQ), counts(paidQ)
		if res.RenewedSeconds == 0 && renewed == o.billingDay {
			res.RenewedSeconds = time.Since(start).Seconds()
		}
		if paid == o.billingDay {
			res.Seconds = time.Since(start).Seconds()
			break
		}
		if time.Now().After(deadline) {
			res.Seconds, res.Unfinished = time.Since(start).Seconds(), o.billingDay-paid
			break
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			fmt.Fprintf(out, "    %s: %d renewed, %d paid\n", time.Since(start).Round(time.Second), renewed, paid)
		}
		time.Sleep(250 * time.Millisecond)
	}
	res.ServerCores = srv.coresSince(cpu0, res.Seconds)
	res.PeakRSSMiB = srv.peakRSS()
	res.RenewalsPerSec = float64(o.billingDay-res.Unfinished) / res.Seconds
	res.Met = res.Unfinished == 0 && res.Seconds < target.Seconds()
	res.FailedJobs = failedJobs(ctx, db, fx.MerchantID)
	if profDone != nil {
		res.Profile = <-profDone
	}
	return res, nil
}

// advanceClock moves the merchant account's sandbox clock to `to`; the server runs what fell due
// (the answer, which comes once it all ran, is not waited for: the harness watches the store).
func advanceClock(base string, fx *Fixture, to time.Time) {
	body, _ := json.Marshal(map[string]string{"to": to.Format(time.RFC3339Nano)})
	req, err := http.NewRequest(http.MethodPost, base+"/v1/test-helpers/clock/advance?environment=sandbox&merchantAccountId="+
		url.QueryEscape(fx.MerchantID), strings.NewReader(string(body)))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+fx.APIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{}).Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

func printBillingDay(out io.Writer, storeName string, b *BillingDay) {
	met := "missed"
	if b.Met {
		met = "met"
	}
	fmt.Fprintf(out, "\n(k) billing-day on %s: %d renewals, sandbox processor at %s: all renewed (drafts) after %.1f s, all finalized and paid after %.1f s: %.0f renewals/s; target < %.0f s: %s; %d jobs failed, %d unfinished; server %.2f cores, peak RSS %.0f MiB\n",
		storeName, b.Subscriptions, b.Latency, b.RenewedSeconds, b.Seconds, b.RenewalsPerSec, b.TargetSeconds, met, b.FailedJobs, b.Unfinished, b.ServerCores, b.PeakRSSMiB)
	if b.Profile != "" {
		fmt.Fprintf(out, "    profile (the first 30 s): %s\n", b.Profile)
	}
}
