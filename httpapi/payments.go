package httpapi

// paymentHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) paymentHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
