package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// createUsageEvent handles POST /v1/usage-events.
func (s *Server) createUsageEvent(ctx context.Context, r *Request, body api.UsageEventCreateRequest) (any, error) {
	return s.eng.Usage.CreateUsageEvent(ctx, r.Merchant, remit.UsageEventInput{
		EventID: body.EventId, CustomerID: body.CustomerId, MeterID: body.MeterId, Quantity: body.Quantity,
		Timestamp: body.Timestamp,
	})
}

// createUsageThreshold handles POST /v1/usage-thresholds.
func (s *Server) createUsageThreshold(ctx context.Context, r *Request, body api.UsageThresholdCreateRequest) (any, error) {
	return s.eng.Usage.CreateUsageThreshold(ctx, r.Merchant, remit.UsageThreshold{
		ThresholdID: deref(body.ThresholdId), CustomerID: body.CustomerId, MeterID: body.MeterId,
		Threshold: body.Threshold, Metadata: metadata(body.Metadata),
	})
}
