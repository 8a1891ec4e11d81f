package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/remit-billing/remit"
)

type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	storeErrors prometheus.Counter
	exports     *prometheus.CounterVec
	exportRows  *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remit_http_requests_total", Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "remit_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "remit_store_errors_total", Help: "Requests that failed with an internal (store or engine) error.",
		}),
		exports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remit_exports_total", Help: "CSV exports (docs/exports.md) by dataset and how they ended: completed, canceled (the client went away or stopped reading) or failed (cut off by an error).",
		}, []string{"dataset", "outcome"}),
		exportRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "remit_export_rows_total", Help: "Rows written by CSV exports, by dataset.",
		}, []string{"dataset"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.storeErrors, m.exports, m.exportRows,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// watchVerification exports remit_verify_violations{check}: the violations the last periodic
// verification found, summed over merchant accounts (0 before the first run).
func (m *metrics) watchVerification(v Verification) {
	if v == nil {
		return
	}
	for _, name := range remit.VerificationChecks {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "remit_verify_violations", Help: "Violations found by the last periodic verification (docs/verification.md), by check.",
			ConstLabels: prometheus.Labels{"check": name},
		}, func() float64 { return float64(v.Violations()[name]) }))
	}
}

// watchJobs exports remit_jobs_failed{kind}: the jobs failed for good, over every merchant account,
// read from the store at each scrape (docs/reliability.md, "Scheduled work that fails").
func (m *metrics) watchJobs(j Jobs) {
	if j != nil {
		m.reg.MustRegister(&failedJobs{jobs: j, desc: prometheus.NewDesc("remit_jobs_failed",
			"Scheduled jobs failed for good (GET /v1/jobs?status=failed), by kind; every kind that bills or collects is listed, 0 when none failed.",
			[]string{"kind"}, nil)})
	}
}

// failedJobs is the collector of remit_jobs_failed.
type failedJobs struct {
	jobs Jobs
	desc *prometheus.Desc
}

func (f *failedJobs) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f *failedJobs) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := f.jobs.FailedJobCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(f.desc, errors.New("the store did not answer"))
		return
	}
	for _, kind := range remit.JobKinds {
		if _, ok := counts[kind]; !ok {
			counts[kind] = 0
		}
	}
	for kind, n := range counts {
		ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, float64(n), kind)
	}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// exported counts an export that ended, and the rows it wrote.
func (m *metrics) exported(dataset, outcome string, rows int) {
	m.exports.WithLabelValues(dataset, outcome).Inc()
	m.exportRows.WithLabelValues(dataset).Add(float64(rows))
}

func (m *metrics) storeError(err error) {
	var e *remit.Error
	if !errors.As(err, &e) || e.Code == remit.EInternal {
		m.storeErrors.Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// metricsRoute is GET /metrics: Prometheus's exposition format, behind the bearer token
// REMIT_METRICS_TOKEN when one is set (docs/operations.md, "Metrics endpoint"), compared in
// constant time (as SHA-256 digests, so that not even its length shows).
func (s *Server) metricsRoute() http.Handler {
	h := s.metrics.handler()
	if s.cfg.MetricsToken == "" {
		return h
	}
	want := sha256.Sum256([]byte(s.cfg.MetricsToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(bearerToken(r)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			s.writeError(w, r, remit.Errorf(remit.EUnauthorized, "GET /metrics needs Authorization: Bearer with the token of REMIT_METRICS_TOKEN."))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MetricsHandler serves GET /metrics alone (behind its token, when set), with the headers, request
// ID and log line of every answer: the handler of REMIT_METRICS_ADDR's own listener.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metricsRoute())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, remit.Errorf(remit.ENotFound, "No route %s %s: this address serves GET /metrics only.", r.Method, r.URL.Path))
	})
	return s.withRequestID(mux)
}
