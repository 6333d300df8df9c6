// Package storetest builds stores for tests: the bundled samples inscribed
// into a scratch directory laid out as the repository is.
package storetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// Inscribe inscribes every transcript under projects into s.
func Inscribe(t testing.TB, s *inscribe.Store, projects string, opts inscribe.Options) []inscribe.Result {
	t.Helper()
	ts, err := Claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	var all []inscribe.Result
	for _, tr := range ts {
		for _, r := range s.Update(tr, opts) {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Source, r.Err)
			}
			all = append(all, r)
		}
	}
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return all
}

// Samples inscribes a copy of the bundled samples into a fresh store (store
// at <dir>/data, samples at <dir>/testdata/claude/projects) and returns the
// store and the samples' directory.
func Samples(t testing.TB) (*inscribe.Store, string) {
	t.Helper()
	dir := t.TempDir()
	projects := filepath.Join(dir, "testdata", "claude", "projects")
	testenv.CopyTree(t, testenv.Projects(t), projects)
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	Inscribe(t, s, projects, inscribe.Options{Verify: true})
	return s, projects
}

// Claude is the Claude Code adapter, for tests that read its transcripts.
var Claude = claude.New()

// ClaudeAt describes the Claude Code transcript at p as the session id,
// kept in project directory dir.
func ClaudeAt(p, id, dir string) source.Session {
	return source.Session{Adapter: Claude, Path: p, ID: id, Dir: dir, Rel: filepath.Base(p), FilesDir: strings.TrimSuffix(p, ".jsonl")}
}
