package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// TestPaymentSurvivesSIGKILLBetweenChargeAndRecord kills `serve` with SIGKILL after the sandbox
// processor recorded a charge and before Remit recorded its outcome (the processor's answer is
// delayed by REMIT_SANDBOX_PROCESSOR_LATENCY), restarts it, and checks that the reconciler
// records the charge: the invoice is paid once, with one payment, one receipt and one charge.
func TestPaymentSurvivesSIGKILLBetweenChargeAndRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "remit.db")
	bin := testkit.BuildRemit(t)
	addr := testkit.FreeAddr(t)
	env := append(os.Environ(), "REMIT_DATABASE_URL="+dbURL, "REMIT_SANDBOX_PROCESSOR_LATENCY=3s",
		"REMIT_PROCESSOR_TIMEOUT=4s", "REMIT_RECONCILE_INTERVAL=100ms", "REMIT_LOG_LEVEL=warn",
		"REMIT_RATE_LIMIT=100000", "REMIT_RATE_BURST=100000") // the test polls
	var tenant struct {
		APIKey           string
		MerchantAccounts map[string]string
	}
	tenant.APIKey, tenant.MerchantAccounts = testkit.BootstrapTenant(t, bin, env, "Crash Test")
	p := testkit.StartServe(t, bin, env, addr)
	c := crashClient{t: t, base: p.Base, key: tenant.APIKey, merchant: tenant.MerchantAccounts["sandbox"]}
	c.must(200, "POST", "/v1/prices", map[string]any{"priceId": "item", "productId": "item", "name": "Item",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 2500})
	c.must(201, "POST", "/v1/customers", map[string]any{"customerId": "c1", "name": "C1"})
	c.must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-c1", "customerId": "c1", "currency": "USD"})
	session := c.must(201, "POST", "/v1/customers/c1/payment-method-setup", map[string]any{"billingAccountId": "ba-c1", "setAsDefault": true})
	u, _ := url.Parse(session["url"].(string))
	c.raw(200, "PUT", p.Base+u.RequestURI()+"&paymentMethod=pm_card_visa")
	inv := c.must(201, "POST", "/v1/invoices", map[string]any{"customerId": "c1", "billingAccountId": "ba-c1", "currency": "USD",
		"lines": []any{map[string]any{"priceId": "item"}}})
	id := inv["invoiceId"].(string)

	// Finalize: the charge is made at once and answered 3 s later; kill the server in between.
	go func() {
		r, _ := http.NewRequest("POST", c.url("/v1/invoices/"+id+"/finalize"), strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer "+c.key)
		r.Header.Set("Content-Type", "application/json")
		if res, err := http.DefaultClient.Do(r); err == nil {
			res.Body.Close()
		}
	}()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testkit.WaitFor(t, 20*time.Second, "the sandbox to record the charge", func() bool {
		charges, err := db.SandboxCharges().List(context.Background())
		return err == nil && len(charges) == 1
	})
	p.Kill(t)
	if got := c.get("/v1/invoices/" + id); got != nil {
		t.Fatalf("the server answered after SIGKILL")
	}
	pid := func() string {
		charges, _ := db.SandboxCharges().List(context.Background())
		return charges[0].IdempotencyRef
	}()
	// Killed between the charge and its record: Remit's attempt is still processing.
	if pay, err := db.Read(context.Background()).GetPayment(context.Background(), c.merchant, pid, store.Unlocked); err != nil || pay.Status != "processing" {
		t.Fatalf("at the kill: payment %+v, %v", pay, err)
	}

	// After the restart the reconciler asks the sandbox and records the charge.
	p = testkit.StartServe(t, bin, env, addr)
	testkit.WaitFor(t, 30*time.Second, "the reconciler to record the charge", func() bool {
		pay := c.get("/v1/payments/" + pid)
		return pay != nil && pay["status"] == "succeeded"
	})
	got := c.get("/v1/invoices/" + id)
	payments := getItems(t, p.Base, c.key, c.merchant, "/v1/payments?invoiceId="+id)
	receipts := getItems(t, p.Base, c.key, c.merchant, "/v1/payment-receipts?invoiceId="+id)
	charges, _ := db.SandboxCharges().List(context.Background())
	if got["status"] != "paid" || got["latestPaymentId"] != pid || len(payments) != 1 || len(receipts) != 1 || len(charges) != 1 {
		t.Fatalf("after the restart: invoice %v, %d payments, %d receipts, %d charges", got, len(payments), len(receipts), len(charges))
	}
	// Every sandbox charge belongs to exactly one succeeded payment.
	for _, ch := range charges {
		pay := c.get("/v1/payments/" + ch.IdempotencyRef)
		if pay == nil || pay["status"] != "succeeded" || num(pay["amount"]) != ch.Amount {
			t.Fatalf("charge %+v: payment %v", ch, pay)
		}
	}
}

// crashClient calls a `remit serve` child as the bootstrapped tenant in the sandbox.
type crashClient struct {
	t                   *testing.T
	base, key, merchant string
}

func (c crashClient) url(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return c.base + path + sep + "environment=sandbox&merchantAccountId=" + c.merchant
}

// must sends a request with a JSON body and fails unless the status is want; it returns data.
func (c crashClient) must(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(method, c.url(path), bytes.NewReader(b))
	r.Header.Set("Authorization", "Bearer "+c.key)
	r.Header.Set("Content-Type", "application/json")
	return c.send(want, r)
}

// raw sends a body-less request to a full URL (a portal link) and fails unless the status is want.
func (c crashClient) raw(want int, method, u string) map[string]any {
	c.t.Helper()
	r, _ := http.NewRequest(method, u, nil)
	return c.send(want, r)
}

func (c crashClient) send(want int, r *http.Request) map[string]any {
	c.t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		c.t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", r.Method, r.URL.Path, res.StatusCode, want, b)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(b, &env)
	return env.Data
}

// get returns the data of a GET, or nil when the server does not answer 200.
func (c crashClient) get(path string) map[string]any {
	r, _ := http.NewRequest("GET", c.url(path), nil)
	r.Header.Set("Authorization", "Bearer "+c.key)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	return env.Data
}
