package httpapi

import (
	"context"

	"github.com/remit-billing/remit/api"
)

func (s *Server) clockHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"getTestClock": func(ctx context.Context, r *Request) (any, error) {
			return s.eng.Clock.GetClock(ctx, r.Scope)
		},
		"advanceTestClock": decoded(func(ctx context.Context, r *Request, body api.ClockAdvanceRequest) (any, error) {
			return s.eng.Clock.AdvanceClock(ctx, r.Scope, body.To, body.Seconds)
		}),
	}
}
