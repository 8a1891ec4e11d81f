// Command remit-load is Remit's load harness. It seeds a fresh store, starts `remit serve` (built
// from this repository) as a child process on it, and drives the server with vegeta, one scenario
// at a time, each for a fixed duration from a fixed number of connections:
//
//	a ceiling          GET /_load/ceiling: a bare net/http JSON handler in the same binary
//	b invoice-get      GET /v1/invoices/{id}, authenticated, random invoice
//	c balance-get      GET /v1/customers/{id}/balance, random customer (its whole ledger)
//	d balance-grant    POST /v1/customers/{id}/balance/grant, a new Idempotency-Key each
//	e receipts-list    GET /v1/payment-receipts?customer=..., random customer
//	f usage-events     POST /v1/usage-events, a new event and Idempotency-Key each
//	g invoice-finalize POST /v1/invoices/{id}/finalize, each seeded draft once
//	h grant-beside-charges  grants while 64 connections finalize charge_automatically drafts
//	i usage-meters     POST /v1/usage-events over five meters, one of each aggregation (sum, count,
//	                   max, unique_count of a "user" property, latest), in turn
//	j usage-batch      POST /v1/usage-events/batch, 500 new events each (random customers, the sum
//	                   meter) and a new Idempotency-Key: events/s is reported beside req/s
//	k billing-day      -subscriptions N subscriptions due at one instant, one sandbox clock advance,
//	                   timed until every renewal invoice is finalized and paid through the sandbox
//	                   (its latency -billing-day-latency, 50 ms); only when named (billingday.go)
//	l entitlement-check GET /v1/customers/{id}/entitlements/{featureKey} (entitlements.go)
//	m price-migration  -migrations N active subscriptions moved to a new price by one
//	                   POST /v1/price-migrations effective next_renewal, timed until it completed;
//	                   only when named (pricemigration.go)
//
// For each it reports requests/s, p50/p99/p99.9 latency, errors, the server's peak RSS and the
// throughput as a ratio to (a), measured in the same run: absolute figures drift between runs and
// machines, ratios much less. docs/performance.md has the results and how to read them.
//
// Beside (b), (d) and (g) it measures issue 41's floors in the same run and prints each result
// against its floor and target (floors.go): (b) against a one-row read route of a server built
// with -tags remitfloor (the harness builds it so), and on PostgreSQL (d) and (g) against pgbench
// running the grant's statements and a transaction holding one counter row through its COMMIT.
//
//	go run ./cmd/remit-load -store sqlite
//	go run ./cmd/remit-load -store postgres -postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./cmd/remit-load -customers 1000 -invoices 10000 -entries 100000 -duration 3s   # quick
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/remit-billing/remit/store"
	"github.com/remit-billing/remit/wire"
)

type options struct {
	store          string
	postgresURL    string
	duration       time.Duration
	warmup         time.Duration
	connections    int
	sizes          Sizes
	scenarios      string
	jsonPath       string
	serverBin      string
	keep           bool
	profileDir     string
	logLevel       string
	rounds         int
	tracing        int           // pairs of tracing off and on to compare (tracing.go); 0: the usual run
	billingDay     int           // subscriptions of the billing-day scenario (billingday.go)
	billingLatency time.Duration // the sandbox processor's latency in the billing-day scenario
	migrations     int           // subscriptions of the price-migration scenario (pricemigration.go)
	serverEnv      envList
	floors         bool          // measure issue 41's floors beside (b), (d) and (g) (floors.go)
	floorDuration  time.Duration // pgbench's -T for the PostgreSQL floors
}

// envList is a repeatable NAME=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }
func (e *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is not NAME=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

func main() {
	var o options
	flag.StringVar(&o.store, "store", "sqlite", "store to run on: sqlite or postgres")
	flag.StringVar(&o.postgresURL, "postgres", os.Getenv("REMIT_TEST_POSTGRES_URL"), "PostgreSQL URL for -store postgres (a fresh schema is created in it and dropped after); default $REMIT_TEST_POSTGRES_URL")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each scenario is measured")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each scenario (connections, caches)")
	flag.IntVar(&o.connections, "connections", 64, "concurrent connections (and requests in flight)")
	flag.IntVar(&o.sizes.Customers, "customers", 10000, "customers to seed")
	flag.IntVar(&o.sizes.Invoices, "invoices", 100000, "invoices to seed (30% drafts, 10% open, 60% paid)")
	flag.IntVar(&o.sizes.Entries, "entries", 1000000, "prepaid balance ledger entries to seed")
	flag.StringVar(&o.scenarios, "scenarios", "all", "comma-separated scenarios to run, by letter or name (a,b,... or ceiling,invoice-get,...); the ceiling always runs")
	flag.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file (- for stdout)")
	flag.StringVar(&o.serverBin, "server-bin", "", "a built remit binary to run (default: go build ./cmd/remit into a temporary folder)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (store, server log) and the PostgreSQL schema")
	flag.StringVar(&o.profileDir, "profile", "", "write a CPU profile of the server for each scenario into this folder (sets REMIT_PPROF=true)")
	flag.Var(&o.serverEnv, "server-env", "NAME=VALUE added to the server's environment (repeatable), e.g. GOGC=200")
	flag.IntVar(&o.rounds, "rounds", 1, "run every scenario this many times, round-robin, and report each one's median round")
	flag.IntVar(&o.tracing, "tracing-pairs", 0, "instead: compare each scenario with tracing off and on at full sampling (to a local OTLP receiver that discards), in this many alternating pairs of server runs")
	flag.IntVar(&o.billingDay, "subscriptions", 100000, "subscriptions due at one instant in the billing-day scenario (k)")
	flag.IntVar(&o.migrations, "migrations", 100000, "subscriptions migrated in the price-migration scenario (m)")
	flag.DurationVar(&o.billingLatency, "billing-day-latency", 50*time.Millisecond, "the sandbox processor's latency (REMIT_SANDBOX_PROCESSOR_LATENCY) in the billing-day scenario")
	flag.BoolVar(&o.floors, "floors", true, "measure issue 41's floors beside (b), (d) and (g): the server is built with -tags remitfloor for (b)'s floor route; on PostgreSQL pgbench runs (d)'s and (g)'s (floors.go)")
	flag.DurationVar(&o.floorDuration, "floor-duration", 5*time.Second, "how long pgbench runs for each PostgreSQL floor")
	flag.StringVar(&o.logLevel, "server-log-level", "info", "the server's REMIT_LOG_LEVEL (its log goes to a file in the temporary folder)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "remit-load:", err)
		os.Exit(1)
	}
}

