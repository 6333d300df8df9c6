package web

// PlacedPages is how many pages' starts the server knows of the document
// at path.
func PlacedPages(s *Server, path string) int {
	s.places.mu.Lock()
	defer s.places.mu.Unlock()
	if d := s.places.docs[path]; d != nil {
		return len(d.pages)
	}
	return 0
}
