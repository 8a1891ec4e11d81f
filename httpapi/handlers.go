package httpapi

import (
	"context"
	"maps"
)

// handlers returns every operation's handler by operationId. Each area registers its own in its
// own file; an operation of the contract without one answers 501.
func (s *Server) handlers() map[string]HandlerFunc {
	all := map[string]HandlerFunc{}
	for _, area := range []map[string]HandlerFunc{
		s.clockHandlers(),
		s.merchantHandlers(),
		s.catalogHandlers(),
		s.billingHandlers(),
		s.quoteHandlers(),
		s.paymentHandlers(),
		s.creditNoteHandlers(),
		s.usageHandlers(),
		s.webhookHandlers(),
		s.documentHandlers(),
	} {
		maps.Copy(all, area)
	}
	return all
}

var _ = context.Background