// Result is one scenario's measurement.
type Result struct {
	Scenario     string         `json:"scenario"`
	Letter       string         `json:"letter"`
	Request      string         `json:"request"`
	Available    bool           `json:"available"`
	Note         string         `json:"note,omitempty"`
	Beside       *Result        `json:"beside,omitempty"` // the load run at the same time, measured on its own
	Requests     int            `json:"requests"`
	Seconds      float64        `json:"seconds"`
	RPS          float64        `json:"requestsPerSecond"` // successful (2xx) answers per second
	P50          float64        `json:"p50Ms"`
	P99          float64        `json:"p99Ms"`
	P999         float64        `json:"p999Ms"`
	Errors       int            `json:"errors"` // non-2xx answers and transport errors
	StatusCodes  map[string]int `json:"statusCodes"`
	ErrorSamples []string       `json:"errorSamples,omitempty"`
	PeakRSSMiB   float64        `json:"peakRssMiB"` // the server's VmHWM during the scenario
	Ratio        float64        `json:"ratioToCeiling"`
	// Writes only: requests/s as a multiple of Report.CommitCeiling.
	VsCommitCeiling float64 `json:"multipleOfCommitCeiling,omitempty"`
	Profile         string  `json:"profile,omitempty"`
	LoadAvg         string  `json:"loadAverage"`     // /proc/loadavg right after the scenario
	Floor           *Floor  `json:"floor,omitempty"` // issue 41's floor and target, where it has one (floors.go)
	// The server process's CPU time (user + system) per request, and the cores it used on
	// average: what a request costs the server whatever else the machine is doing.
	CPUPerRequest float64 `json:"serverCpuUsPerRequest"`
	ServerCores   float64 `json:"serverCores"`
	Rounds        []Round `json:"rounds,omitempty"` // every round's figures when there were several
	// With -profile: the server's Go memory after the scenario (runtime.MemStats HeapInuse and
	// Sys); the rest of its RSS is the binary and SQLite's own allocations (page caches, statements).
	GoHeapInuseMiB float64 `json:"goHeapInuseMiB,omitempty"`
	GoSysMiB       float64 `json:"goSysMiB,omitempty"`
	// Batches only: the events each request carries, and events recorded per second (every event
	// of a 2xx answer is a new one, created: the probe checks that).
	EventsPerRequest int     `json:"eventsPerRequest,omitempty"`
	EventsPerSecond  float64 `json:"eventsPerSecond,omitempty"`
}

// Round is one round's headline figures of a scenario.
type Round struct {
	RPS   float64 `json:"requestsPerSecond"`
	P99   float64 `json:"p99Ms"`
	Ratio float64 `json:"ratioToCeiling"`
}

// median picks the round with the median requests/s and gives it the median ratio.
func median(rs []Result) Result {
	if len(rs) == 1 {
		return rs[0]
	}
	byRPS := slices.Clone(rs)
	slices.SortFunc(byRPS, func(a, b Result) int { return cmp.Compare(a.RPS, b.RPS) })
	m := byRPS[len(byRPS)/2]
	ratios := make([]float64, len(rs))
	for i, r := range rs {
		ratios[i] = r.Ratio
		m.Rounds = append(m.Rounds, Round{RPS: r.RPS, P99: r.P99, Ratio: r.Ratio})
		m.PeakRSSMiB = max(m.PeakRSSMiB, r.PeakRSSMiB)
		if r.Note != "" {
			m.Note = r.Note
		}
	}
	slices.Sort(ratios)
	m.Ratio = ratios[len(ratios)/2]
	return m
}

// Report is the whole run.
type Report struct {
	Store       string    `json:"store"`
	StartedAt   time.Time `json:"startedAt"`
	GoVersion   string    `json:"goVersion"`
	CPUs        int       `json:"cpus"`
	LoadAvg     string    `json:"loadAverageAtStart"`
	Duration    string    `json:"duration"`
	Connections int       `json:"connections"`
	Seed        Sizes     `json:"seed"`
	SeedRows    int       `json:"seedRows"`
	SeedSeconds float64   `json:"seedSeconds"`
	Rounds      int       `json:"rounds"`
	Command     string    `json:"command"`
	// CommitCeiling is the store's single-commit ceiling on this machine, measured before the
	// server starts: one-row write transactions through store.DB.Tx, one at a time, per second.
	// Durable writes are judged against it: only committing many requests' transactions together
	// (group commit) lets write scenarios go past it.
	CommitCeiling float64     `json:"commitCeilingPerSecond"`
	Scenarios     []Result    `json:"scenarios"`
	BillingDay    *BillingDay `json:"billingDay,omitempty"` // (k), when it ran
	// PriceMigration is (m), when it ran.
	PriceMigration *PriceMigrationRun `json:"priceMigration,omitempty"`
}

