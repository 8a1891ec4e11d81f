package httpapi

import (
	"context"
)

// getVerification handles GET /v1/verification: the money checks over the calling merchant
// account (docs/verification.md). Violations are an answer (200, ok false), not an error.
func (s *Server) getVerification(ctx context.Context, r *Request) (any, error) {
	return s.eng.Verification.Verify(ctx, r.Scope)
}
