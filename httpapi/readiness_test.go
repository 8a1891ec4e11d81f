package httpapi_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// readyz answers GET base/readyz: its status and body.
func readyz(t *testing.T, base string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	defer res.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &body)
	return res.StatusCode, body
}

// TestReadyzWhileMigrationsPending: `serve` started with REMIT_AUTO_MIGRATE=false on a store whose
// schema is behind its migrations (a new store) answers /readyz 503 "migrations pending" while
// /healthz stays 200; once another process has migrated the store (`remit migrate`, as a deploy's
// migration job does) the same server answers 200, without a restart.
func TestReadyzWhileMigrationsPending(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testkit.BuildRemit(t)
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			env := append(os.Environ(), "REMIT_DATABASE_URL="+testkit.NewStoreURL(t, s), "REMIT_AUTO_MIGRATE=false", "REMIT_LOG_LEVEL=error")
			p := testkit.StartServeAnswering(t, bin, env, testkit.FreeAddr(t))
			status, body := readyz(t, p.Base)
			if status != 503 || body["migrations"] != "pending" || body["store"] != string(s) {
				t.Fatalf("/readyz on a store behind its migrations: %d %v, want 503 migrations pending", status, body)
			}
			if res, err := http.Get(p.Base + "/healthz"); err != nil || res.StatusCode != 200 {
				t.Fatalf("/healthz: %v %v", res, err)
			}
			migrate := exec.Command(bin, "migrate")
			migrate.Env = env
			if out, err := migrate.CombinedOutput(); err != nil {
				t.Fatalf("remit migrate: %v\n%s", err, out)
			}
			testkit.WaitFor(t, 20*time.Second, "/readyz 200 after the migration", func() bool {
				status, body = readyz(t, p.Base)
				return status == 200
			})
			if body["status"] != "ready" || body["store"] != string(s) {
				t.Fatalf("/readyz after the migration: %v", body)
			}
		})
	}
}

// TestReadyzWhileThePostgresConnectionIsCut puts a TCP proxy between the server and PostgreSQL and
// cuts it (every connection closed, the port refusing new ones): /readyz is 503 "unreachable" while
// /healthz stays 200; once the port answers again the server is ready again by itself.
func TestReadyzWhileThePostgresConnectionIsCut(t *testing.T) {
	u, err := url.Parse(testkit.NewStoreURL(t, testkit.Postgres)) // skips without PostgreSQL
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	u.Host = px.addr
	e := testkit.StartOn(t, testkit.Postgres, u.String(), testkit.Options{})
	if status, body := readyz(t, e.Server.URL); status != 200 {
		t.Fatalf("/readyz through the proxy: %d %v", status, body)
	}
	px.cut(t)
	var body map[string]any
	testkit.WaitFor(t, 20*time.Second, "/readyz 503 while the store is cut off", func() bool {
		var status int
		status, body = readyz(t, e.Server.URL)
		return status == 503
	})
	if body["store"] != "unreachable" {
		t.Fatalf("/readyz while cut off: %v", body)
	}
	if res, err := http.Get(e.Server.URL + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", res, err)
	}
	px.resume(t)
	testkit.WaitFor(t, 30*time.Second, "/readyz 200 once the store answers again", func() bool {
		status, _ := readyz(t, e.Server.URL)
		return status == 200
	})
}

// proxy forwards TCP connections from addr to target until it is cut.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.cut(t) })
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection through it.
func (p *proxy) cut(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// resume listens on the same address again.
func (p *proxy) resume(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
