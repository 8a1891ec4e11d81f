package httpapi_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// docs/verify-chain.py, the auditor's script of docs/verification.md, recomputes a real store's
// chain through the API without Remit's code — tax rates (non-integer numbers), names with accents
// and every kind of event included — and names the event changed behind Remit's back.
func TestVerifyChainScript(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed in CI to run docs/verify-chain.py")
		}
		t.Skip("python3 not installed")
	}
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		verificationWorkload(t, e)
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "zoe", "name": "Zoë \"Ünïcode\" 😀 <&>",
			"metadata": map[string]any{"é": "\t\r\n\u2028", "z": "/"}})
		// Control characters the API now refuses (docs/security.md, "Input characters") may still
		// be in events stored before: written through the engine, as an older Remit did.
		ctx := context.Background()
		m, err := e.App.DB.Read(ctx).GetMerchantAccount(ctx, e.Tenant.Sandbox, store.Unlocked)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.Catalog.CreateCustomer(ctx, m, remit.Customer{CustomerID: "zoe_before", Name: "Zoë\n\u2028\u0001\u202e",
			Metadata: map[string]string{"é": "\u0001\u007f\u0085"}}); err != nil {
			t.Fatal(err)
		}
		run := func(extra ...string) (string, error) {
			args := append([]string{"../docs/verify-chain.py", "--url", e.Server.URL, "--key", e.Tenant.APIKey,
				"--environment", "sandbox", "--merchant-account", e.Tenant.Sandbox}, extra...)
			out, err := exec.Command(python, args...).CombinedOutput()
			return string(out), err
		}
		out, err := run()
		if err != nil || !strings.HasPrefix(out, "ok: ") {
			t.Fatalf("clean chain: %v\n%s", err, out)
		}
		events := listEvents(t, e)
		head := events[0].Hash
		if !strings.Contains(out, head) {
			t.Errorf("script's head is not the newest event's hash %s:\n%s", head, out)
		}
		var changed remit.Event
		for _, ev := range events[1:] {
			if strings.Contains(string(ev.Data), `"USD"`) {
				changed = ev
				break
			}
		}
		tamper(t, e, `UPDATE events SET data = REPLACE(data, '"USD"', '"EUR"') WHERE id = $1`, changed.ID)
		out, err = run()
		if err == nil || !strings.Contains(out, changed.ID) {
			t.Errorf("changed event %s not named: %v\n%s", changed.ID, err, out)
		}
		// Removing the newest event leaves an intact but shorter chain: the kept anchor notices.
		tamper(t, e, `UPDATE events SET data = REPLACE(data, '"EUR"', '"USD"') WHERE id = $1`, changed.ID)
		tamper(t, e, `DELETE FROM events WHERE id = $1`, events[0].ID)
		if out, err = run(); err != nil {
			t.Fatalf("restored chain without its newest event: %v\n%s", err, out)
		}
		if out, err = run("--anchor", head); err == nil || !strings.Contains(out, "anchor") {
			t.Errorf("truncated chain passed against its anchor: %v\n%s", err, out)
		}
	})
}
