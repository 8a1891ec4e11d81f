package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pgbench 15's summary of a custom script (the lines parsePgbench reads, among others).
const pgbenchOutput = `transaction type: /tmp/remit-load-1/floor_0a1b2c.sql
scaling factor: 1
query mode: prepared
number of clients: 64
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 11661
number of failed transactions: 3 (0.026%)
latency average = 27.395 ms
initial connection time = 112.581 ms
tps = 2336.195401 (without initial connection time)
`

func TestParsePgbench(t *testing.T) {
	tps, lat, failed := parsePgbench(pgbenchOutput)
	if tps != 2336.195401 || lat != 27.395 || failed != 3 {
		t.Errorf("parsePgbench = %v tps, %v ms, %d failed; want 2336.195401, 27.395, 3", tps, lat, failed)
	}
	if tps, _, _ := parsePgbench("pgbench: error: connection refused\n"); tps != 0 {
		t.Errorf("no summary: tps %v, want 0", tps)
	}
}

func TestLibpqURL(t *testing.T) {
	got := libpqURL("postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=load_1&log_statement=all")
	if got != "postgres://postgres@127.0.0.1:5432/test?sslmode=disable" {
		t.Errorf("libpqURL = %q: only libpq's own parameters may stay", got)
	}
}

// TestFloorScriptsVariables: pgbench takes every :name in a script for a variable, inside quotes
// too, so a script may name no variable it does not set (the grant's JSON goes with ~ for :).
func TestFloorScriptsVariables(t *testing.T) {
	ref := regexp.MustCompile(`(^|[^:]):([A-Za-z_][A-Za-z0-9_]*)`)
	set := regexp.MustCompile(`(?m)^\\set ([a-z]+) `)
	for name, script := range map[string]string{"grant": grantScript("floor_x", "run1", 10), "counter": counterScript("floor_x", "run1", 10)} {
		vars := map[string]bool{}
		for _, m := range set.FindAllStringSubmatch(script, -1) {
			vars[m[1]] = true
		}
		for _, m := range ref.FindAllStringSubmatch(script, -1) {
			if !vars[m[2]] {
				t.Errorf("%s script: :%s is no variable it sets", name, m[2])
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
			if !strings.HasPrefix(line, `\`) && !strings.HasSuffix(line, ";") {
				t.Errorf("%s script: %q is not one statement on one line", name, line)
			}
		}
		if !strings.Contains(script, "COMMIT;") || strings.Count(script, "floor_x.") < 2 {
			t.Errorf("%s script does not commit on the scratch schema's tables:\n%s", name, script)
		}
	}
}

// TestPgbenchP99 reads pgbench's per-transaction logs (-l): one file per thread, the latency in µs
// third on each line.
func TestPgbenchP99(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "floor_x")
	var a, b strings.Builder
	for i := 1; i <= 100; i++ { // latencies 1..100 ms, split over two threads' files
		w := &a
		if i%2 == 0 {
			w = &b
		}
		fmt.Fprintf(w, "%d %d %d 0 1796197078 620546\n", i%64, i, i*1000)
	}
	if err := os.WriteFile(prefix+".123", []byte(a.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+".123.1", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := pgbenchP99(prefix); got != 99 {
		t.Errorf("pgbenchP99 = %v ms, want 99", got)
	}
	if left, _ := filepath.Glob(prefix + ".*"); len(left) != 0 {
		t.Errorf("the logs were left behind: %v", left)
	}
	if got := pgbenchP99(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("no logs: %v, want 0", got)
	}
}
