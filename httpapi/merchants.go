package httpapi

// merchantHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) merchantHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
