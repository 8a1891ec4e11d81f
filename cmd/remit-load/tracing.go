package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TracingResult is one scenario's throughput with tracing off and on (-tracing-pairs).
type TracingResult struct {
	Scenario string    `json:"scenario"`
	Off      []float64 `json:"requestsPerSecondOff"` // one per pair
	On       []float64 `json:"requestsPerSecondOn"`
	CPUOff   []float64 `json:"serverCpuUsPerRequestOff"`
	CPUOn    []float64 `json:"serverCpuUsPerRequestOn"`
	// Cost is 1 − on/off of each pair, and its median: how much lower throughput is with tracing
	// on at full sampling.
	Costs      []float64 `json:"costs"`
	MedianCost float64   `json:"medianCost"`
}

// compareTracing measures each selected scenario (not the ceiling, which no span covers) with the
// server's tracing off and on, in pairs of server runs on the same store whose order alternates
// (off then on, on then off, ...), so that drift over the run (the store growing, the machine's
// other load) falls on both sides. Tracing on exports every span (OTEL_TRACES_SAMPLER=always_on)
// over OTLP/HTTP to a receiver in this process that reads and discards what it is sent.
func compareTracing(ctx context.Context, o options, bin, dbURL, addr, tmp string, fx *Fixture, selected map[string]bool, out io.Writer) error {
	recv, exports, stop, err := discardReceiver()
	if err != nil {
		return err
	}
	defer stop()
	on := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + recv, "OTEL_TRACES_SAMPLER=always_on", "OTEL_SERVICE_NAME=remit-load"}
	all := scenarios("http://"+addr, fx, newRunID())
	results := map[string]*TracingResult{}
	var order []string
	for _, sc := range all {
		if selected[sc.name] && sc.name != "ceiling" && sc.beside == nil {
			results[sc.name] = &TracingResult{Scenario: sc.name}
			order = append(order, sc.name)
		}
	}
	if len(order) == 0 {
		return fmt.Errorf("-tracing-pairs: choose scenarios with -scenarios (the ceiling and grant-beside-charges are not compared)")
	}
	for pair := 0; pair < o.tracing; pair++ {
		modes := []bool{false, true}
		if pair%2 == 1 {
			modes = []bool{true, false}
		}
		for _, traced := range modes {
			so := o
			so.serverEnv = slices.Clone(o.serverEnv)
			if traced {
				so.serverEnv = append(so.serverEnv, on...)
			}
			srv, err := startServer(ctx, bin, dbURL, addr, tmp, so)
			if err != nil {
				return err
			}
			err = tracingRun(o, srv, all, results, pair, traced, out)
			srv.stop() // flushes the spans not yet sent
			if err != nil {
				return err
			}
		}
	}
	rep := printTracing(out, order, results)
	fmt.Fprintf(out, "the receiver took %d OTLP export requests\n", exports.Load())
	return writeJSON(o.jsonPath, map[string]any{"store": o.store, "pairs": o.tracing, "duration": o.duration.String(),
		"connections": o.connections, "exportRequests": exports.Load(), "scenarios": rep}, out)
}

// tracingRun measures every compared scenario once on srv, a server run with tracing off or on
// (traced), into results.
func tracingRun(o options, srv *server, all []scenario, results map[string]*TracingResult, pair int, traced bool, out io.Writer) error {
	mode := map[bool]string{false: "off", true: "on"}[traced]
	for _, sc := range all {
		r, ok := results[sc.name]
		if !ok {
			continue
		}
		if sc.probe != nil {
			if note := sc.probe(); note != "" {
				return fmt.Errorf("%s: %s", sc.name, note)
			}
		}
		att := func() *vegeta.Attacker { return newAttacker(o.connections) }
		if o.warmup > 0 {
			for range att().Attack(sc.target, vegeta.Rate{}, o.warmup, sc.name+"-warmup") {
			}
		}
		var prof chan string
		if o.profileDir != "" && pair == 0 {
			prof = make(chan string, 1)
			go func() { prof <- srv.profile(o.profileDir, sc.name+"-tracing-"+mode, o.duration) }()
		}
		cpu0 := srv.cpuTime()
		var res Result
		res.measure(att().Attack(sc.target, vegeta.Rate{}, o.duration, sc.name))
		if prof != nil {
			<-prof
		}
		cpu := 0.0
		if res.Requests > 0 {
			cpu = float64(srv.cpuTime()-cpu0) / float64(time.Microsecond) / float64(res.Requests)
		}
		if traced {
			r.On, r.CPUOn = append(r.On, res.RPS), append(r.CPUOn, cpu)
		} else {
			r.Off, r.CPUOff = append(r.Off, res.RPS), append(r.CPUOff, cpu)
		}
		fmt.Fprintf(out, "pair %d/%d tracing %-3s %-14s %7.0f req/s, p99 %.2f ms, %d errors, server %.0f µs CPU/request\n",
			pair+1, o.tracing, mode, sc.name, res.RPS, res.P99, res.Errors, cpu)
	}
	return nil
}

// printTracing works out each scenario's cost per pair and median cost, prints the table and
// returns the results in order.
func printTracing(out io.Writer, order []string, results map[string]*TracingResult) []*TracingResult {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(out)
	fmt.Fprintln(tw, "scenario\toff req/s (median)\ton req/s (median)\tcost per pair\tmedian cost\tCPU µs/req off → on\t")
	var rep []*TracingResult
	for _, name := range order {
		r := results[name]
		for i := range r.Off {
			if i < len(r.On) && r.Off[i] > 0 {
				r.Costs = append(r.Costs, 1-r.On[i]/r.Off[i])
			}
		}
		r.MedianCost = medianOf(r.Costs)
		costs := ""
		for _, c := range r.Costs {
			costs += fmt.Sprintf("%+.1f%% ", 100*c)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%+.1f%%\t%.0f → %.0f\t\n", name, medianOf(r.Off), medianOf(r.On), costs, 100*r.MedianCost,
			medianOf(r.CPUOff), medianOf(r.CPUOn))
		rep = append(rep, r)
	}
	tw.Flush()
	return rep
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// discardReceiver is an OTLP/HTTP trace receiver on a free loopback port that reads each export
// request, discards it and answers an empty ExportTraceServiceResponse (zero bytes of protobuf).
func discardReceiver() (addr string, exports *atomic.Int64, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	exports = &atomic.Int64{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), exports, func() { _ = srv.Close() }, nil
}