// run is the whole harness: check the options, build the server, seed a fresh store, measure the
// single-commit ceiling, run the selected scenarios round by round (or compare tracing), then the
// billing day and the price migration when named, and report.
func run(ctx context.Context, o options, out io.Writer) error {
	selected, err := checkOptions(o)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "remit-load-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(out, "temporary folder: %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	rep := &Report{Store: o.store, StartedAt: time.Now().UTC(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		LoadAvg: loadAvg(), Duration: o.duration.String(), Connections: o.connections, Seed: o.sizes, Rounds: o.rounds,
		Command: "go run ./cmd/remit-load " + strings.Join(os.Args[1:], " ")}
	bin, err := serverBinary(ctx, o, tmp, out)
	if err != nil {
		return err
	}
	dbURL, drop, err := freshStore(ctx, o, tmp, out)
	if err != nil {
		return err
	}
	defer drop()
	addr, err := freePort()
	if err != nil {
		return err
	}
	base := "http://" + addr
	fx, err := seedAndCeiling(ctx, o, rep, dbURL, base, tmp, out)
	if err != nil {
		return err
	}
	if o.tracing > 0 {
		return compareTracing(ctx, o, bin, dbURL, addr, tmp, fx, selected, out)
	}
	srv, err := startServer(ctx, bin, dbURL, addr, tmp, o)
	if err != nil {
		return err
	}
	defer func() { srv.stop() }() // the server of the moment: the floors restart it
	fl := &floors{o: o, dbURL: dbURL, base: base, fx: fx, tmp: tmp, duration: o.floorDuration, out: out,
		// pgbench's clients need the PostgreSQL connections the idle server holds (its pool).
		stopServer: func() { srv.stop() },
		startServer: func() (err error) {
			srv, err = startServer(ctx, bin, dbURL, addr, tmp, o)
			return err
		}}
	all := scenarios(base, fx, newRunID())
	rounds, err := runRounds(ctx, o, rep, all, selected, func() *server { return srv }, fl, out)
	if err != nil {
		return err
	}
	for _, sc := range all {
		if rs := rounds[sc.name]; len(rs) > 0 {
			rep.Scenarios = append(rep.Scenarios, median(rs))
		}
	}
	if selected["billing-day"] {
		srv.stop() // the billing day runs on a server of its own, with the sandbox's latency
		bd, err := runBillingDay(ctx, o, bin, dbURL, tmp, fx, out)
		if err != nil {
			return err
		}
		rep.BillingDay = &bd
	}
	if selected["price-migration"] {
		srv.stop() // the migration runs on a server of its own, started after its seed
		pm, err := runPriceMigration(ctx, o, bin, dbURL, tmp, fx, out)
		if err != nil {
			return err
		}
		rep.PriceMigration = &pm
	}
	return report(o, rep, out)
}

// checkOptions refuses options the harness cannot run with and returns the selected scenarios.
func checkOptions(o options) (map[string]bool, error) {
	if o.store != "sqlite" && o.store != "postgres" {
		return nil, fmt.Errorf("-store must be sqlite or postgres, not %q", o.store)
	}
	if o.sizes.Customers < 1 || o.sizes.Invoices < o.sizes.Customers || o.sizes.Entries < 0 {
		return nil, errors.New("seed sizes: need at least 1 customer and at least one invoice per customer")
	}
	if o.connections < 1 || o.duration <= 0 || o.rounds < 1 || o.billingDay < 1 || o.migrations < 1 {
		return nil, errors.New("-connections, -duration, -rounds, -subscriptions and -migrations must be positive")
	}
	if o.store == "postgres" && o.postgresURL == "" {
		return nil, errors.New("-store postgres needs -postgres URL or REMIT_TEST_POSTGRES_URL")
	}
	return selectScenarios(o.scenarios)
}

// serverBinary is the remit binary to run: -server-bin, or one built into tmp (with the floor
// route when -floors).
func serverBinary(ctx context.Context, o options, tmp string, out io.Writer) (string, error) {
	if o.serverBin != "" {
		return o.serverBin, nil
	}
	bin := filepath.Join(tmp, "remit")
	args := []string{"build", "-o", bin}
	if o.floors {
		args = append(args, "-tags", "remitfloor") // (b)'s floor route beside the ceiling (wire/floor.go)
	}
	fmt.Fprintln(out, "go "+strings.Join(args, " ")+" ./cmd/remit ...")
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/remit")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if root, err := moduleRoot(); err == nil {
		cmd.Dir = root
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/remit: %w", err)
	}
	return bin, nil
}

// freshStore is the run's empty store: a SQLite file in tmp, or a fresh PostgreSQL schema. drop
// removes the schema (nothing for SQLite, nor with -keep).
func freshStore(ctx context.Context, o options, tmp string, out io.Writer) (dbURL string, drop func(), err error) {
	if o.store == "sqlite" {
		return "sqlite:" + filepath.Join(tmp, "remit.db"), func() {}, nil
	}
	u, dropSchema, err := freshSchema(ctx, o.postgresURL)
	if err != nil {
		return "", nil, err
	}
	if o.keep {
		fmt.Fprintf(out, "PostgreSQL store: %s\n", u)
		return u, func() {}, nil
	}
	return u, dropSchema, nil
}

