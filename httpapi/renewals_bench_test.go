package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/internal/testkit"
)

// BenchmarkRenewalsAtOneAdvance: REMIT_BENCH_RENEWALS subscriptions (default 100; the figure in
// docs/performance.md is 10,000), their first invoices finalized, all due at one sandbox clock
// advance, which runs every renewal (each a draft invoice and the next renewal's job), while a
// reader keeps reading subscriptions through the API. Reports the advance's renewals/s and the
// reads' p99 during it.
//
//	REMIT_BENCH_RENEWALS=10000 go test -run '^$' -bench RenewalsAtOneAdvance -benchtime 1x ./httpapi/
func BenchmarkRenewalsAtOneAdvance(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("REMIT_BENCH_RENEWALS")); err == nil && v > 0 {
		n = v
	}
	for _, kind := range testkit.Stores() {
		b.Run(string(kind), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := testkit.Start(b, kind, testkit.Options{})
				subs, end := seedSubscriptions(b, e, n)
				// The first invoices finalize an hour after the start: not part of the renewals.
				advanceTo(e, end.AddDate(0, -1, 0).Add(2*time.Hour))
				b.StartTimer()
				start := time.Now()
				reads := readWhile(e, subs, func() {
					e.Must(201, "POST", "/v1/test-helpers/clock/advance", map[string]any{"to": end.Add(time.Second).UTC().Format(time.RFC3339Nano)})
				})
				took := time.Since(start)
				b.StopTimer()
				if got := renewedInvoices(b, e, subs[n-1]); len(got) != 1 {
					b.Fatalf("the last subscription renewed %d times", len(got))
				}
				b.ReportMetric(float64(n)/took.Seconds(), "renewals/s")
				b.ReportMetric(took.Seconds(), "s/advance")
				if len(reads) > 0 {
					slices.Sort(reads)
					b.ReportMetric(float64(reads[len(reads)*99/100].Microseconds())/1000, "read-p99-ms")
					b.ReportMetric(float64(len(reads)), "reads")
				}
			}
		})
	}
}

// seedSubscriptions starts n monthly subscriptions at one moment through the engine (faster than
// n quotes over HTTP) and answers their IDs and their common period end.
func seedSubscriptions(b *testing.B, e *testkit.Env, n int) ([]string, time.Time) {
	e.Must(200, "POST", "/v1/prices", map[string]any{"priceId": "plan", "productId": "pro", "name": "Pro plan", "priceType": "fixed_recurring",
		"currency": "USD", "billingInterval": "month", "unitAmount": 5000})
	for c := range 10 {
		id := fmt.Sprintf("c%d", c)
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": id, "name": "Customer " + id})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-" + id, "customerId": id, "currency": "USD",
			"collectionMethod": "send_invoice"})
	}
	m := mustMerchant(b, e, e.Tenant.Sandbox)
	ctx := context.Background()
	var subs []string
	var end time.Time
	for i := range n {
		c := fmt.Sprintf("c%d", i%10)
		q, err := e.App.Quotes.CreateQuote(ctx, m, remit.QuoteInput{OrderType: remit.OrderSubscriptionCreation, CustomerID: c, BillingAccountID: "ba-" + c,
			Currency: "USD", Lines: []remit.InvoiceLineInput{{PriceID: "plan"}}})
		if err != nil {
			b.Fatal(err)
		}
		acc, err := e.App.Quotes.AcceptQuote(ctx, m, q.QuoteID)
		if err != nil || acc.SubscriptionID == nil {
			b.Fatal(err)
		}
		sub, err := e.App.Quotes.GetSubscription(ctx, m, *acc.SubscriptionID)
		if err != nil {
			b.Fatal(err)
		}
		subs = append(subs, sub.SubscriptionID)
		if sub.CurrentPeriodEnd.After(end) {
			end = sub.CurrentPeriodEnd
		}
	}
	return subs, end
}

// readWhile reads subscriptions through the API, one request at a time, while work runs, and
// answers each read's latency.
func readWhile(e *testkit.Env, subs []string, work func()) []time.Duration {
	var reads []time.Duration
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			default:
			}
			t0 := time.Now()
			if r := e.Do("GET", "/v1/subscriptions/"+subs[k%len(subs)], nil); r.Status != 200 {
				e.T.Errorf("a read during the renewals answered %d", r.Status)
				return
			}
			reads = append(reads, time.Since(t0))
		}
	}()
	work()
	close(done)
	wg.Wait()
	return reads
}
