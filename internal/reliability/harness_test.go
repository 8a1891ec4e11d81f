package reliability_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// soak reports whether the long forms run (REMIT_SOAK=1; docs/reliability.md).
func soak() bool { return os.Getenv("REMIT_SOAK") == "1" }

// tenant is an organization made by `remit bootstrap`.
type tenant struct {
	OrganizationID   string            `json:"organizationId"`
	APIKey           string            `json:"apiKey"`
	MerchantAccounts map[string]string `json:"merchantAccounts"`
}

func (tn tenant) sandbox() string { return tn.MerchantAccounts["sandbox"] }

func bootstrap(t *testing.T, bin string, env []string, name string) tenant {
	t.Helper()
	cmd := exec.Command(bin, "bootstrap", "--organization", name, "--json")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr.String())
	}
	var tn tenant
	if err := json.Unmarshal(out, &tn); err != nil {
		t.Fatalf("bootstrap output: %v\n%s", err, out)
	}
	return tn
}

// client sends API requests to one or several servers, round-robin.
type client struct {
	http  *http.Client
	bases []string
	mu    sync.Mutex
	next  int
}

func newClient(bases ...string) *client {
	return &client{http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, bases: bases}
}

func (c *client) base() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bases[c.next%len(c.bases)]
	c.next++
	return b
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) data() map[string]any {
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(a.body, &env)
	return env.Data
}

func (a answer) errorCode() string {
	var env struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &env)
	return env.Error.Code
}

func (a answer) errorReason() string {
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &env)
	s, _ := env.Error.Details["reason"].(string)
	return s
}

// do sends one request as tn in its sandbox account. err is a transport failure (no answer seen).
func (c *client) do(ctx context.Context, tn tenant, method, path string, body any, idemKey string) (answer, error) {
	return c.doAt(ctx, c.base(), tn, method, path, body, idemKey)
}

func (c *client) doAt(ctx context.Context, base string, tn tenant, method, path string, body any, idemKey string) (answer, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	u := base + path + sep + "environment=sandbox&merchantAccountId=" + tn.sandbox()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+tn.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, header: res.Header, body: b}, nil
}

// must sends a request and fails unless the status is want.
func (c *client) must(t *testing.T, want int, tn tenant, method, path string, body any) map[string]any {
	t.Helper()
	a, err := c.do(context.Background(), tn, method, path, body, "")
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, a.status, want, a.body)
	}
	return a.data()
}

// openStore opens the store for the checks that read tables directly.
func openStore(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db.SQL()
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// privatePostgres is a PostgreSQL server of this test alone (Debian's binaries), on a free port,
// which the test may stop and start. The shared server other tests use is never touched.
type privatePostgres struct {
	dir, bin, port string
	asUser         string // run pg_ctl as this OS user ("" = as ourselves)
}

const pgBinDir = "/usr/lib/postgresql/15/bin"

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBinDir, "initdb")); err != nil {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatalf("PostgreSQL server binaries not found in %s", pgBinDir)
		}
		t.Skipf("PostgreSQL server binaries not found in %s", pgBinDir)
	}
	dir, err := os.MkdirTemp("", "remit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg := &privatePostgres{dir: dir, bin: pgBinDir}
	if os.Geteuid() == 0 { // initdb refuses root: run the server as the postgres OS user
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root and there is no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		pg.asUser = "postgres"
	}
	addr := testkit.FreeAddr(t)
	_, pg.port, _ = net.SplitHostPort(addr)
	pg.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	conf := fmt.Sprintf("\nport = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nmax_connections = 200\n", pg.port, dir)
	f, err := os.OpenFile(filepath.Join(dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(conf)
	f.Close()
	pg.start(t)
	t.Cleanup(func() { pg.ctl(nil, "stop", "-m", "immediate") })
	return pg
}

// URL is the server's connection URL (database postgres).
func (pg *privatePostgres) URL() string {
	return "postgres://postgres@127.0.0.1:" + pg.port + "/postgres?sslmode=disable"
}

func (pg *privatePostgres) run(t *testing.T, tool string, args ...string) {
	t.Helper()
	if out, err := pg.command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
}

func (pg *privatePostgres) command(tool string, args ...string) *exec.Cmd {
	path := filepath.Join(pg.bin, tool)
	if pg.asUser == "" {
		return exec.Command(path, args...)
	}
	q := []string{shellQuote(path)}
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	return exec.Command("su", pg.asUser, "-s", "/bin/sh", "-c", strings.Join(q, " "))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (pg *privatePostgres) ctl(t *testing.T, args ...string) {
	all := append([]string{"-D", filepath.Join(pg.dir, "data"), "-w", "-t", "60"}, args...)
	if args[0] == "start" {
		all = append(all, "-l", filepath.Join(pg.dir, "log"))
	}
	out, err := pg.command("pg_ctl", all...).CombinedOutput()
	if err != nil && t != nil {
		t.Fatalf("pg_ctl %v: %v\n%s", args, err, out)
	}
}

func (pg *privatePostgres) start(t *testing.T) { t.Helper(); pg.ctl(t, "start") }

// stop stops the server at once (-m immediate: connections are cut, as in a crash).
func (pg *privatePostgres) stop(t *testing.T) { t.Helper(); pg.ctl(t, "stop", "-m", "immediate") }

func mustRequest(t *testing.T, method, u string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// soakRounds is REMIT_SOAK_ROUNDS, or 0.
func soakRounds() int {
	n, _ := strconv.Atoi(os.Getenv("REMIT_SOAK_ROUNDS"))
	return n
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
