package portal

// Patterns are the portal's routes (but static files and the not-found page), as registered.
func (s *Server) Patterns() []string { return s.patterns }