// seedAndCeiling seeds the store and measures its single-commit ceiling, into the report.
func seedAndCeiling(ctx context.Context, o options, rep *Report, dbURL, base, tmp string, out io.Writer) (*Fixture, error) {
	fmt.Fprintf(out, "seeding %s: %d customers, %d invoices, %d ledger entries ...\n", o.store, o.sizes.Customers, o.sizes.Invoices, o.sizes.Entries)
	began := time.Now()
	fx, err := seed(ctx, dbURL, base, o.sizes, out)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	rep.SeedSeconds = time.Since(began).Seconds()
	for _, n := range fx.Counts {
		rep.SeedRows += n
	}
	fmt.Fprintf(out, "seeded %d rows in %s: %v\n", rep.SeedRows, time.Since(began).Round(time.Second), fx.Counts)
	ccURL := dbURL
	if o.store == "sqlite" {
		ccURL = "sqlite:" + filepath.Join(tmp, "commit-ceiling.db") // same disk, its own file
	}
	if rep.CommitCeiling, err = commitCeiling(ctx, ccURL, 3*time.Second); err != nil {
		return nil, fmt.Errorf("commit ceiling: %w", err)
	}
	fmt.Fprintf(out, "single-commit ceiling: %.0f durable one-row transactions/s, one at a time\n", rep.CommitCeiling)
	return fx, nil
}

// runRounds runs every selected scenario once a round, in order, on the server of the moment
// (srv: the floors restart it), and returns each scenario's rounds. With several rounds a
// scenario's figures are those of its median round (by requests/s), and its ratio the median of
// its rounds' ratios to the same round's ceiling, so that a burst of load from elsewhere on the
// machine moves one round, not the result.
func runRounds(ctx context.Context, o options, rep *Report, all []scenario, selected map[string]bool, srv func() *server,
	fl *floors, out io.Writer) (map[string][]Result, error) {
	rounds := make(map[string][]Result)
	for round := 1; round <= o.rounds; round++ {
		var ceiling float64
		for _, sc := range all {
			if !selected[sc.name] {
				continue
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res := Result{Scenario: sc.name, Letter: sc.letter, Request: sc.request, Available: true}
			if sc.probe != nil {
				if note := sc.probe(); note != "" {
					res.Available, res.Note = false, note
					rounds[sc.name] = append(rounds[sc.name], res)
					fmt.Fprintf(out, "(%s) %s: not available: %s\n", sc.letter, sc.name, note)
					continue
				}
			}
			fmt.Fprintf(out, "round %d/%d (%s) %s: %s for %s from %d connections ...\n", round, o.rounds, sc.letter, sc.name, sc.request, o.duration, o.connections)
			measureScenario(o, sc, srv(), round, &res)
			if sc.name == "ceiling" {
				ceiling = res.RPS
			}
			if ceiling > 0 {
				res.Ratio = res.RPS / ceiling
			}
			if sc.write && rep.CommitCeiling > 0 {
				res.VsCommitCeiling = res.RPS / rep.CommitCeiling
			}
			fmt.Fprintf(out, "    %.0f req/s, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, %d errors, peak RSS %.0f MiB, %.0f%% of ceiling, server %.0f µs CPU/request (%.2f cores), load average %s\n",
				res.RPS, res.P50, res.P99, res.P999, res.Errors, res.PeakRSSMiB, 100*res.Ratio, res.CPUPerRequest, res.ServerCores, res.LoadAvg)
			if o.floors {
				var err error
				if res.Floor, err = fl.measure(ctx, sc, res); err != nil {
					return nil, err
				}
			}
			rounds[sc.name] = append(rounds[sc.name], res)
			printDetails(out, sc, res)
		}
	}
	return rounds, nil
}

// measureScenario warms up, then measures the scenario (and its beside load) on srv for
// -duration: throughput and latencies, the server's CPU and peak memory, the machine's load, and
// in round 1 with -profile a CPU profile.
func measureScenario(o options, sc scenario, srv *server, round int, res *Result) {
	attacker := func() *vegeta.Attacker { return newAttacker(o.connections) }
	if o.warmup > 0 {
		for range attacker().Attack(sc.target, vegeta.Rate{}, o.warmup, sc.name+"-warmup") {
		}
	}
	srv.resetPeakRSS()
	var profDone chan string
	if o.profileDir != "" && round == 1 {
		profDone = make(chan string, 1)
		go func() { profDone <- srv.profile(o.profileDir, sc.name, o.duration) }()
	}
	cpu0 := srv.cpuTime()
	besideDone := runBeside(sc, o.duration)
	res.measure(attacker().Attack(sc.target, vegeta.Rate{}, o.duration, sc.name))
	res.Beside = <-besideDone
	if cpu := srv.cpuTime() - cpu0; res.Requests > 0 && cpu > 0 {
		res.CPUPerRequest = float64(cpu) / float64(time.Microsecond) / float64(res.Requests)
		res.ServerCores = cpu.Seconds() / res.Seconds
	}
	res.PeakRSSMiB = srv.peakRSS()
	res.LoadAvg = loadAvg()
	if sc.events > 0 {
		res.EventsPerRequest, res.EventsPerSecond = sc.events, res.RPS*float64(sc.events)
	}
	if profDone != nil {
		res.Profile = <-profDone
		res.GoHeapInuseMiB, res.GoSysMiB = srv.goMemory()
	}
	if sc.exhausted != nil && sc.exhausted() {
		res.Note = "the seeded drafts ran out during the run: later requests finalized already-finalized invoices (409)"
	}
}

// printDetails prints what a scenario's measurement has beyond its headline line: events/s, the
// server's Go memory, error samples, and the beside load's figures.
func printDetails(out io.Writer, sc scenario, res Result) {
	if res.EventsPerSecond > 0 {
		fmt.Fprintf(out, "    %.0f events/s (%d events per request)\n", res.EventsPerSecond, res.EventsPerRequest)
	}
	if res.GoSysMiB > 0 {
		fmt.Fprintf(out, "      server Go memory: heap in use %.0f MiB, obtained from the OS %.0f MiB\n", res.GoHeapInuseMiB, res.GoSysMiB)
	}
	for _, e := range res.ErrorSamples {
		fmt.Fprintf(out, "      error: %s\n", e)
	}
	if b := res.Beside; b != nil {
		fmt.Fprintf(out, "    beside it, %s from %d connections: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors %v %s\n",
			b.Request, sc.besideConnections, b.RPS, b.P50, b.P99, b.Errors, b.StatusCodes, b.Note)
		for _, e := range b.ErrorSamples {
			fmt.Fprintf(out, "      error: %s\n", e)
		}
	}
}

// report prints the results' table (and the billing day's and the migration's) and writes them
// as JSON with -json.
func report(o options, rep *Report, out io.Writer) error {
	fmt.Fprintln(out)
	printTable(out, rep)
	if rep.BillingDay != nil {
		printBillingDay(out, rep.Store, rep.BillingDay)
	}
	if rep.PriceMigration != nil {
		printPriceMigration(out, rep.Store, rep.PriceMigration)
	}
	return writeJSON(o.jsonPath, rep, out)
}

// writeJSON writes v, indented, to the -json path: nothing without one, out for "-".
func writeJSON(path string, v any, out io.Writer) error {
	if path == "" {
		return nil
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	b = append(b, '\n')
	if path == "-" {
		_, err := out.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// runBeside starts the scenario's beside load, if any, for d, and delivers its measurement (nil
// without one) when it ends.
func runBeside(sc scenario, d time.Duration) <-chan *Result {
	out := make(chan *Result, 1)
	if sc.beside == nil {
		out <- nil
		return out
	}
	go func() {
		att := newAttacker(sc.besideConnections)
		r := &Result{Scenario: sc.beside.name, Request: sc.beside.request, Available: true}
		r.measure(att.Attack(sc.beside.target, vegeta.Rate{}, d, sc.beside.name))
		if sc.beside.exhausted != nil && sc.beside.exhausted() {
			r.Note = "the seeded drafts ran out during the run: later requests finalized already-finalized invoices (409)"
		}
		out <- r
	}()
	return out
}

// newAttacker is an attacker of n connections kept alive, each with one request in flight.
func newAttacker(n int) *vegeta.Attacker {
	return vegeta.NewAttacker(vegeta.Workers(uint64(n)), vegeta.MaxWorkers(uint64(n)), vegeta.Connections(n), vegeta.MaxConnections(n),
		vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(512))
}

// measure reads an attack's results: exact latency quantiles over every request.
func (r *Result) measure(results <-chan *vegeta.Result) {
	var lat []time.Duration
	var first, last time.Time
	r.StatusCodes = map[string]int{}
	ok := 0
	for res := range results {
		lat = append(lat, res.Latency)
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if end := res.Timestamp.Add(res.Latency); end.After(last) {
			last = end
		}
		r.StatusCodes[strconv.Itoa(int(res.Code))]++
		if res.Code >= 200 && res.Code < 300 && res.Error == "" {
			ok++
			continue
		}
		r.Errors++
		if len(r.ErrorSamples) < 3 {
			msg := res.Error
			if len(res.Body) > 0 {
				msg += ": " + strings.TrimSpace(string(res.Body))
			}
			r.ErrorSamples = append(r.ErrorSamples, msg)
		}
	}
	r.Requests = len(lat)
	if r.Requests == 0 {
		return
	}
	r.Seconds = last.Sub(first).Seconds()
	r.RPS = float64(ok) / r.Seconds
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(lat)))) - 1
		i = max(0, min(i, len(lat)-1))
		return float64(lat[i]) / float64(time.Millisecond)
	}
	r.P50, r.P99, r.P999 = q(0.50), q(0.99), q(0.999)
}

