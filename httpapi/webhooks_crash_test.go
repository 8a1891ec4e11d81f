package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestWebhookSurvivesSIGKILL kills `serve` with SIGKILL while deliveries are pending and attempts
// are in flight, restarts it, and checks that every event is then delivered.
func TestWebhookSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testkit.BuildRemit(t)
	addr := testkit.FreeAddr(t)
	env := append(os.Environ(),
		"REMIT_DATABASE_URL=sqlite:"+filepath.Join(dir, "remit.db"),
		"REMIT_WEBHOOK_LEASE=2s",
		"REMIT_WEBHOOK_RETRY_SCHEDULE=200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms",
		"REMIT_SCHEDULER_INTERVAL=100ms",
		"REMIT_LOG_LEVEL=warn",
	)
	var tenant struct {
		APIKey           string
		MerchantAccounts map[string]string
	}
	tenant.APIKey, tenant.MerchantAccounts = testkit.BootstrapTenant(t, bin, env, "Crash Test")

	// The receiver holds every request open until the gate opens: attempts are in flight when the
	// process is killed.
	gate := make(chan struct{})
	var mu sync.Mutex
	type req struct {
		id      string
		attempt string
		after   bool // received after the restart
	}
	var got []req
	inFlight := 0
	restarted := false
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, req{r.Header.Get("webhook-id"), r.Header.Get("Remit-Delivery-Attempt"), restarted})
		inFlight++
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		select {
		case <-gate:
			w.WriteHeader(200)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(rc.Close)
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})

	p := testkit.StartServe(t, bin, env, addr)
	call := func(method, path string, body any) {
		t.Helper()
		p.Call(t, tenant.APIKey, tenant.MerchantAccounts["sandbox"], method, path, body)
	}
	// The receiver's endpoint gets every webhook_endpoint.created event: its own, then one per
	// endpoint created after it.
	call("POST", "/v1/webhook-endpoints", map[string]any{"url": rc.URL, "enabledEvents": []string{"webhook_endpoint.created"}})
	const more = 40
	for i := range more {
		call("POST", "/v1/webhook-endpoints", map[string]any{"url": fmt.Sprintf("http://127.0.0.1:9/%d", i), "enabledEvents": []string{"invoice.paid"}})
	}
	testkit.WaitFor(t, 20*time.Second, "attempts in flight", func() bool { mu.Lock(); defer mu.Unlock(); return inFlight >= 5 })
	p.Kill(t)
	mu.Lock()
	before := len(got)
	mu.Unlock()
	t.Logf("killed with %d attempts started and none answered", before)
	close(gate)
	mu.Lock()
	restarted = true
	mu.Unlock()

	p = testkit.StartServe(t, bin, env, addr)
	list := callList(t, p.Base, tenant.APIKey, tenant.MerchantAccounts["sandbox"], "/v1/events?type=webhook_endpoint.created&limit=100")
	if len(list) != more+1 {
		t.Fatalf("%d webhook_endpoint.created events, want %d", len(list), more+1)
	}
	seen := func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		s := map[string]bool{}
		for _, r := range got {
			if r.after {
				s[r.id] = true
			}
		}
		return s
	}
	testkit.WaitFor(t, 60*time.Second, "every event delivered after the restart", func() bool {
		s := seen()
		for _, id := range list {
			if !s[id] {
				return false
			}
		}
		return true
	})
	// The attempts that were in flight at the kill were made again (attempt 2), after the lease.
	retried := 0
	mu.Lock()
	for _, r := range got {
		if r.after && r.attempt == "2" {
			retried++
		}
	}
	mu.Unlock()
	if retried == 0 {
		t.Fatal("no attempt in flight at the kill was retried")
	}
	// Every delivery ends succeeded.
	testkit.WaitFor(t, 30*time.Second, "every delivery succeeded", func() bool {
		for _, id := range list {
			if !allSucceeded(t, p.Base, tenant.APIKey, tenant.MerchantAccounts["sandbox"], id) {
				return false
			}
		}
		return true
	})
}

// callList returns the IDs (eventId or deliveryId) of a list page.
func callList(t *testing.T, base, key, merchant, path string) []string {
	t.Helper()
	var out []string
	for _, it := range getItems(t, base, key, merchant, path) {
		if id, ok := it["eventId"].(string); ok && it["object"] == "event" {
			out = append(out, id)
		} else if id, ok := it["deliveryId"].(string); ok {
			out = append(out, id)
		}
	}
	return out
}

func getItems(t *testing.T, base, key, merchant, path string) []map[string]any {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r, _ := http.NewRequest("GET", base+path+sep+"environment=sandbox&merchantAccountId="+merchant, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	var env struct {
		Data struct {
			Items []map[string]any `json:"items"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return env.Data.Items
}

func allSucceeded(t *testing.T, base, key, merchant, eventID string) bool {
	items := getItems(t, base, key, merchant, "/v1/events/"+eventID+"/deliveries?limit=100")
	if len(items) == 0 {
		return false
	}
	for _, d := range items {
		if d["status"] != "succeeded" {
			return false
		}
	}
	return true
}
