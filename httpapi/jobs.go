package httpapi

import (
	"context"

	"github.com/remit-billing/remit"
)

// listJobs handles GET /v1/jobs.
func (s *Server) listJobs(ctx context.Context, r *Request) (any, error) {
	return s.eng.Jobs.ListJobs(ctx, r.Merchant, remit.JobQuery{Status: r.Query("status"), Kind: r.Query("kind"), ListQuery: remit.ListQueryOf(r.Query)})
}
