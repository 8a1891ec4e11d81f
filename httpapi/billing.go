package httpapi

// billingHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) billingHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
