package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/remit-billing/remit/internal/testkit"
	"github.com/remit-billing/remit/processor"
	"github.com/remit-billing/remit/wire"
)

// scrape reads GET /metrics as Prometheus does.
func scrape(t *testing.T, e *testkit.Env) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := e.Server.Client().Get(e.Server.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// metric is the value of the sample of name whose labels are kv (name=value, ...); the test fails
// when there is none.
func metric(t *testing.T, fams map[string]*dto.MetricFamily, name string, kv ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("/metrics has no %s", name)
	}
	want := map[string]string{}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		want[k] = v
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(want)
		for k, v := range want {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	t.Fatalf("/metrics has no %s%v", name, kv)
	return 0
}

// wantMetrics checks each name{labels} = value.
func wantMetrics(t *testing.T, e *testkit.Env, want map[string]float64) {
	t.Helper()
	fams := scrape(t, e)
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name, labels, _ := strings.Cut(strings.TrimSuffix(k, "}"), "{")
		var kv []string
		if labels != "" {
			kv = strings.Split(labels, ",")
		}
		if got := metric(t, fams, name, kv...); got != want[k] {
			t.Errorf("%s = %v, want %v", k, got, want[k])
		}
	}
}

// TestBusinessMetrics does each thing the business metrics count through the API and reads it
// back from GET /metrics: invoices finalized, payments by outcome, refunds, usage events ingested,
// the webhook and e-mail queues, dunning retries.
func TestBusinessMetrics(t *testing.T) {
	cfg := wire.Defaults()
	cfg.RateLimit, cfg.RateBurst = 100000, 100000
	cfg.SMTPURL = "smtp://127.0.0.1:1" // messages are queued; no worker runs in the test server
	testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
		const sb = "environment=sandbox"
		zero := map[string]float64{
			"remit_invoices_finalized_total{" + sb + "}":                     0,
			"remit_payments_total{" + sb + ",outcome=succeeded}":             0,
			"remit_payments_total{" + sb + ",outcome=failed}":                0,
			"remit_payments_total{" + sb + ",outcome=requires_action}":       0,
			"remit_refunds_total{" + sb + ",outcome=succeeded}":              0,
			"remit_usage_events_ingested_total{" + sb + "}":                  0,
			"remit_usage_events_ingested_total{environment=production}":      0,
			"remit_events_total{" + sb + ",type=invoice.paid}":               0,
			"remit_webhook_queue_depth":                                      0,
			"remit_webhook_queue_oldest_age_seconds":                         0,
			"remit_email_queue_depth":                                        0,
			"remit_email_queue_oldest_age_seconds":                           0,
			"remit_reconciler_backlog{kind=payment}":                         0,
			"remit_reconciler_backlog{kind=refund}":                          0,
			"remit_dunning_retries_scheduled":                                0,
			"remit_dunning_retries_due":                                      0,
			"remit_invoices_finalized_total{environment=production}":         0,
			"remit_payments_total{environment=production,outcome=succeeded}": 0,
		}
		wantMetrics(t, e, zero)

		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		t.Cleanup(hook.Close)
		e.Must(201, "POST", "/v1/webhook-endpoints", map[string]any{"url": hook.URL, "enabledEvents": []string{"invoice.paid"}})

		k := newPayKit(t, e)
		for id, card := range map[string]string{"paid": "pm_card_visa", "declined": "pm_card_chargeDeclined", "action": "pm_card_threeDSecureRequired"} {
			k.account(id, "charge_automatically")
			k.attach(id, card)
		}
		paid := k.invoice("paid", 5000)
		if paid["status"] != "paid" {
			t.Fatalf("invoice %v", paid["status"])
		}
		k.invoice("declined", 5000)
		k.invoice("action", 5000)
		// A refund of part of the paid invoice, through the sandbox processor.
		e.Must(200, "POST", "/v1/credit-notes", creditNote(paid["invoiceId"].(string), cnLine("", "refund", 1000)))
		// Usage: a repeated eventId counts once.
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "u", "name": "Usage"})
		for _, id := range []string{"u1", "u1", "u2"} {
			e.Must(201, "POST", "/v1/usage-events", map[string]any{"eventId": id, "customerId": "u", "meterId": "api_calls", "quantity": 3})
		}
		// An invoice e-mailed to its customer is queued for the worker.
		e.Must(201, "POST", "/v1/customers", map[string]any{"customerId": "mail", "name": "Mail", "email": "mail@example.com"})
		e.Must(201, "POST", "/v1/billing-accounts", map[string]any{"billingAccountId": "ba-mail", "customerId": "mail", "currency": "USD",
			"collectionMethod": "send_invoice"})
		k.invoice("mail", 700)

		fams := scrape(t, e)
		if n := metric(t, fams, "remit_email_queue_depth"); n < 1 {
			t.Errorf("remit_email_queue_depth %v after an invoice was e-mailed", n)
		}
		if age := metric(t, fams, "remit_email_queue_oldest_age_seconds"); age < 0 || age > 600 {
			t.Errorf("remit_email_queue_oldest_age_seconds %v", age)
		}
		wantMetrics(t, e, map[string]float64{
			"remit_invoices_finalized_total{" + sb + "}":               4,
			"remit_payments_total{" + sb + ",outcome=succeeded}":       1,
			"remit_payments_total{" + sb + ",outcome=failed}":          1,
			"remit_payments_total{" + sb + ",outcome=requires_action}": 1,
			"remit_refunds_total{" + sb + ",outcome=succeeded}":        1,
			"remit_usage_events_ingested_total{" + sb + "}":            2,
			"remit_events_total{" + sb + ",type=invoice.paid}":         1,
			"remit_dunning_retries_scheduled":                          1, // the declined charge's first retry, 3 days on
			"remit_dunning_retries_due":                                0,
			"remit_invoices_finalized_total{environment=production}":   0,
		})

		// The worker's dispatch queues the delivery (on PostgreSQL the chaining pass after the
		// commit may have done it already); its attempt empties the queue.
		testkit.WaitFor(t, 10*time.Second, "the delivery of invoice.paid queued", func() bool {
			if _, err := e.App.Webhooks.DispatchEvents(context.Background()); err != nil {
				t.Fatal(err)
			}
			fams = scrape(t, e)
			return metric(t, fams, "remit_webhook_queue_depth") == 1
		})
		if age := metric(t, fams, "remit_webhook_queue_oldest_age_seconds"); age < 0 || age > 600 {
			t.Errorf("remit_webhook_queue_oldest_age_seconds %v", age)
		}
		if _, err := e.App.Webhooks.DeliverDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		wantMetrics(t, e, map[string]float64{"remit_webhook_queue_depth": 0, "remit_webhook_queue_oldest_age_seconds": 0})

		// Past the retry's time the clock advance runs it (declined again): the next retry is
		// scheduled, none is left due.
		e.AdvanceClock(4 * 24 * 3600)
		wantMetrics(t, e, map[string]float64{"remit_dunning_retries_scheduled": 1, "remit_dunning_retries_due": 0,
			"remit_payments_total{" + sb + ",outcome=failed}": 2})
	})
}

