package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

// Issue 41's floors: three targets are a share of a floor measured in the same run, with nothing
// of Remit's in the way (docs/benchmarks.md, "Issue 41's targets"; docs/performance.md, "Floors
// measured by the harness"):
//
//	(b) invoice read, both stores: ≥ 80 % of the one-row read-and-write-back route
//	    (wire.FloorInvoicePath, in a server built with -tags remitfloor), the same load
//	(d) grant, PostgreSQL: ≥ 60 % of pgbench running the grant's statements, p99 < 50 ms
//	(g) finalize, PostgreSQL: ≥ 40 % of pgbench holding one counter row through COMMIT,
//	    p99 < 250 ms
//
// pgbench runs against the run's PostgreSQL, from as many clients as the scenario's connections,
// with prepared statements, on scratch tables of a schema of its own that it drops afterwards.

// Floor is a scenario's floor and how the scenario's result stands against it.
type Floor struct {
	What         string  `json:"what"`
	PerSecond    float64 `json:"perSecond"`             // the floor's transactions (pgbench) or 2xx answers per second
	LatencyMs    float64 `json:"latencyAverageMs"`      // pgbench's average latency; the route's p50
	P99Ms        float64 `json:"p99Ms,omitempty"`       // the floor's p99 (pgbench's from its per-transaction log)
	Pgbench      bool    `json:"pgbench,omitempty"`     // a pgbench floor, else the floor route
	Ratio        float64 `json:"ratio"`                 // the scenario's requests/s over PerSecond
	TargetRatio  float64 `json:"targetRatio"`           // the share of the floor issue 41 asks for
	Met          bool    `json:"met"`                   // Ratio ≥ TargetRatio
	TargetP99Ms  float64 `json:"targetP99Ms,omitempty"` // the scenario's p99 target, if it has one
	P99Met       bool    `json:"p99Met,omitempty"`
	Clients      int     `json:"clients"`     // pgbench's clients or the route's connections
	LoadAvg      string  `json:"loadAverage"` // /proc/loadavg right after the floor was measured
	Unavailable  string  `json:"unavailable,omitempty"`
	Note         string  `json:"note,omitempty"`
	FailedFloors int     `json:"failedTransactions,omitempty"` // pgbench's failed transactions
}

// floorTarget is one scenario's target against its floor.
type floorTarget struct {
	ratio, p99Ms float64
	pgbench      func(schema, run string, customers int) string // nil: the floor route
	what         string
	postgresOnly bool
}

var floorTargets = map[string]floorTarget{
	"invoice-get": {ratio: 0.80, what: "GET " + wire.FloorInvoicePath + "{id}: one invoice row by primary key, its stored lines written back raw"},
	"balance-grant": {ratio: 0.60, p99Ms: 50, pgbench: grantScript, postgresOnly: true,
		what: "pgbench, the grant's statements: BEGIN; the idempotency lookup; INSERT balance_entries; pipelined INSERT idempotency_keys, INSERT events, COMMIT"},
	"invoice-finalize": {ratio: 0.40, p99Ms: 250, pgbench: counterScript, postgresOnly: true,
		what: "pgbench: BEGIN; INSERT one row; the counter upsert of one shared row (store.NextNumber); COMMIT"},
}

// floors measures the floors of one run.
type floors struct {
	o        options
	dbURL    string // the run's store (PostgreSQL: its URL carries the run's search_path)
	base     string // the server
	fx       *Fixture
	tmp      string
	duration time.Duration // pgbench's -T
	out      io.Writer
	// pgbench runs with the server stopped: its pool's idle PostgreSQL connections would leave too
	// few of max_connections for as many clients as the scenario's connections.
	stopServer  func()
	startServer func() error
}

// measure measures sc's floor, if it has one on this store, and judges res against it. Its error
// is the server's failing to start again after pgbench.
func (f *floors) measure(ctx context.Context, sc scenario, res Result) (*Floor, error) {
	t, ok := floorTargets[sc.name]
	if !ok || (t.postgresOnly && f.o.store != "postgres") || !res.Available {
		return nil, nil
	}
	fl := &Floor{What: t.what, TargetRatio: t.ratio, TargetP99Ms: t.p99Ms}
	fmt.Fprintf(f.out, "    floor: %s ...\n", t.what)
	if t.pgbench != nil {
		f.stopServer()
		f.pgbench(ctx, t, fl)
		if err := f.startServer(); err != nil {
			return nil, fmt.Errorf("restarting the server after the floor: %w", err)
		}
	} else {
		f.route(sc, fl)
	}
	fl.LoadAvg = loadAvg()
	if fl.Unavailable == "" && fl.PerSecond > 0 {
		fl.Ratio = res.RPS / fl.PerSecond
		fl.Met = fl.Ratio >= fl.TargetRatio
		fl.P99Met = t.p99Ms > 0 && res.P99 < t.p99Ms
	}
	fmt.Fprintf(f.out, "    %s\n", fl.line(res))
	return fl, nil
}

