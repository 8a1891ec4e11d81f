package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// apiClient makes authenticated requests of a merchant account to a serve child process.
type apiClient struct {
	base, key, account string
}

func (c apiClient) do(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(method, c.base+path+sep+"environment=sandbox&merchantAccountId="+c.account, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, nil, err
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return res.StatusCode, nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, env.Data, nil
}

// acked is the record of writes the server acknowledged, in the order the answers arrived.
type acked struct {
	mu        sync.Mutex
	customers []string
	invoices  []string // finalized (200 to /finalize)
}

func (a *acked) snapshot() (customers, invoices []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.customers...), append([]string(nil), a.invoices...)
}

// writeLoop keeps making a customer, its billing account, a draft invoice and its finalization
// until stop closes (or 2 minutes pass), recording each acknowledged customer and finalized
// invoice. The first unexpected answer ends it with an error.
func writeLoop(c apiClient, worker int, stop <-chan struct{}, a *acked) error {
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		cus := fmt.Sprintf("cus_w%d_%d", worker, i)
		steps := []struct {
			method, path string
			body         any
			want         int
		}{
			{"POST", "/v1/customers", map[string]any{"customerId": cus, "name": "Customer " + cus}, 201},
			{"POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba_" + cus, "customerId": cus, "currency": "USD"}, 201},
			{"POST", "/v1/invoices", map[string]any{"invoiceId": "in_" + cus, "customerId": cus, "billingAccountId": "ba_" + cus, "currency": "USD",
				"lines": []any{map[string]any{"priceId": "price_backup"}}}, 201},
			{"POST", "/v1/invoices/in_" + cus + "/finalize", map[string]any{}, 200},
		}
		for n, s := range steps {
			status, data, err := c.do(s.method, s.path, s.body)
			if err != nil || status != s.want {
				return fmt.Errorf("%s %s: %d %v %v", s.method, s.path, status, data, err)
			}
			a.mu.Lock()
			switch n {
			case 0:
				a.customers = append(a.customers, cus)
			case 3:
				a.invoices = append(a.invoices, "in_"+cus)
			}
			a.mu.Unlock()
		}
	}
	return nil
}

