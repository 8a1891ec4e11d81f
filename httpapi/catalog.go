package httpapi

// catalogHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) catalogHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