// line is the floor beside the scenario's result: floor, result, ratio, target, met or missed.
func (fl *Floor) line(res Result) string {
	if fl.Unavailable != "" {
		return "floor not measured: " + fl.Unavailable
	}
	s := fmt.Sprintf("floor %.0f/s (%s %.2f ms, p99 %.2f ms), result %.0f req/s: %.1f%% of the floor, target ≥ %.0f%%: %s",
		fl.PerSecond, map[bool]string{false: "p50", true: "average latency"}[fl.Pgbench], fl.LatencyMs, fl.P99Ms,
		res.RPS, 100*fl.Ratio, 100*fl.TargetRatio, metOr(fl.Met))
	if fl.TargetP99Ms > 0 {
		s += fmt.Sprintf("; p99 %.0f ms, target < %.0f ms: %s", res.P99, fl.TargetP99Ms, metOr(fl.P99Met))
	}
	if fl.Note != "" {
		s += " (" + fl.Note + ")"
	}
	if fl.FailedFloors > 0 {
		s += fmt.Sprintf(" (pgbench: %d failed transactions)", fl.FailedFloors)
	}
	return s + "; load average " + fl.LoadAvg
}

func metOr(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

// route runs the scenario's load against the floor route, for as long and from as many
// connections as the scenario.
func (f *floors) route(sc scenario, fl *Floor) {
	probe := f.base + wire.FloorInvoicePath + f.fx.Invoices[0] + "?merchantAccountId=" + url.QueryEscape(f.fx.MerchantID)
	res, err := http.Get(probe)
	if err != nil {
		fl.Unavailable = "probe failed: " + err.Error()
		return
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fl.Unavailable = fmt.Sprintf("%s answered %d: the server was not built with -tags remitfloor (leave -server-bin empty, or build it with the tag)", wire.FloorInvoicePath, res.StatusCode)
		return
	}
	target := func(t *vegeta.Target) error {
		t.Method = http.MethodGet
		t.URL = f.base + wire.FloorInvoicePath + f.fx.Invoices[mrand.IntN(len(f.fx.Invoices))] + "?merchantAccountId=" + url.QueryEscape(f.fx.MerchantID)
		return nil
	}
	if f.o.warmup > 0 {
		for range newAttacker(f.o.connections).Attack(target, vegeta.Rate{}, f.o.warmup, sc.name+"-floor-warmup") {
		}
	}
	var r Result
	r.measure(newAttacker(f.o.connections).Attack(target, vegeta.Rate{}, f.o.duration, sc.name+"-floor"))
	fl.PerSecond, fl.LatencyMs, fl.P99Ms, fl.Clients = r.RPS, r.P50, r.P99, f.o.connections
	if r.Errors > 0 {
		fl.Unavailable = fmt.Sprintf("the floor route answered %d errors of %d: %v", r.Errors, r.Requests, r.ErrorSamples)
	}
}

// pgbench runs t's script with pgbench on scratch tables of a schema of its own.
func (f *floors) pgbench(ctx context.Context, t floorTarget, fl *Floor) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		fl.Unavailable = "pgbench is not installed (PostgreSQL's client tools)"
		return
	}
	runSchema := searchPath(f.dbURL)
	schema, free, drop, err := scratchSchema(ctx, f.o.postgresURL, runSchema, len(f.fx.Customers))
	if err != nil {
		fl.Unavailable = "scratch tables: " + err.Error()
		return
	}
	defer drop()
	script := filepath.Join(f.tmp, schema+".sql")
	if err := os.WriteFile(script, []byte(t.pgbench(schema, newRunID(), len(f.fx.Customers))), 0o644); err != nil {
		fl.Unavailable = err.Error()
		return
	}
	secs := max(1, int(f.duration.Round(time.Second).Seconds()))
	fl.Pgbench, fl.Clients = true, min(f.o.connections, free)
	logPrefix := filepath.Join(f.tmp, schema)
	if fl.Clients < f.o.connections {
		fl.Note = fmt.Sprintf("pgbench from %d clients, not %d: no more PostgreSQL connections were free", fl.Clients, f.o.connections)
	}
	cmd := exec.CommandContext(ctx, bin, "-n", "-M", "prepared", "-c", strconv.Itoa(fl.Clients), "-j", "2",
		"-T", strconv.Itoa(secs), "-l", "--log-prefix", logPrefix, "-f", script, libpqURL(f.o.postgresURL))
	cmd.Dir = f.tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		fl.Unavailable = fmt.Sprintf("pgbench: %v: %s", err, errorLines(string(out), 3))
		return
	}
	fl.PerSecond, fl.LatencyMs, fl.FailedFloors = parsePgbench(string(out))
	fl.P99Ms = pgbenchP99(logPrefix)
	if fl.PerSecond == 0 {
		fl.Unavailable = "pgbench printed no tps: " + lastLines(string(out), 5)
	}
}