func printTable(out io.Writer, rep *Report) {
	fmt.Fprintf(out, "store %s, %d connections, %s per scenario, %d round(s), %d CPUs, load average at start %s, %s\n",
		rep.Store, rep.Connections, rep.Duration, rep.Rounds, rep.CPUs, rep.LoadAvg, rep.GoVersion)
	fmt.Fprintf(out, "seed: %d customers, %d invoices, %d ledger entries (%d rows in %.0f s)\n",
		rep.Seed.Customers, rep.Seed.Invoices, rep.Seed.Entries, rep.SeedRows, rep.SeedSeconds)
	fmt.Fprintf(out, "single-commit ceiling: %.0f durable transactions/s (vs 1-commit: a write scenario's requests/s as a multiple of it)\n\n", rep.CommitCeiling)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50 ms\tp99 ms\tp99.9 ms\terrors\tpeak RSS MiB\tvs (a)\tvs 1-commit\tserver CPU µs/req\t")
	for _, r := range rep.Scenarios {
		name := "(" + r.Letter + ") " + r.Scenario
		if !r.Available {
			fmt.Fprintf(tw, "%s\tn/a\t\t\t\t\t\t\t\t\t\n", name)
			continue
		}
		vsCommit := ""
		if r.VsCommitCeiling > 0 {
			vsCommit = fmt.Sprintf("%.1f×", r.VsCommitCeiling)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%.0f\t%.0f%%\t%s\t%.0f\t\n", name, r.RPS, r.P50, r.P99, r.P999, r.Errors, r.PeakRSSMiB, 100*r.Ratio, vsCommit, r.CPUPerRequest)
	}
	tw.Flush()
	for _, r := range rep.Scenarios {
		if r.EventsPerSecond > 0 {
			fmt.Fprintf(out, "(%s) %s: %.0f events/s (%d events per request)\n", r.Letter, r.Scenario, r.EventsPerSecond, r.EventsPerRequest)
		}
	}
	for _, r := range rep.Scenarios {
		if r.Floor != nil {
			fmt.Fprintf(out, "(%s) %s against its floor, %s:\n    %s\n", r.Letter, r.Scenario, r.Floor.What, r.Floor.line(r))
		}
	}
	for _, r := range rep.Scenarios {
		if r.Note != "" {
			fmt.Fprintf(out, "(%s) %s: %s\n", r.Letter, r.Scenario, r.Note)
		}
	}
}

// --- scenarios ---

type scenario struct {
	letter, name, request string
	write                 bool // each request commits a durable write
	target                vegeta.Targeter
	probe                 func() string // "" when the scenario can run, else why not
	exhausted             func() bool
	// beside is load run at the same time as the measured one, from besideConnections
	// connections, measured on its own (Result.Beside).
	beside            *scenario
	besideConnections int
	events            int // events per request (a batch): events/s is reported beside req/s
}

var scenarioNames = []string{"ceiling", "invoice-get", "balance-get", "balance-grant", "receipts-list", "usage-events", "invoice-finalize",
	"grant-beside-charges", "usage-meters", "usage-batch", "billing-day", "entitlement-check", "price-migration"}

func selectScenarios(spec string) (map[string]bool, error) {
	sel := map[string]bool{"ceiling": true}
	if spec == "" || spec == "all" {
		for _, n := range scenarioNames {
			sel[n] = n != "billing-day" && n != "price-migration" // minutes of their own: only when named
		}
		return sel, nil
	}
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		found := false
		for i, n := range scenarioNames {
			if s == n || s == string(rune('a'+i)) {
				sel[n], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q; scenarios: %s (or a-m)", s, strings.Join(scenarioNames, ", "))
		}
	}
	return sel, nil
}

func scenarios(base string, fx *Fixture, run string) []scenario {
	l := &loadTargets{base: base, fx: fx, run: run, scope: "environment=sandbox&merchantAccountId=" + url.QueryEscape(fx.MerchantID)}
	l.readHeader = http.Header{"Authorization": {"Bearer " + fx.APIKey}}
	all := append(l.readAndGrantScenarios(), l.finalizeScenarios()...)
	all = append(all, l.usageScenarios()...)
	all = append(all, entitlementScenario(base, l.scope, fx, l.write))
	slices.SortStableFunc(all, func(a, b scenario) int { return cmp.Compare(a.letter, b.letter) }) // run and report in letter order
	return all
}

// loadTargets builds the scenarios' requests: the server, the seed's merchant account (scope) and
// API key, and the run's Idempotency-Keys and event IDs (unique across runs on one store).
type loadTargets struct {
	base, scope, run string
	fx               *Fixture
	readHeader       http.Header
	seq              atomic.Int64
}

// write is a write's headers, with a new Idempotency-Key.
func (l *loadTargets) write() http.Header {
	return http.Header{"Authorization": {"Bearer " + l.fx.APIKey}, "Content-Type": {"application/json"},
		"Idempotency-Key": {"load-" + l.run + "-" + strconv.FormatInt(l.seq.Add(1), 10)}}
}

// customer is a seeded customer at random.
func (l *loadTargets) customer() string { return l.fx.Customers[mrand.IntN(len(l.fx.Customers))] }

// get targets GET base+path()+"?"+scope (path may carry its own query after the scope: query()).
func (l *loadTargets) get(path func() string, query func() string) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		t.Method, t.Header = http.MethodGet, l.readHeader
		t.URL = l.base + path() + "?" + l.scope
		if query != nil {
			t.URL += query()
		}
		return nil
	}
}

