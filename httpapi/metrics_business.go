package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remit-billing/remit"
)

// The business side of GET /metrics (docs/operations.md, "Metrics"). Counters are this process's
// (what it committed since it started: sum them over processes); the queues are read from the
// store at each scrape, so every process on one PostgreSQL store shows the same figures (take one,
// or max, never the sum). Labels are low-cardinality on purpose: environment, outcome, kind or
// event type, never a merchant account or customer.

// eventCounter is a counter of GET /metrics made from the committed events of some types, each
// type one value of its outcome label (none when outcome is "").
type eventCounter struct {
	desc   *prometheus.Desc
	events map[remit.EventType]string // event type → outcome label value
}

var businessCounters = []eventCounter{
	{prometheus.NewDesc("remit_invoices_finalized_total", "Invoices finalized by this process (invoice.finalized committed), by environment.",
		[]string{"environment"}, nil), map[remit.EventType]string{remit.EventInvoiceFinalized: ""}},
	{prometheus.NewDesc("remit_payments_total", "Payment attempts that reached an outcome in this process, by environment and outcome (succeeded, failed, requires_action).",
		[]string{"environment", "outcome"}, nil), map[remit.EventType]string{remit.EventPaymentSucceeded: "succeeded",
		remit.EventPaymentFailed: "failed", remit.EventPaymentRequiresAction: "requires_action"}},
	{prometheus.NewDesc("remit_refunds_total", "Refunds the processor settled in this process, by environment and outcome (succeeded, failed).",
		[]string{"environment", "outcome"}, nil), map[remit.EventType]string{remit.EventRefundSucceeded: "succeeded", remit.EventRefundFailed: "failed"}},
}

var (
	eventsDesc = prometheus.NewDesc("remit_events_total", "Events committed by this process, by environment and type (every catalogued type).",
		[]string{"environment", "type"}, nil)
	usageDesc = prometheus.NewDesc("remit_usage_events_ingested_total", "Usage events recorded by this process (a repeated eventId is not counted again), by environment.",
		[]string{"environment"}, nil)
	environments = []remit.Environment{remit.Sandbox, remit.Production}
)

// counted is the collector of the business counters.
type counted struct{ ops Operations }

func (c counted) Describe(ch chan<- *prometheus.Desc) {
	for _, bc := range businessCounters {
		ch <- bc.desc
	}
	ch <- eventsDesc
	ch <- usageDesc
}

func (c counted) Collect(ch chan<- prometheus.Metric) {
	events := c.ops.EventCounts()
	for _, bc := range businessCounters {
		for typ, outcome := range bc.events {
			for _, env := range environments {
				labels := []string{string(env)}
				if outcome != "" {
					labels = append(labels, outcome)
				}
				ch <- prometheus.MustNewConstMetric(bc.desc, prometheus.CounterValue, float64(events[typ][env]), labels...)
			}
		}
	}
	for typ, byEnv := range events {
		for _, env := range environments {
			ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(byEnv[env]), string(env), string(typ))
		}
	}
	usage := c.ops.UsageIngested()
	for _, env := range environments {
		ch <- prometheus.MustNewConstMetric(usageDesc, prometheus.CounterValue, float64(usage[env]), string(env))
	}
}

var (
	webhookDepthDesc = prometheus.NewDesc("remit_webhook_queue_depth", "Webhook deliveries pending (due, in flight or waiting for a retry), over every merchant account; read from the store.", nil, nil)
	webhookAgeDesc   = prometheus.NewDesc("remit_webhook_queue_oldest_age_seconds", "Age of the oldest pending webhook delivery (0 when none); read from the store.", nil, nil)
	emailDepthDesc   = prometheus.NewDesc("remit_email_queue_depth", "Customer e-mails queued (due, in flight or waiting for a retry), over every merchant account; read from the store.", nil, nil)
	emailAgeDesc     = prometheus.NewDesc("remit_email_queue_oldest_age_seconds", "Age of the oldest queued customer e-mail (0 when none); read from the store.", nil, nil)
	reconcileDesc    = prometheus.NewDesc("remit_reconciler_backlog", "What the reconciler has to resolve: payment attempts left processing (kind payment) and refunds pending at the processor (kind refund); read from the store.",
		[]string{"kind"}, nil)
	dunningDesc    = prometheus.NewDesc("remit_dunning_retries_scheduled", "Dunning retries of failed automatic charges scheduled; read from the store.", nil, nil)
	dunningDueDesc = prometheus.NewDesc("remit_dunning_retries_due", "Dunning retries whose time has come on their merchant clock and that the scheduler has not run yet (0 while it keeps up); read from the store.", nil, nil)
)

// backlog is the collector of the queues, read from the store at each scrape. When the store does
// not answer it exports none of them (and logs why): the rest of the page is still served.
type backlog struct {
	ops Operations
	log *slog.Logger
}

func (b backlog) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{webhookDepthDesc, webhookAgeDesc, emailDepthDesc, emailAgeDesc, reconcileDesc, dunningDesc, dunningDueDesc} {
		ch <- d
	}
}

func (b backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q, err := b.ops.Backlog(ctx)
	if err != nil {
		b.log.Warn("metrics: the store did not answer the backlog's read", "err", err.Error())
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(webhookDepthDesc, float64(q.Webhooks.Depth))
	gauge(webhookAgeDesc, q.Webhooks.Oldest.Seconds())
	gauge(emailDepthDesc, float64(q.Emails.Depth))
	gauge(emailAgeDesc, q.Emails.Oldest.Seconds())
	gauge(reconcileDesc, float64(q.ReconcilePayments), "payment")
	gauge(reconcileDesc, float64(q.ReconcileRefunds), "refund")
	gauge(dunningDesc, float64(q.DunningScheduled))
	gauge(dunningDueDesc, float64(q.DunningDue))
}

// watchOperations exports the business counters and the queues (nothing without ops).
func (m *metrics) watchOperations(ops Operations, log *slog.Logger) {
	if ops != nil {
		m.reg.MustRegister(counted{ops}, backlog{ops, log})
	}
}
