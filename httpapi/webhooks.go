package httpapi

// webhookHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) webhookHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
