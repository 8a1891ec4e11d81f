package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// `remit verify` checks every merchant account of the store (or one) while serve runs on it, and
// exits non-zero naming each violation; --json prints one JSON document.
func TestVerifyCommand(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		for _, id := range []string{"a", "b", "c"} {
			e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
		}
		verify := func(args ...string) (string, error) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"verify", "--database-url", e.DBURL}, args...), &out, &errb)
			return out.String(), err
		}
		out, err := verify()
		if err != nil || !strings.Contains(out, e.Tenant.Sandbox+": ok") || !strings.Contains(out, "0 with violations") {
			t.Fatalf("clean store: %v\n%s", err, out)
		}
		var evID string
		if err := e.App.DB.ChainBeforeRead(context.Background(), e.Tenant.Sandbox); err != nil { // PostgreSQL chains after commit, in the background
			t.Fatal(err)
		}
		if err := e.App.DB.SQL().QueryRow(`SELECT id FROM events WHERE merchant_account_id = $1 AND sequence = 2`, e.Tenant.Sandbox).Scan(&evID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.DB.SQL().Exec(`UPDATE events SET data = REPLACE(data, 'Customer b', 'Customer B') WHERE id = $1`, evID); err != nil {
			t.Fatal(err)
		}
		out, err = verify()
		if err == nil || !strings.Contains(out, e.Tenant.Sandbox+": VIOLATIONS") || !strings.Contains(out, "event "+evID+": stored hash") ||
			!strings.Contains(out, e.Tenant.Production+": ok") {
			t.Fatalf("tampered store: %v\n%s", err, out)
		}
		out, err = verify("--json", "--merchant-account", e.Tenant.Sandbox)
		var doc struct {
			Verifications []remit.Verification
			OK            bool
		}
		if jerr := json.Unmarshal([]byte(out), &doc); jerr != nil || err == nil || doc.OK || len(doc.Verifications) != 1 {
			t.Fatalf("--json: %v %v\n%s", err, jerr, out)
		}
		if v := doc.Verifications[0]; v.MerchantAccountID != e.Tenant.Sandbox || v.Checks[0].Violations[0].ID != evID {
			t.Errorf("--json verification: %+v", v)
		}
		if _, err := verify("--merchant-account", e.Tenant.Production); err != nil {
			t.Errorf("the other account: %v", err)
		}
		if _, err := verify("--merchant-account", "ma_nope"); err == nil || !strings.Contains(err.Error(), "ma_nope") {
			t.Errorf("unknown account: %v", err)
		}
	})
}