// TestReconcilerBacklogMetric: a charge the processor does not answer in time stays processing,
// and a refund it does not answer stays pending; remit_reconciler_backlog counts both until the
// reconciler resolves them.
func TestReconcilerBacklogMetric(t *testing.T) {
	t.Run("payment", func(t *testing.T) {
		cfg := wire.Defaults()
		cfg.RateLimit, cfg.RateBurst = 100000, 100000
		cfg.SandboxLatency, cfg.ProcessorTimeout = 2*time.Second, 10*time.Millisecond
		testkit.RunWith(t, testkit.Options{Config: &cfg}, func(t *testing.T, e *testkit.Env) {
			k := newPayKit(t, e)
			k.account("slow", "charge_automatically")
			k.attach("slow", "pm_card_visa")
			if inv := k.invoice("slow", 5000); inv["status"] != "open" {
				t.Fatalf("invoice %v with its charge unanswered, want open", inv["status"])
			}
			wantMetrics(t, e, map[string]float64{"remit_reconciler_backlog{kind=payment}": 1, "remit_reconciler_backlog{kind=refund}": 0,
				"remit_payments_total{environment=sandbox,outcome=succeeded}": 0})
		})
	})
	t.Run("refund", func(t *testing.T) {
		proc := &vaultCharges{}
		refundKit(t, proc, func(t *testing.T, e *testkit.Env, id string) {
			proc.mu.Lock()
			proc.refund = func(processor.RefundRequest) (processor.RefundResult, error) {
				return processor.RefundResult{}, errors.New("connection reset")
			}
			proc.mu.Unlock()
			e.Must(200, "POST", "/v1/credit-notes", creditNote(id, cnLine("", "refund", 4000)), testkit.Production())
			wantMetrics(t, e, map[string]float64{"remit_reconciler_backlog{kind=refund}": 1,
				"remit_refunds_total{environment=production,outcome=succeeded}":  0,
				"remit_payments_total{environment=production,outcome=succeeded}": 1,
				"remit_invoices_finalized_total{environment=production}":         1})
			proc.mu.Lock()
			proc.refund = nil
			proc.mu.Unlock()
			testkit.WaitFor(t, 10*time.Second, "the reconciler to send the refund", func() bool {
				if _, err := e.App.Payments.Reconcile(context.Background()); err != nil {
					t.Fatal(err)
				}
				return metric(t, scrape(t, e), "remit_reconciler_backlog", "kind=refund") == 0
			})
			wantMetrics(t, e, map[string]float64{"remit_refunds_total{environment=production,outcome=succeeded}": 1})
		})
	})
}
