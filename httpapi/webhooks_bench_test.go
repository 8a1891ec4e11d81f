package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/remit-billing/remit/internal/testkit"
)

// BenchmarkWebhookDelivery measures delivery throughput: b.N events, already committed, are
// dispatched and delivered by one process's worker loop (16 or 64 attempts in flight) to a
// loopback receiver that answers at once or after a fixed latency. Run with a fixed count, for example
//
//	go test ./httpapi -run '^$' -bench WebhookDelivery -benchtime 5000x
func BenchmarkWebhookDelivery(b *testing.B) {
	cases := []struct {
		latency time.Duration
		conc    int
	}{{0, 16}, {50 * time.Millisecond, 16}, {50 * time.Millisecond, 64}}
	for _, s := range testkit.Stores() {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/receiver=%s/concurrency=%d", s, c.latency, c.conc), func(b *testing.B) {
				cfg := fastConfig("1s")
				cfg.WebhookWorkers = c.conc
				e := testkit.Start(b, s, testkit.Options{Config: cfg})
				rc := newReceiver(b, func(hit, int) int {
					if c.latency > 0 {
						time.Sleep(c.latency) // the receiver's own work, not a wait of the test
					}
					return 200
				})
				createEndpoint(b, e, rc.URL, "invoice.paid")
				for left := b.N; left > 0; left -= 500 {
					emitEvents(b, e, "invoice.paid", min(left, 500))
				}
				b.ResetTimer()
				start := time.Now()
				startWorker(b, e.App)
				testkit.WaitFor(b, 10*time.Minute, "every delivery", func() bool { return len(rc.Hits()) >= b.N })
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