var (
	pgbenchTPS     = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	pgbenchLatency = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	pgbenchFailed  = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
)

// parsePgbench reads pgbench's summary: transactions per second, average latency, failures.
func parsePgbench(out string) (tps, latencyMs float64, failed int) {
	if m := pgbenchTPS.FindStringSubmatch(out); m != nil {
		tps, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := pgbenchLatency.FindStringSubmatch(out); m != nil {
		latencyMs, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := pgbenchFailed.FindStringSubmatch(out); m != nil {
		failed, _ = strconv.Atoi(m[1])
	}
	return tps, latencyMs, failed
}

// pgbenchP99 is the p99 latency in ms of the transactions pgbench logged (-l) under prefix: one
// file per thread, a line per transaction whose third field is its latency in µs. 0 without any.
func pgbenchP99(prefix string) float64 {
	files, _ := filepath.Glob(prefix + ".*")
	var lat []float64
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 3 {
				if us, err := strconv.ParseFloat(f[2], 64); err == nil {
					lat = append(lat, us/1000)
				}
			}
		}
		_ = os.Remove(name)
	}
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(math.Ceil(0.99*float64(len(lat))))-1)]
}

// errorLines is the first n lines of pgbench's output that say "error", or its last n lines.
func errorLines(s string, n int) string {
	var errs []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "error") && len(errs) < n {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return lastLines(s, n)
	}
	return strings.Join(errs, " | ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// searchPath is the schema a run's PostgreSQL URL names (freshSchema's search_path).
func searchPath(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// libpqURL is a PostgreSQL URL that pgbench (libpq) accepts: only the query parameters libpq
// knows are kept (pgx passes any other as a run-time parameter; libpq refuses them).
func libpqURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	keep := url.Values{}
	for k, v := range u.Query() {
		switch k {
		case "sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name", "options", "host", "port", "user", "password", "dbname":
			keep[k] = v
		}
	}
	u.RawQuery = keep.Encode()
	return u.String()
}

// scratchSchema creates a schema of the floors' own with the tables their scripts write: copies
// (LIKE ... INCLUDING ALL: columns, defaults, checks, indexes) of the run's balance_entries,
// idempotency_keys, events and counters, empty; the balance entries' foreign key to a customers
// table of n rows; and a one-index table for the counter floor's own row. drop drops it all.
func scratchSchema(ctx context.Context, adminURL, runSchema string, n int) (schema string, free int, drop func(), err error) {
	if runSchema == "" {
		return "", 0, nil, fmt.Errorf("the run's URL names no search_path")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema = "floor_" + hex.EncodeToString(b)
	db, err := store.Open(ctx, adminURL)
	if err != nil {
		return "", 0, nil, err
	}
	drop = func() {
		_, _ = db.SQL().Exec(`DROP SCHEMA IF EXISTS ` + schema + ` CASCADE`)
		db.Close()
	}
	s, r := schema+".", runSchema+"."
	for _, q := range []string{
		`CREATE SCHEMA ` + schema,
		`CREATE TABLE ` + s + `customers (merchant_account_id TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (merchant_account_id, id))`,
		`INSERT INTO ` + s + `customers SELECT 'ma_floor', 'cus_' || i FROM generate_series(1, ` + strconv.Itoa(n) + `) i`,
		`CREATE TABLE ` + s + `balance_entries (LIKE ` + r + `balance_entries INCLUDING ALL)`,
		`ALTER TABLE ` + s + `balance_entries ADD FOREIGN KEY (merchant_account_id, customer_id) REFERENCES ` + s + `customers (merchant_account_id, id)`,
		`CREATE TABLE ` + s + `idempotency_keys (LIKE ` + r + `idempotency_keys INCLUDING ALL)`,
		`CREATE TABLE ` + s + `events (LIKE ` + r + `events INCLUDING ALL)`,
		`CREATE TABLE ` + s + `counters (LIKE ` + r + `counters INCLUDING ALL)`,
		`CREATE TABLE ` + s + `floor_rows (id BIGINT PRIMARY KEY, v TEXT NOT NULL)`,
		`ANALYZE ` + s + `customers`,
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			drop()
			return "", 0, nil, err
		}
	}
	// The connections left for pgbench: max_connections less those reserved for superusers, those
	// in use (other work on the machine included) and two to spare.
	err = db.SQL().QueryRowContext(ctx, `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
		- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') - 2`).Scan(&free)
	if err != nil {
		drop()
		return "", 0, nil, err
	}
	return schema, free, drop, nil
}

// grantScript is a pgbench script of the statements a grant's transaction sends (logged from the
// server with log_statement=all; store.LockAndLookupIdempotency, store.InsertBalanceEntry,
// Tx.NewIdempotencyAtCommit, the event's insertEventSQL), their values of the same sizes, in the
// same round trips: BEGIN; the key's lookup under its advisory lock; the entry (the customer's
// check, by the foreign key); then the key's record, the event and COMMIT in one pipeline.
func grantScript(schema, run string, customers int) string {
	s := schema + "."
	const scope = "'org_floor|sandbox|ma_floor'"
	const at = "1796197078620546"
	response := "'v1.store." + strings.Repeat("x", 900) + "'" // the sealed answer, about 900 bytes
	data := `'{"object":{"object":"balance_entry","entryId":"ble_` + run + `","customerId":"cus_floor","type":"grant","currency":"USD",` +
		`"amount":500,"remaining":500,"sourceEntryId":null,"invoiceId":null,"creditNoteId":null,"targets":null,` +
		`"description":"Load test credit","effectiveAt":"2026-12-02T07:37:58.620546Z","priority":50,"category":"promotional",` +
		`"expiresAt":null,"metadata":{},"environment":"sandbox","merchantAccountId":"ma_floor","createdAt":"2026-12-02T07:37:58.620546Z"}}'`
	// pgbench takes every :word for a variable, inside quotes too: the JSON's colons are sent as ~
	// and put back by the server (a translate of 700 bytes, microseconds).
	colons := func(lit string) string { return "translate(" + strings.ReplaceAll(lit, ":", "~") + ", '~', chr(58))" }
	lines := []string{
		`\set c random(1, ` + strconv.Itoa(customers) + `)`,
		`\set k random(1, 9000000000000000000)`,
		`BEGIN;`,
		`SELECT l.ok, k.route, k.body_hash, k.state, k.owner, k.lease_until, k.status, k.response, k.created_at ` +
			`FROM (SELECT pg_try_advisory_xact_lock(hashtextextended(` + scope + ` || '|load-` + run + `-' || :k, 0)) AS ok) l ` +
			`LEFT JOIN LATERAL (SELECT route, body_hash, state, owner, lease_until, status, response, created_at ` +
			`FROM ` + s + `idempotency_keys WHERE scope = ` + scope + ` AND idem_key = 'load-` + run + `-' || :k AND l.ok FOR UPDATE) k ON true;`,
		`INSERT INTO ` + s + `balance_entries (merchant_account_id, customer_id, id, seq, type, currency, amount, remaining, ` +
			`source_entry_id, invoice_id, credit_note_id, targets, description, effective_at, expires_at, metadata, created_at, priority, category) ` +
			`VALUES ('ma_floor', 'cus_' || :c, 'ble_` + run + `_' || :k, '01M8TV0NJW' || :k, 'grant', 'USD', 500, 500, NULL, NULL, NULL, NULL, ` +
			`'Load test credit', ` + at + `, NULL, '{}', ` + at + `, 50, 'promotional');`,
		`\startpipeline`,
		`INSERT INTO ` + s + `idempotency_keys (scope, idem_key, route, body_hash, state, owner, lease_until, status, response, created_at) ` +
			`VALUES (` + scope + `, 'load-` + run + `-' || :k, 'POST /v1/customers/cus_' || :c || '/balance/grant', ` +
			`'108b997a48a8c5ecc979291b054e3b1492fd2ff209f6f61423702c13d500a5d0', 'done', 'req_' || :k, 1796197138620418, 201, ` + response + `, ` + at + `);`,
		`INSERT INTO ` + s + `events (id, merchant_account_id, environment, type, object_id, data, created_at, sequence, hash, actor) ` +
			`VALUES ('evt_` + run + `_' || :k, 'ma_floor', 'sandbox', 'customer_balance.granted', 'ble_` + run + `_' || :k, ` + colons(data) + `, ` + at +
			`, NULL, NULL, ` + colons(`'{"type":"api_key","id":"key_floor"}'`) + `);`,
		`COMMIT;`,
		`\endpipeline`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// counterScript is a pgbench script of the shape that bounds a finalization on PostgreSQL: a
// transaction that takes the next value of one shared gap-free counter (store.NextNumber's
// statement, as the invoice number is taken) and holds that row's lock through its COMMIT.
func counterScript(schema, run string, _ int) string {
	s := schema + "."
	return strings.Join([]string{
		`\set k random(1, 9000000000000000000)`,
		`BEGIN;`,
		`INSERT INTO ` + s + `floor_rows (id, v) VALUES (:k, 'x');`,
		`INSERT INTO ` + s + `counters AS counters (scope, name, value) VALUES ('ma_floor', 'invoice_number', 1) ` +
			`ON CONFLICT (scope, name) DO UPDATE SET value = counters.value + 1 RETURNING value;`,
		`COMMIT;`,
	}, "\n") + "\n"
}