// post targets a write: POST base+path()+"?"+scope with body(), a new Idempotency-Key each.
func (l *loadTargets) post(path func() string, body func() []byte) vegeta.Targeter {
	return func(t *vegeta.Target) error {
		t.Method, t.Header = http.MethodPost, l.write()
		t.URL = l.base + path() + "?" + l.scope
		t.Body = body()
		return nil
	}
}

// probe sends one write outside the measurement and returns its status.
func (l *loadTargets) probe(path, body string) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, l.base+path+"?"+l.scope, strings.NewReader(body))
	req.Header = l.write()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// readAndGrantScenarios are (a) to (e): the ceiling, the reads and the balance grant.
func (l *loadTargets) readAndGrantScenarios() []scenario {
	fixed := func(s string) func() string { return func() string { return s } }
	fx := l.fx
	return []scenario{
		{letter: "a", name: "ceiling", request: "GET " + wire.CeilingPath, target: func(t *vegeta.Target) error {
			t.Method, t.URL = http.MethodGet, l.base+wire.CeilingPath
			return nil
		}},
		{letter: "b", name: "invoice-get", request: "GET /v1/invoices/{id}",
			target: l.get(func() string { return "/v1/invoices/" + fx.Invoices[mrand.IntN(len(fx.Invoices))] }, nil)},
		{letter: "c", name: "balance-get", request: "GET /v1/customers/{id}/balance",
			target: l.get(func() string { return "/v1/customers/" + l.customer() + "/balance" }, nil)},
		{letter: "d", name: "balance-grant", write: true, request: "POST /v1/customers/{id}/balance/grant (Idempotency-Key)",
			target: l.post(func() string { return "/v1/customers/" + l.customer() + "/balance/grant" }, grantBody)},
		{letter: "e", name: "receipts-list", request: "GET /v1/payment-receipts?customer={id}",
			target: l.get(fixed("/v1/payment-receipts"), func() string { return "&customer=" + l.customer() + "&limit=20" })},
	}
}

