package testkit

import (
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// StartStripeMock builds and starts stripe-mock (github.com/stripe/stripe-mock, a tool of this
// module: it answers Stripe's API from fixtures and refuses any request that Stripe's own OpenAPI
// document does not allow) on a free port, stops it when the test ends, and returns its base URL.
func StartStripeMock(t testing.TB) string {
	t.Helper()
	bin := goBuild(t, "stripe-mock", "github.com/stripe/stripe-mock")
	port := freePort(t)
	cmd := exec.Command(bin, "-http-port", fmt.Sprint(port), "-https-port", fmt.Sprint(freePort(t)))
	logs := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	WaitFor(t, 60*time.Second, "stripe-mock to listen", func() bool {
		res, err := http.Get(base + "/v1/customers")
		if err != nil {
			return false
		}
		res.Body.Close()
		return true
	})
	return base
}