// remitCmd runs the remit binary with env and args and returns its output and error.
func remitCmd(bin string, env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// A backup taken by `remit backup` (its own process) while a `serve` process takes writes from
// four clients restores, with `remit restore`, to a store that `remit verify` passes and that holds
// every customer and every finalized invoice the server acknowledged before the backup began.
// Restoring over a store with data is refused without --force and works with it.
func TestBackupWhileServing(t *testing.T) {
	bin := testkit.BuildRemit(t)
	dir := t.TempDir()
	liveEnv := append(os.Environ(), "REMIT_DATABASE_URL=sqlite:"+filepath.Join(dir, "live.db"), "REMIT_RATE_LIMIT=100000", "REMIT_RATE_BURST=100000")
	key, accounts := testkit.BootstrapTenant(t, bin, liveEnv, "Backup Co")
	p := testkit.StartServe(t, bin, liveEnv, testkit.FreeAddr(t))
	c := apiClient{base: p.Base, key: key, account: accounts["sandbox"]}
	if status, data, err := c.do("POST", "/v1/prices", map[string]any{"priceId": "price_backup", "productId": "prod_backup", "name": "Backup plan",
		"priceType": "fixed_one_time", "currency": "USD", "unitAmount": 1250}); err != nil || status != 200 {
		t.Fatalf("price: %d %v %v", status, data, err)
	}

	var a acked
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 4 {
		go func() { errs <- writeLoop(c, w, stop, &a) }()
	}
	stopWriters := sync.OnceValue(func() error {
		close(stop)
		var all []error
		for range 4 {
			if err := <-errs; err != nil {
				all = append(all, err)
			}
		}
		return fmt.Errorf("%v", all)
	})
	t.Cleanup(func() { _ = stopWriters() })
	testkit.WaitFor(t, time.Minute, "40 finalized invoices", func() bool {
		_, inv := a.snapshot()
		return len(inv) >= 40
	})

	backupFile := filepath.Join(dir, "backup.db")
	customersBefore, invoicesBefore := a.snapshot() // acknowledged before the backup began
	out, errOut, err := remitCmd(bin, liveEnv, "backup", "--to", backupFile)
	customersAfter, _ := a.snapshot()
	if err != nil {
		t.Fatalf("remit backup: %v\n%s%s", err, out, errOut)
	}
	if werr := stopWriters(); werr.Error() != "[]" {
		t.Fatalf("a writer failed: %v", werr)
	}
	t.Logf("%s; %d customers and %d finalized invoices acknowledged before it began, %d more customers while it ran",
		strings.TrimSpace(out), len(customersBefore), len(invoicesBefore), len(customersAfter)-len(customersBefore))
	if _, err := os.Stat(backupFile + "-wal"); err == nil {
		t.Errorf("the backup left a -wal file: it should be one self-contained file")
	}

	restoredURL := "sqlite:" + filepath.Join(dir, "restored.db")
	restoredEnv := append(os.Environ(), "REMIT_DATABASE_URL="+restoredURL)
	if out, errOut, err := remitCmd(bin, restoredEnv, "restore", "--from", backupFile); err != nil {
		t.Fatalf("remit restore into a new store: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := remitCmd(bin, restoredEnv, "verify"); err != nil || !strings.Contains(out, "0 with violations") {
		t.Fatalf("remit verify on the restored store: %v\n%s%s", err, out, errOut)
	}
	checkRestored(t, bin, restoredEnv, c, customersBefore, invoicesBefore)

	// Over a store with data: refused, and nothing changes; with --force it is replaced.
	out, errOut, err = remitCmd(bin, restoredEnv, "restore", "--from", filepath.Join(dir, "live.db"))
	if err == nil || !strings.Contains(errOut, "holds data") || !strings.Contains(errOut, "--force") {
		t.Fatalf("restore over a store with data: %v\n%s%s", err, out, errOut)
	}
	checkRestored(t, bin, restoredEnv, c, customersBefore, invoicesBefore)
	if out, errOut, err := remitCmd(bin, restoredEnv, "restore", "--force", "--from", backupFile); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore --force: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := remitCmd(bin, restoredEnv, "verify"); err != nil {
		t.Fatalf("remit verify after restore --force: %v\n%s%s", err, out, errOut)
	}
	checkRestored(t, bin, restoredEnv, c, customersBefore, invoicesBefore)
}

// checkRestored serves the restored store and reads back every acknowledged write through the
// API: each customer exists, each invoice is finalized (open: collected by invoice); then stops.
func checkRestored(t *testing.T, bin string, env []string, c apiClient, customers, invoices []string) {
	t.Helper()
	p := testkit.StartServe(t, bin, env, testkit.FreeAddr(t))
	defer func() {
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		testkit.WaitFor(t, 30*time.Second, "serve on the restored store to stop", p.Exited)
	}()
	c.base = p.Base
	var missing []string
	for _, id := range customers {
		if status, _, err := c.do("GET", "/v1/customers/"+id, nil); err != nil || status != 200 {
			missing = append(missing, fmt.Sprintf("%s (%d %v)", id, status, err))
		}
	}
	for _, id := range invoices {
		status, data, err := c.do("GET", "/v1/invoices/"+id, nil)
		if err != nil || status != 200 || data["status"] != "open" {
			missing = append(missing, fmt.Sprintf("%s (%d %v %v)", id, status, data["status"], err))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the restored store lacks %d of the %d customers and %d finalized invoices acknowledged before the backup: %v",
			len(missing), len(customers), len(invoices), missing)
	}
}

// A restore checks that its file is a Remit store of migrations this binary knows, and leaves the
// target as it was when it refuses.
func TestRestoreRefusesWhatIsNotARemitStore(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database, just text that is long enough to look like a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	newer := testkit.MigratedStoreURL(t, testkit.SQLite)
	ndb, err := sql.Open("sqlite", strings.TrimPrefix(newer, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ndb.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
		t.Fatal(err)
	}
	ndb.Close()
	target := "sqlite:" + filepath.Join(dir, "target.db")
	for _, c := range []struct{ from, want string }{
		{junk, "not a SQLite database"},
		{other, "not a Remit store"},
		{strings.TrimPrefix(newer, "sqlite:"), "migration 99999 is unknown"},
		{filepath.Join(dir, "missing.db"), "no such file"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"restore", "--database-url", target, "--from", c.from}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("restore --from %s: %v, want an error naming %q", filepath.Base(c.from), err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "target.db")); err == nil {
		t.Error("a refused restore created the target store")
	}
	// Over a SQLite file of something else: refused without --force.
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"restore", "--database-url", "sqlite:" + other, "--from", strings.TrimPrefix(testkit.MigratedStoreURL(t, testkit.SQLite), "sqlite:")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "something else") {
		t.Errorf("restore over another program's database: %v", err)
	}
	// The backup itself refuses to overwrite a file.
	err = run(context.Background(), []string{"backup", "--database-url", newer, "--to", other}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("backup over an existing file: %v", err)
	}
}

// On PostgreSQL, backup and restore say that pg_dump and point-in-time recovery are the way, and
// fail (so no script believes a backup was made).
func TestBackupOnPostgresExplains(t *testing.T) {
	url := os.Getenv("REMIT_TEST_POSTGRES_URL")
	if url == "" {
		url = "postgres://remit@127.0.0.1:1/remit" // the commands answer before connecting
	}
	for _, args := range [][]string{{"backup", "--to", filepath.Join(t.TempDir(), "x.db")}, {"restore", "--from", "x.db"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), append(args, "--database-url", url), &out, &errb)
		if err == nil || !strings.Contains(errb.String(), "pg_dump") || !strings.Contains(errb.String(), "point in time") {
			t.Errorf("%s on PostgreSQL: %v\n%s", args[0], err, errb.String())
		}
	}
}

// `remit migrate --dry-run` lists the pending migrations in order and applies none; after
// `remit migrate` it lists none. On both stores.
func TestMigrateDryRun(t *testing.T) {
	for _, s := range testkit.Stores() {
		t.Run(string(s), func(t *testing.T) {
			url := testkit.NewStoreURL(t, s)
			migrate := func(args ...string) string {
				t.Helper()
				var out, errb bytes.Buffer
				if err := run(context.Background(), append([]string{"migrate", "--database-url", url}, args...), &out, &errb); err != nil {
					t.Fatalf("migrate %v: %v\n%s", args, err, errb.String())
				}
				return out.String()
			}
			db, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			all, err := db.PendingMigrations(context.Background())
			if err != nil || len(all) < 30 || all[0].String() != "00001 00001_foundation.sql" {
				t.Fatalf("pending on a new store: %v %v", err, all)
			}
			for range 2 { // nothing applied: the second run lists the same
				out := migrate("--dry-run")
				if !strings.HasPrefix(out, fmt.Sprintf("%d migration(s) pending:\n  00001 00001_foundation.sql\n", len(all))) ||
					!strings.Contains(out, all[len(all)-1].String()) {
					t.Fatalf("dry run on a new store:\n%s", out)
				}
			}
			if out := migrate(); !strings.Contains(out, "applying") || !strings.HasSuffix(out, "schema up to date\n") {
				t.Fatalf("migrate:\n%s", out)
			}
			if out := migrate("--dry-run"); out != "schema up to date: no pending migration\n" {
				t.Fatalf("dry run after migrate:\n%s", out)
			}
			// A store one migration behind (as after deploying a binary with one more) lists that one.
			last := all[len(all)-1]
			if _, err := db.SQL().Exec(`DELETE FROM goose_db_version WHERE version_id = $1`, last.Version); err != nil {
				t.Fatal(err)
			}
			if out := migrate("--dry-run"); out != "1 migration(s) pending:\n  "+last.String()+"\n" {
				t.Fatalf("dry run one behind:\n%s", out)
			}
		})
	}
}

// `remit healthcheck` (the image's HEALTHCHECK) exits 0 when serve answers /healthz, and fails when
// nothing listens; --addr 0.0.0.0:PORT is asked on the loopback.
func TestHealthcheckCommand(t *testing.T) {
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		port := e.Server.Listener.Addr().String()[strings.LastIndex(e.Server.Listener.Addr().String(), ":"):]
		for _, args := range [][]string{{"--url", e.Server.URL}, {"--addr", "0.0.0.0" + port}} {
			var out, errb bytes.Buffer
			if err := run(context.Background(), append([]string{"healthcheck"}, args...), &out, &errb); err != nil || !strings.Contains(out.String(), "/healthz") {
				t.Errorf("healthcheck %v: %v %s", args, err, out.String())
			}
		}
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"healthcheck", "--addr", testkit.FreeAddr(t)}, &out, &errb); err == nil {
			t.Error("healthcheck with nothing listening passed")
		}
	})
}
