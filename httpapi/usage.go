package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// usageEventInput is the usage event a createUsageEvent body describes (and each event of a batch).
func usageEventInput(body api.UsageEventCreateRequest) remit.UsageEventInput {
	in := remit.UsageEventInput{
		EventID: body.EventId, CustomerID: body.CustomerId, MeterID: body.MeterId, Quantity: body.Quantity,
		Timestamp: body.Timestamp,
	}
	if body.Properties != nil {
		in.Properties = *body.Properties
	}
	return in
}

// listUsageEvents handles GET /v1/usage-events.
func (s *Server) listUsageEvents(ctx context.Context, r *Request) (any, error) {
	return s.eng.Usage.ListUsageEvents(ctx, r.Merchant, remit.UsageEventQuery{CustomerID: r.Query("customerId"), MeterID: r.Query("meterId"),
		IncludeVoided: r.Query("includeVoided"), ListQuery: remit.ListQueryOf(r.Query)})
}

// meterInput is the meter a createMeter body describes.
func meterInput(body api.MeterCreateRequest) remit.Meter {
	return remit.Meter{MeterID: body.MeterId, Name: body.Name, Aggregation: string(body.Aggregation), UniqueProperty: body.UniqueProperty}
}

// listMeters handles GET /v1/meters.
func (s *Server) listMeters(ctx context.Context, r *Request) (any, error) {
	return s.eng.Usage.ListMeters(ctx, r.Merchant, remit.ListQueryOf(r.Query))
}

// createUsageThreshold handles POST /v1/usage-thresholds.
func (s *Server) createUsageThreshold(ctx context.Context, r *Request, body api.UsageThresholdCreateRequest) (any, error) {
	return s.eng.Usage.CreateUsageThreshold(ctx, r.Merchant, remit.UsageThreshold{
		ThresholdID: deref(body.ThresholdId), CustomerID: body.CustomerId, MeterID: body.MeterId,
		Threshold: body.Threshold, Metadata: metadata(body.Metadata),
	})
}

// listUsageThresholds handles GET /v1/usage-thresholds.
func (s *Server) listUsageThresholds(ctx context.Context, r *Request) (any, error) {
	return s.eng.Usage.ListUsageThresholds(ctx, r.Merchant, remit.UsageThresholdQuery{CustomerID: r.Query("customerId"), MeterID: r.Query("meterId"),
		Status: r.Query("status"), ListQuery: remit.ListQueryOf(r.Query)})
}
