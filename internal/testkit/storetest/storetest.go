// Package storetest builds stores for tests: the bundled samples inscribed
// into a scratch directory laid out as the repository is.
package storetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// Views returns the derived views of s, opening them (and making them s's
// indexer) the first time.
func Views(s *inscribe.Store) *views.Views {
	if v, ok := s.Indexer.(*views.Views); ok {
		return v
	}
	return views.Open(s)
}

// Inscribe inscribes every transcript under projects into s, with its
// derived views.
func Inscribe(t testing.TB, s *inscribe.Store, projects string, opts inscribe.Options) []inscribe.Result {
	t.Helper()
	v := Views(s)
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
	if err := v.RefreshIndexes(); err != nil {
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

// Codex is the Codex CLI adapter, for tests that read its rollouts.
var Codex = codex.New()

// Gemini is the Gemini CLI adapter, for tests that read its sessions.
var Gemini = gemini.New()

// Repository inscribes a copy of the repository's testdata (the samples of
// every client: Claude Code's in claude/projects, Codex's in codex/sessions,
// Gemini CLI's in gemini/tmp)
// into a fresh store at <dir>/data, laid out as the repository is, so that
// recorded source paths match the repository's data/. It returns the store
// and the copy of testdata.
func Repository(t testing.TB) (*inscribe.Store, string) {
	t.Helper()
	return RepositoryRedacted(t, nil)
}

// RepositoryRedacted is Repository into a store that redacts with red
// (none when nil).
func RepositoryRedacted(t testing.TB, red inscribe.Redactor) (*inscribe.Store, string) {
	t.Helper()
	dir := t.TempDir()
	samples := filepath.Join(dir, "testdata")
	testenv.CopyTree(t, testenv.Projects(t), filepath.Join(samples, "claude", "projects"))
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"), filepath.Join(samples, "codex", "sessions"))
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(t), "testdata", "gemini"), filepath.Join(samples, "gemini"))
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	s.Redact = red
	v := Views(s)
	for _, src := range []struct {
		a   source.Adapter
		dir string
	}{{Claude, filepath.Join(samples, "claude", "projects")}, {Codex, filepath.Join(samples, "codex", "sessions")},
		{Gemini, filepath.Join(samples, "gemini", "tmp")}} {
		ss, err := src.a.Discover(src.dir)
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
	}
	if err := v.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return s, samples
}

// Doc returns the document at path (inscribe.OpenDoc), failing the test
// when there is none.
func Doc(t testing.TB, path string) *inscribe.Doc {
	t.Helper()
	d, err := inscribe.OpenDoc(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
