package inscribe

import (
	"os"
	"testing"
)

// TestMain has check --store (verifyDoc) build every document's graph in
// a scratch file, as it does a long session's, so that the package's
// tests check documents of every source format so.
func TestMain(m *testing.M) {
	SetGraphInFileForTest(0)
	os.Exit(m.Run())
}
