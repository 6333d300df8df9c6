package views

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testenv"
)

// claudeStore inscribes the bundled Claude Code samples into a fresh store
// with its views (the tests of the package's internals cannot use
// internal/storetest, which imports this package).
func claudeStore(t *testing.T) *Views {
	t.Helper()
	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	v := Open(s)
	ss, err := claude.New().Discover(testenv.Projects(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range ss {
		for _, r := range s.Update(sess, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Source, r.Err)
			}
		}
	}
	if err := v.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIndexStale: a main document newer than its agent's catalog makes the
// catalog stale; a sidechain, which the catalog does not list, does not.
func TestIndexStale(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	main := filepath.Join(s.SessionsDir(), "claude", "33333333-3333-4333-8333-333333333333.md")
	subs, _ := filepath.Glob(filepath.Join(inscribe.Folder(main), "agent-*.md"))
	if len(subs) == 0 {
		t.Fatal("the sample session has no sidechain")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(subs[0], later, later); err != nil {
		t.Fatal(err)
	}
	if s.indexStale("claude", subs[0]) {
		t.Errorf("a newer sidechain makes the catalog stale")
	}
	if err := os.Chtimes(main, later, later); err != nil {
		t.Fatal(err)
	}
	if !s.indexStale("claude", main) {
		t.Errorf("a newer document does not make the catalog stale")
	}
}
