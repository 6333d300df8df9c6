package views

// SetRowsChunk has the indexes take the rows of n rounds at a time, as
// they take a long session's a thousand at a time; it returns what puts
// the default back.
func SetRowsChunk(n int) (restore func()) {
	old := rowsChunk
	rowsChunk = n
	return func() { rowsChunk = old }
}
