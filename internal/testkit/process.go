package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BuildRemit builds cmd/remit into a temporary folder of t and returns the binary's path.
func BuildRemit(t testing.TB) string {
	t.Helper()
	return goBuild(t, "remit", "github.com/remit-billing/remit/cmd/remit")
}

// goBuild builds the package pkg (of this module or one of its tools) into the binary name in a
// temporary folder of t and returns its path; a failed build fails t with the compiler's output.
func goBuild(t testing.TB, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// FreeAddr returns a loopback host:port that nothing listens on at the moment.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Process is a `remit serve` child process, for tests that kill, restart or run several servers.
type Process struct {
	Cmd    *exec.Cmd
	Stderr *SyncBuffer
	Addr   string // host:port it listens on
	Base   string // http://Addr
	exited chan struct{}
}

// StartServe starts `bin serve` with env and REMIT_ADDR=addr and waits until /readyz answers 200
// (the test fails if it exits or does not answer within 30 s). When the test ends a process still
// running gets SIGTERM, and SIGKILL if it has not exited 20 s later.
func StartServe(t testing.TB, bin string, env []string, addr string) *Process {
	t.Helper()
	return startServe(t, bin, env, addr, "serve to answer /readyz", func(status int) bool { return status == 200 })
}

// StartServeAnswering is StartServe for a server that is not meant to be ready (its store down or
// behind): it waits until /readyz answers at all, whatever its status.
func StartServeAnswering(t testing.TB, bin string, env []string, addr string) *Process {
	t.Helper()
	return startServe(t, bin, env, addr, "serve to answer /readyz at all", func(int) bool { return true })
}

func startServe(t testing.TB, bin string, env []string, addr, what string, ready func(status int) bool) *Process {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append([]string(nil), env...), "REMIT_ADDR="+addr) // the last REMIT_ADDR wins
	p := &Process{Cmd: cmd, Stderr: &SyncBuffer{}, Addr: addr, Base: "http://" + addr}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.exited = exited
	t.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	WaitFor(t, 30*time.Second, what, func() bool {
		select {
		case <-exited:
			t.Fatalf("serve exited: %s", p.Stderr.String())
		default:
		}
		res, err := http.Get(p.Base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return ready(res.StatusCode)
	})
	return p
}

// Call sends an API request to the process and answers its envelope's data and headers; the test
// fails on no answer or a status of 300 or more. With apiKey it is authorized by that key; with
// sandbox (a merchant account ID) it acts in that account's sandbox (the scope query added to
// path); header adds name, value pairs. A portal path (its ?token=) takes neither.
func (p *Process) Call(t testing.TB, apiKey, sandbox, method, path string, body any, header ...string) (map[string]any, http.Header) {
	t.Helper()
	raw, _ := json.Marshal(body)
	u := p.Base + path
	if sandbox != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u += sep + "environment=sandbox&merchantAccountId=" + url.QueryEscape(sandbox)
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(b, &env)
	return env.Data, res.Header
}

// Kill ends the process with SIGKILL (no shutdown, no flush; requests in flight die) and waits for
// it to exit.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	<-p.exited
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitFor polls cond every 5 ms until it holds; after d the test fails naming what it waited for.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BootstrapTenant runs `bin bootstrap` with env and returns the new organization's API key and its
// merchant accounts by environment (sandbox, production).
func BootstrapTenant(t testing.TB, bin string, env []string, name string) (apiKey string, merchantAccounts map[string]string) {
	t.Helper()
	boot := exec.Command(bin, "bootstrap", "--organization", name, "--json")
	boot.Env = env
	out, err := boot.Output()
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	var tenant struct {
		APIKey           string            `json:"apiKey"`
		MerchantAccounts map[string]string `json:"merchantAccounts"`
	}
	if err := json.Unmarshal(out, &tenant); err != nil {
		t.Fatalf("bootstrap output: %v\n%s", err, out)
	}
	return tenant.APIKey, tenant.MerchantAccounts
}
