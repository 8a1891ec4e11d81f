package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
	"github.com/remit-billing/remit/api"
)

// usageHandlers registers usage events and usage thresholds.
func (s *Server) usageHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"createUsageEvent": decoded(func(ctx context.Context, r *Request, body api.UsageEventCreateRequest) (any, error) {
			return s.eng.Usage.CreateUsageEvent(ctx, r.Merchant, remit.UsageEventInput{
				EventID: body.EventId, CustomerID: body.CustomerId, MeterID: body.MeterId, Quantity: body.Quantity,
				Timestamp: body.Timestamp,
			})
		}),
		"createUsageThreshold": decoded(func(ctx context.Context, r *Request, body api.UsageThresholdCreateRequest) (any, error) {
			return s.eng.Usage.CreateUsageThreshold(ctx, r.Merchant, remit.UsageThreshold{
				ThresholdID: deref(body.ThresholdId), CustomerID: body.CustomerId, MeterID: body.MeterId,
				Threshold: body.Threshold, Metadata: metadata(body.Metadata),
			})
		}),
		"getUsageThreshold":     byPath("thresholdId", s.eng.Usage.GetUsageThreshold),
		"archiveUsageThreshold": byPath("thresholdId", s.eng.Usage.ArchiveUsageThreshold),
	}
}
