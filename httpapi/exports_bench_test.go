package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/store"
)

// seedBulkInvoices inserts n finalized invoices (and the 100 customers they bill, whose names hold a
// comma and quotes) into the tenant's sandbox account directly in the store, in one statement
// each: creating a million through the API would take the better part of an hour. The invoices
// are a second apart from 2020-01-01, oldest first, without lines.
func seedBulkInvoices(tb testing.TB, e *testkit.Env, n int) {
	tb.Helper()
	start := remit.Micros(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	series := `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < CAST($2 AS BIGINT)) `
	err := e.App.DB.Tx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, series+`INSERT INTO customers (merchant_account_id, id, name, email, metadata, created_at)
			SELECT $1, 'cus-bulk-' || i, 'Bulk "' || i || '", Inc.', 'bulk' || i || '@example.com', '{}', CAST($3 AS BIGINT) FROM n`,
			e.Tenant.Sandbox, 100, start); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, series+`INSERT INTO invoices (merchant_account_id, id, number, customer_id, billing_account_id, currency,
				status, collection_method, subtotal, tax_total, total, amount_due, amount_paid, metadata, finalized_at, paid_at,
				created_at, updated_at)
			SELECT $1, 'inv_bulk_' || (1000000000 + i), 'INV-B' || (1000000000 + i), 'cus-bulk-' || (i % 100), 'ba-bulk-' || (i % 100),
				'USD', 'paid', 'send_invoice', 10000 + i % 1000, 800, 10800 + i % 1000, 10800 + i % 1000, 10800 + i % 1000,
				'{"seed":"bulk"}', CAST($3 AS BIGINT) + CAST(i AS BIGINT) * 1000000, CAST($3 AS BIGINT) + CAST(i AS BIGINT) * 1000000 + 5,
				CAST($3 AS BIGINT) + CAST(i AS BIGINT) * 1000000, CAST($3 AS BIGINT) + CAST(i AS BIGINT) * 1000000 FROM n`,
			e.Tenant.Sandbox, n, start)
		if err == nil && e.Store == testkit.Postgres {
			_, err = tx.Exec(ctx, `ANALYZE customers, invoices`) // as autovacuum would after such a load (SQLite: Remit never analyzes)
		}
		return err
	})
	if err != nil {
		tb.Fatalf("seed %d invoices: %v", n, err)
	}
}

// exportRequest is a GET of an export as the env's tenant, for a client that reads the body itself.
func exportRequest(tb testing.TB, e *testkit.Env, dataset string) *http.Request {
	tb.Helper()
	q := url.Values{"environment": {"sandbox"}, "merchantAccountId": {e.Tenant.Sandbox}}
	req, err := http.NewRequest("GET", e.Server.URL+"/v1/exports/"+dataset+".csv?"+q.Encode(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Tenant.APIKey)
	return req
}

// metricValue reads one sample of GET /metrics (0 when it is not there yet).
func metricValue(t testing.TB, e *testkit.Env, sample string) float64 {
	t.Helper()
	r := e.Must(200, "GET", "/metrics", nil)
	for _, line := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// TestExportStopsWhenTheClientLeaves: a client reads the first 64 kB of an export of 10,000
// invoices (some 3 MB, far more than the connection's buffers hold: the query stops after a few
// hundred rows) and closes the connection.
// The server's query stops: the export ends as canceled, having written only part of the rows,
// and the store serves the next export to its end.
func TestExportStopsWhenTheClientLeaves(t *testing.T) {
	const rows = 10_000
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		seedBulkInvoices(t, e, rows)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Do(exportRequest(t, e, "invoices"))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
		if _, err := io.ReadFull(res.Body, make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		res.Body.Close() // mid-body: the transport closes the connection
		canceled := `remit_exports_total{dataset="invoices",outcome="canceled"}`
		deadline := time.Now().Add(30 * time.Second)
		for metricValue(t, e, canceled) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("the export did not end as canceled within 30 s (completed: %v)",
					metricValue(t, e, `remit_exports_total{dataset="invoices",outcome="completed"}`))
			}
			time.Sleep(5 * time.Millisecond)
		}
		written := metricValue(t, e, `remit_export_rows_total{dataset="invoices"}`)
		if written <= 0 || written >= rows {
			t.Fatalf("the canceled export wrote %v rows of %d", written, rows)
		}
		t.Logf("%s: the query stopped after %v of %d rows", e.Store, written, rows)
		// The next export reads every row.
		res, err = client.Do(exportRequest(t, e, "invoices"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		lines := 0
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines++
		}
		if sc.Err() != nil || lines != rows+1 || metricValue(t, e, `remit_exports_total{dataset="invoices",outcome="completed"}`) != 1 {
			t.Fatalf("the next export: %d lines, %v", lines, sc.Err())
		}
	})
}

