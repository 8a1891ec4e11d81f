package httpapi

import (
	"context"

	"github.com/remit-billing/remit/api"
)

// getTestClock handles GET /v1/test-helpers/clock.
func (s *Server) getTestClock(ctx context.Context, r *Request) (any, error) {
	return s.eng.TestClocks.GetClock(ctx, r.Scope)
}

// advanceTestClock handles POST /v1/test-helpers/clock/advance.
func (s *Server) advanceTestClock(ctx context.Context, r *Request, body api.ClockAdvanceRequest) (any, error) {
	return s.eng.TestClocks.AdvanceClock(ctx, r.Scope, body.To, body.Seconds)
}
