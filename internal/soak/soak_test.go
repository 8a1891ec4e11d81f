package soak_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/soak"
	"github.com/remit-billing/remit/internal/testkit"
)

// TestSoak runs the randomized soak against a real server on each store (SQLite; PostgreSQL when
// REMIT_TEST_POSTGRES_URL is set). The short form runs 45 s of operations per store; the
// environment selects the long form (docs/reliability.md, "The randomized soak"):
// REMIT_SOAK_DURATION (e.g. 10m), REMIT_SOAK_SEED, REMIT_SOAK_CLIENTS, REMIT_SOAK_CUSTOMERS,
// REMIT_SOAK_OPS.
func TestSoak(t *testing.T) {
	base := configFromEnv(t)
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		cfg := base
		cfg.Store = string(e.Store)
		cfg.Transport = &soak.HTTPTransport{BaseURL: e.Server.URL, APIKey: e.Tenant.APIKey, MerchantAccountID: e.Tenant.Sandbox,
			Client: e.Server.Client(), Observe: e.CheckContract}
		cfg.Logf = t.Logf
		cfg.VerifyStore = func(ctx context.Context) (bool, string, error) { return verifyStore(ctx, e) }
		cfg.ExplainServerError = func(id string) string { return explain(e.Logs.String(), id) }
		cfg.ServerErrors = func() []string { return serverErrors(e.Logs.String()) }
		t.Logf("soak on %s: seed %d (REMIT_SOAK_SEED=%d replays the clients' choices), %s of operations", e.Store, cfg.Seed, cfg.Seed, cfg.Duration)
		r := soak.Run(context.Background(), cfg)
		t.Log("\n" + r.Figures())
		if !r.OK() {
			t.Errorf("the soak found %d kinds of defect:%s", len(r.Findings), r.Text())
		}
	})
}

// configFromEnv reads the long form's settings; without them the short form.
func configFromEnv(t *testing.T) soak.Config {
	cfg := soak.Config{Seed: time.Now().UnixNano() % 1_000_000, Clients: 4, Duration: 45 * time.Second, Customers: 20}
	num := func(name string) int64 {
		v := os.Getenv(name)
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		return n
	}
	if v := os.Getenv("REMIT_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("REMIT_SOAK_DURATION=%q: %v", v, err)
		}
		cfg.Duration = d
	}
	if _, ok := os.LookupEnv("REMIT_SOAK_SEED"); ok {
		cfg.Seed = num("REMIT_SOAK_SEED")
	}
	if n := num("REMIT_SOAK_CLIENTS"); n > 0 {
		cfg.Clients = int(n)
	}
	if n := num("REMIT_SOAK_CUSTOMERS"); n > 0 {
		cfg.Customers = int(n)
	}
	if n := num("REMIT_SOAK_OPS"); n > 0 {
		cfg.Ops = int(n)
	}
	return cfg
}

// verifyStore runs the checks of `remit verify` (the same engine function the command calls) over
// every merchant account of the store.
func verifyStore(ctx context.Context, e *testkit.Env) (bool, string, error) {
	ok := true
	var b strings.Builder
	err := e.App.Verification.VerifyAll(ctx, "", func(v remit.Verification) error {
		for _, c := range v.Checks {
			if !c.OK {
				ok = false
				fmt.Fprintf(&b, "  %s %s: %d violations, first %+v\n", v.MerchantAccountID, c.Name, c.ViolationCount, c.Violations[0])
			}
		}
		return nil
	})
	return ok, b.String(), err
}

// logLine is what the soak reads of the server's JSON log lines.
type logLine struct {
	Level     string `json:"level"`
	Msg       string `json:"msg"`
	RequestID string `json:"requestId"`
	Err       string `json:"err"`
	Retries   *bool  `json:"retries"` // a failed job's attempt that will be tried again
}

// explain answers what the server logged about a failed request.
func explain(logs, requestID string) string {
	for _, l := range strings.Split(logs, "\n") {
		if requestID == "" || !strings.Contains(l, requestID) {
			continue
		}
		var ll logLine
		if json.Unmarshal([]byte(l), &ll) == nil && ll.Level == "ERROR" {
			return ll.Msg + ": " + ll.Err
		}
	}
	return "(nothing logged)"
}

// serverErrors answers the server's error lines but those of failed requests (each 5xx is a
// finding of its own) and the failed attempts of jobs that will be tried again (a server that
// retries failed jobs logs "retries": true; their last attempt is logged with false): failed jobs
// and follow-ups among them.
func serverErrors(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		var ll logLine
		if json.Unmarshal([]byte(l), &ll) != nil || ll.Level != "ERROR" || ll.Msg == "request failed" || (ll.Retries != nil && *ll.Retries) {
			continue
		}
		out = append(out, ll.Msg+": "+ll.Err)
	}
	return out
}
