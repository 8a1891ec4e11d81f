package httpapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/remit-billing/remit/internal/testkit"
)

// TestGrafanaDashboardNamesOnlyExposedMetrics reads deploy/grafana/remit.json and fails when one of
// its queries names a metric that GET /metrics does not expose (after one request, so that the
// request metrics exist).
func TestGrafanaDashboardNamesOnlyExposedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana/remit.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/remit.json is not JSON: %v", err)
	}
	queries := dashboardQueries(dash)
	if len(queries) < 10 {
		t.Fatalf("only %d queries found in the dashboard: %v", len(queries), queries)
	}
	names := map[string][]string{} // metric → the queries naming it
	for _, q := range queries {
		ms := promqlMetrics(q)
		if len(ms) == 0 {
			t.Errorf("query names no metric: %s", q)
		}
		for _, m := range ms {
			names[m] = append(names[m], q)
		}
	}
	testkit.Run(t, func(t *testing.T, e *testkit.Env) {
		e.Must(200, "GET", clockPath, nil)
		fams := scrape(t, e)
		for m, qs := range names {
			if !exposed(fams, m) {
				t.Errorf("the dashboard names %s, which /metrics does not expose (in %q)", m, qs)
			}
		}
	})
}

// exposed reports whether fams has metric m, a histogram's or summary's _bucket, _sum and _count
// series included.
func exposed(fams map[string]*dto.MetricFamily, m string) bool {
	if _, ok := fams[m]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := fams[strings.TrimSuffix(m, suffix)]; ok && strings.HasSuffix(m, suffix) &&
			(f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
			return true
		}
	}
	return false
}

// dashboardQueries are the PromQL of every panel target (expr) and query variable of a dashboard.
func dashboardQueries(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				out = append(out, e)
			}
			if x["type"] == "query" { // a templating variable
				switch q := x["query"].(type) {
				case string:
					out = append(out, q)
				case map[string]any:
					if s, ok := q["query"].(string); ok {
						out = append(out, s)
					}
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

var (
	promStrings    = regexp.MustCompile("\"[^\"]*\"|'[^']*'|`[^`]*`")
	promMatchers   = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promGrouping   = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promLabelVals  = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,[^)]*\)`)
	promIdentifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords   = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan", "e"}
)

// promqlMetrics are the metric names a PromQL expression (or Grafana's label_values(metric,
// label)) reads: identifiers outside strings, label matchers, ranges and grouping clauses that are
// neither a function call nor a keyword nor a Grafana variable ($name).
func promqlMetrics(q string) []string {
	var out []string
	for _, m := range promLabelVals.FindAllStringSubmatch(q, -1) {
		out = append(out, m[1])
	}
	q = promLabelVals.ReplaceAllString(q, " ")
	q = promStrings.ReplaceAllString(q, " ")
	q = promMatchers.ReplaceAllString(q, " ")
	q = promGrouping.ReplaceAllString(q, " ")
	for _, loc := range promIdentifier.FindAllStringIndex(q, -1) {
		name := q[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(q[loc[0]-1:loc[0]], "$.0123456789") {
			continue // a variable, or part of a number such as 1e-9
		}
		if rest := strings.TrimLeft(q[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or an aggregation
		}
		if slices.Contains(promKeywords, strings.ToLower(name)) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// The parser finds the metrics of the dashboard's kinds of query, and only them.
func TestPromQLMetrics(t *testing.T) {
	for q, want := range map[string][]string{
		`sum by (outcome) (rate(remit_payments_total{environment=~"$environment"}[5m])) * 60`:                 {"remit_payments_total"},
		`histogram_quantile(0.99, sum by (le, route) (rate(remit_http_request_duration_seconds_bucket[5m])))`: {"remit_http_request_duration_seconds_bucket"},
		`sum(rate(a_total{outcome="failed"}[15m])) / clamp_min(sum(rate(b_total[15m])), 1e-9)`:                {"a_total", "b_total"},
		`label_values(remit_invoices_finalized_total, environment)`:                                           {"remit_invoices_finalized_total"},
		`max by (kind) (remit_reconciler_backlog) > on (kind) group_left remit_jobs_failed offset 5m`:         {"remit_reconciler_backlog", "remit_jobs_failed"},
		`topk(10, sum by (type) (rate(remit_events_total[$__rate_interval])))`:                                {"remit_events_total"},
	} {
		if got := promqlMetrics(q); !slices.Equal(got, want) {
			t.Errorf("promqlMetrics(%s) = %v, want %v", q, got, want)
		}
	}
}