// grantBody is the balance grant scenarios' request body.
func grantBody() []byte {
	return []byte(`{"currency":"USD","amount":500,"description":"Load test credit"}`)
}

// finalizeScenarios are (g), finalizing the seeded drafts in turn, and (h), grants beside the
// finalization of drafts that charge a card.
func (l *loadTargets) finalizeScenarios() []scenario {
	finalize := func(drafts []string) (vegeta.Targeter, func() bool) {
		var n atomic.Int64
		path := func() string { return "/v1/invoices/" + drafts[int((n.Add(1)-1)%int64(len(drafts)))] + "/finalize" }
		return l.post(path, func() []byte { return []byte(`{"finalizedByRef":"load"}`) }),
			func() bool { return n.Load() > int64(len(drafts)) }
	}
	drafts, draftsOut := finalize(l.fx.Drafts)
	charges, chargesOut := finalize(l.fx.ChargeDrafts)
	return []scenario{
		{letter: "g", name: "invoice-finalize", write: true, request: "POST /v1/invoices/{draft}/finalize (Idempotency-Key)",
			target: drafts, exhausted: draftsOut},
		{letter: "h", name: "grant-beside-charges", write: true,
			request: "POST .../balance/grant while 64 connections finalize charge_automatically drafts (run the server with REMIT_SANDBOX_PROCESSOR_LATENCY)",
			target:  l.post(func() string { return "/v1/customers/" + l.customer() + "/balance/grant" }, grantBody),
			beside: &scenario{letter: "h", name: "charges", request: "POST /v1/invoices/{charge draft}/finalize",
				target: charges, exhausted: chargesOut}, besideConnections: 64},
	}
}

// usageScenarios are (f), (i) and (j): usage events one at a time, on five meters of every
// aggregation, and in batches.
func (l *loadTargets) usageScenarios() []scenario {
	events := func() string { return "/v1/usage-events" }
	return []scenario{
		{letter: "f", name: "usage-events", write: true, request: "POST /v1/usage-events (Idempotency-Key)",
			target: l.post(events, func() []byte {
				return []byte(`{"eventId":"load-` + l.run + `-` + strconv.FormatInt(l.seq.Add(1), 10) + `","customerId":"` + l.customer() +
					`","meterId":"` + meterID + `","quantity":1}`)
			}), probe: func() string {
				status, err := l.probe(events(), `{"eventId":"load-probe-`+l.run+`","customerId":"`+l.fx.Customers[0]+`","meterId":"`+meterID+`","quantity":1}`)
				switch {
				case err != nil:
					return "probe failed: " + err.Error()
				case status == http.StatusNotImplemented:
					return "POST /v1/usage-events answers 501 not_implemented in this build (the usage capability is not merged)"
				}
				return ""
			}},
		{letter: "i", name: "usage-meters", write: true, request: "POST /v1/usage-events (Idempotency-Key), five meters of every aggregation in turn",
			target: l.post(events, func() []byte {
				n := l.seq.Add(1)
				return []byte(`{"eventId":"load-` + l.run + `-` + strconv.FormatInt(n, 10) + `","customerId":"` + l.customer() +
					`","meterId":"` + loadMeters[n%int64(len(loadMeters))][0] + `","quantity":` + strconv.FormatInt(1+n%10, 10) +
					`,"properties":{"user":"u` + strconv.FormatInt(n%1000, 10) + `"}}`)
			}), probe: l.createMeters},
		{letter: "j", name: "usage-batch", write: true, events: usageBatchSize,
			request: fmt.Sprintf("POST /v1/usage-events/batch (Idempotency-Key), %d new events each", usageBatchSize),
			target: l.post(func() string { return "/v1/usage-events/batch" }, func() []byte {
				return usageBatch(l.run, l.seq.Add(1), usageBatchSize, l.customer)
			}), probe: func() string { return probeBatch(l.base, l.scope, l.write(), usageBatch(l.run, 0, 2, l.customer)) }},
	}
}

// createMeters is (i)'s probe: it creates the meters of loadMeters but the first; "" when done.
func (l *loadTargets) createMeters() string {
	for _, m := range loadMeters[1:] {
		body := `{"meterId":"` + m[0] + `","aggregation":"` + m[1] + `"`
		if m[1] == "unique_count" {
			body += `,"uniqueProperty":"user"`
		}
		status, err := l.probe("/v1/meters", body+"}")
		if err != nil {
			return "creating meters failed: " + err.Error()
		}
		if status != http.StatusCreated {
			return fmt.Sprintf("POST /v1/meters answered %d in this build", status)
		}
	}
	return ""
}

// usageBatchSize is how many events each request of the usage-batch scenario carries.
const usageBatchSize = 500

// usageBatch is the body of batch n: size new events of random customers on the seed's sum meter.
func usageBatch(run string, n int64, size int, customer func() string) []byte {
	b := make([]byte, 0, size*110)
	b = append(b, `{"events":[`...)
	for i := range size {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"eventId":"load-`+run+`-b`+strconv.FormatInt(n, 10)+`-`+strconv.Itoa(i)+`","customerId":"`+customer()+
			`","meterId":"`+meterID+`","quantity":1}`...)
	}
	return append(b, `]}`...)
}