// BenchmarkExport measures GET /v1/exports/invoices.csv over REMIT_BENCH_EXPORT_ROWS invoices
// (default 2,000, so that .ci/run's single pass stays short) seeded in the store, read to the end
// by one client over HTTP: rows/s from the request to the last byte, and the process's resident
// memory (server and client: one process) from the first row to the last. Targets (product brief):
// at least 50,000 rows/s, and RSS growing less than 20 MiB over 1,000,000 rows. Figures:
// docs/performance.md "Exports".
//
//	REMIT_BENCH_EXPORT_ROWS=1000000 go test -run '^$' -bench Export -benchtime 1x ./httpapi/
//	REMIT_BENCH_EXPORT_ROWS=1000000 REMIT_TEST_POSTGRES_URL=... go test -run '^$' -bench Export/postgres -benchtime 1x ./httpapi/
func BenchmarkExport(b *testing.B) {
	rows := 2000
	if n, err := strconv.Atoi(os.Getenv("REMIT_BENCH_EXPORT_ROWS")); err == nil && n > 0 {
		rows = n
	}
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			e := testkit.Start(b, kind, testkit.Options{})
			seedStart := time.Now()
			seedBulkInvoices(b, e, rows)
			b.Logf("%s: %d invoices seeded in %v", kind, rows, time.Since(seedStart).Round(time.Millisecond))
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			for b.Loop() {
				start, cpuStart := time.Now(), testkit.ProcessCPU()
				res, err := client.Do(exportRequest(b, e, "invoices"))
				if err != nil {
					b.Fatal(err)
				}
				rd := bufio.NewReaderSize(res.Body, 64<<10)
				var firstRSS, lastRSS, peakRSS int64
				var firstAt time.Time
				lines := 0
				for {
					line, err := rd.ReadSlice('\n')
					if err == bufio.ErrBufferFull {
						b.Fatal("a line longer than 64 kB")
					}
					if len(line) > 0 && bytes.HasSuffix(line, []byte("\n")) {
						lines++
						switch {
						case lines == 2: // the first row
							firstAt, firstRSS = time.Now(), rss(b)
							peakRSS = firstRSS
						case lines%100_000 == 0:
							peakRSS = max(peakRSS, rss(b))
						}
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				res.Body.Close()
				end, cpu := time.Now(), testkit.ProcessCPU()-cpuStart
				lastRSS = rss(b)
				peakRSS = max(peakRSS, lastRSS)
				if res.StatusCode != 200 || lines != rows+1 {
					b.Fatalf("status %d, %d lines for %d rows", res.StatusCode, lines, rows)
				}
				total := end.Sub(start)
				b.ReportMetric(float64(rows)/total.Seconds(), "rows/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(rows), "cpu-µs/row")
				b.ReportMetric(float64(lastRSS-firstRSS)/(1<<20), "MiB-rss-growth")
				b.ReportMetric(float64(peakRSS-firstRSS)/(1<<20), "MiB-rss-peak-growth")
				b.Logf("%s: %d rows in %v (first row after %v): %.0f rows/s, %.1f µs of this process's CPU a row; RSS %.1f MiB at the first row, %.1f MiB at the last (peak %.1f)",
					kind, rows, total.Round(time.Millisecond), firstAt.Sub(start).Round(time.Millisecond), float64(rows)/total.Seconds(),
					float64(cpu.Microseconds())/float64(rows), float64(firstRSS)/(1<<20), float64(lastRSS)/(1<<20), float64(peakRSS)/(1<<20))
			}
		})
	}
}

// rss is the process's resident set size, from /proc/self/statm (Linux).
func rss(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("no /proc/self/statm: %v", err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(raw), &size, &resident); err != nil {
		b.Fatal(err)
	}
	return resident * int64(os.Getpagesize())
}
