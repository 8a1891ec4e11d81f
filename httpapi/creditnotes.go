package httpapi

// creditNoteHandlers registers this area's operations (none yet: they answer 501).
func (s *Server) creditNoteHandlers() map[string]HandlerFunc {
	return map[string]HandlerFunc{}
}