// probeBatch sends one small batch: "" when it answers 200 with every event created.
func probeBatch(base, scope string, h http.Header, body []byte) string {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/usage-events/batch?"+scope, strings.NewReader(string(body)))
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "probe failed: " + err.Error()
	}
	defer res.Body.Close()
	var env struct {
		Data struct {
			Created int `json:"created"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&env) != nil || env.Data.Created != 2 {
		return fmt.Sprintf("POST /v1/usage-events/batch answered %d, not 200 with both events created, in this build", res.StatusCode)
	}
	return ""
}

// loadMeters are the meters of the usage-meters scenario: ID and aggregation. The first is the
// seed's sum meter, never created (a meter used before it is created is a sum meter).
var loadMeters = [][2]string{{meterID, "sum"}, {"load_count", "count"}, {"load_max", "max"}, {"load_unique", "unique_count"}, {"load_latest", "latest"}}

// --- the server child ---

type server struct {
	cmd     *exec.Cmd
	base    string
	log     *os.File
	done    chan error
	stopped bool
}

func startServer(ctx context.Context, bin, dbURL, addr, dir string, o options) (*server, error) {
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"REMIT_DATABASE_URL="+dbURL, "REMIT_ADDR="+addr, "REMIT_PUBLIC_URL=http://"+addr,
		// The harness measures the server, not the per-key limit (100/s by default).
		"REMIT_RATE_LIMIT=1000000000", "REMIT_RATE_BURST=1000000000",
		"REMIT_LOAD_CEILING=true", "REMIT_LOG_LEVEL="+o.logLevel, "REMIT_REDIS_URL=")
	if o.profileDir != "" {
		cmd.Env = append(cmd.Env, "REMIT_PPROF=true")
	}
	cmd.Env = append(cmd.Env, o.serverEnv...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, log: logf, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("remit serve exited: %v (log: %s)", err, logf.Name())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("remit serve did not become ready in 60 s")
		}
	}
}

func (s *server) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
}

// resetPeakRSS resets the server's VmHWM to its current RSS (Linux: clear_refs 5), so that each
// scenario reports its own peak. When that is not allowed, peaks accumulate over the run.
func (s *server) resetPeakRSS() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0)
}

// peakRSS is the server's VmHWM in MiB (0 where /proc is unavailable).
func (s *server) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// goMemory reads the server's HeapInuse and Sys from /debug/pprof/heap?debug=1, in MiB.
func (s *server) goMemory() (heapInuse, sys float64) {
	res, err := http.Get(s.base + "/debug/pprof/heap?debug=1")
	if err != nil {
		return 0, 0
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		var v float64
		if _, err := fmt.Sscanf(line, "# HeapInuse = %f", &v); err == nil {
			heapInuse = v / (1 << 20)
		}
		if _, err := fmt.Sscanf(line, "# Sys = %f", &v); err == nil {
			sys = v / (1 << 20)
		}
	}
	return heapInuse, sys
}

// cpuTime is the server's CPU time so far (user + system, from /proc/<pid>/stat; 0 elsewhere).
func (s *server) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	rest := string(b)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of the whole line
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux Go supports.
const clockTicks = 100

// profile records a CPU profile of the server while a scenario runs.
func (s *server) profile(dir, name string, d time.Duration) string {
	secs := max(1, int(d.Seconds())-1)
	res, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.base, secs))
	if err != nil {
		return "profile failed: " + err.Error()
	}
	defer res.Body.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "profile failed: " + err.Error()
	}
	path := filepath.Join(dir, name+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return "profile failed: " + err.Error()
	}
	defer f.Close()
	if _, err := io.Copy(f, res.Body); err != nil {
		return "profile failed: " + err.Error()
	}
	return path
}

// --- helpers ---

func freshSchema(ctx context.Context, base string) (string, func(), error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "load_" + hex.EncodeToString(b)
	admin, err := store.Open(ctx, base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.SQL().ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		_, _ = admin.SQL().Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		admin.Close()
	}, nil
}

// commitCeiling measures the store's single-commit ceiling: one-row write transactions through
// store.DB.Tx, one at a time, for d (after a short warm-up), per second. On SQLite that is the
// rate of fsyncs of the write-ahead log the disk allows; on PostgreSQL the rate of its WAL
// flushes plus a round trip. Its table is dropped afterwards.
func commitCeiling(ctx context.Context, dbURL string, d time.Duration) (float64, error) {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	const table = "load_commit_ceiling"
	if _, err := db.SQL().ExecContext(ctx, `CREATE TABLE `+table+` (id BIGINT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return 0, err
	}
	defer db.SQL().ExecContext(context.Background(), `DROP TABLE `+table)
	var id int64
	insert := func() error {
		id++
		return db.Tx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO `+table+` (id, v) VALUES ($1, 'x')`, id)
			return err
		})
	}
	for warm := time.Now(); time.Since(warm) < 300*time.Millisecond; {
		if err := insert(); err != nil {
			return 0, err
		}
	}
	n, start := 0, time.Now()
	for time.Since(start) < d {
		if err := insert(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// startFree starts a server (startServer) on a free loopback port.
func startFree(ctx context.Context, bin, dbURL, dir string, o options) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	return startServer(ctx, bin, dbURL, addr, dir, o)
}

// coresSince is the cores the server kept busy on average over the seconds since its CPU time was
// cpu0 (0 when it used none, or off Linux).
func (s *server) coresSince(cpu0 time.Duration, seconds float64) float64 {
	if cpu := s.cpuTime() - cpu0; cpu > 0 {
		return cpu.Seconds() / seconds
	}
	return 0
}

// failedJobs counts the merchant account's jobs failed for good (0 when the count fails).
func failedJobs(ctx context.Context, db *store.DB, merchantID string) int {
	var n int
	_ = db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE merchant_account_id = $1 AND status = 'failed'`, merchantID).Scan(&n)
	return n
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the module")
	}
	return filepath.Dir(mod), nil
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
