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

// preparers returns the prepare steps of the write operations that have one, by operationId: work
// run before the operation's transaction (see PrepareFunc).
func (s *Server) preparers() map[string]PrepareFunc {
	return s.webhookPreparers()
}

var _ = context.Background
