package httpapi

// usageHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) usageHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
