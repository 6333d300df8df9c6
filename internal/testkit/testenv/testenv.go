// Package testenv finds what scribe's tests read: the repository's own
// testdata and, when present, the shared corpus beside the repository.
package testenv

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Update is the -update flag: tests rewrite their golden files and expected
// outputs instead of comparing with them. Every test package imports this
// one, so that go test ./... -update is understood everywhere.
var Update = flag.Bool("update", false, "rewrite golden files and expected outputs instead of comparing with them")

// RepoRoot returns the repository's root directory (the one holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Projects returns the bundled sample sessions: a copy of the corpus of
// sessions written by the real Claude Code client, laid out as
// ~/.claude/projects.
func Projects(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "testdata", "claude", "projects")
}

// Shared returns ../shared beside the repository. Where it is absent (a
// fresh clone), the test is skipped with a message, unless
// SCRIBE_REQUIRE_SHARED is set (as .ci/run sets it): then the absence fails
// the test, so CI cannot pass without running it.
func Shared(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("SCRIBE_REQUIRE_SHARED") != "" {
			t.Fatalf("%s is missing, and SCRIBE_REQUIRE_SHARED is set", dir)
		}
		t.Skipf("%s is not here (a fresh clone): this test runs where ../shared exists, as in CI", dir)
	}
	return dir
}

// Transcripts lists every session and subagent transcript under dir.
func Transcripts(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// PublicTranscripts lists the public corpus in ../shared (skipping where it
// is absent; see Shared).
func PublicTranscripts(t testing.TB) []string {
	return Transcripts(t, filepath.Join(Shared(t), "corpus", "public"))
}

// CodexPublic lists the Codex rollouts of other people's machines in
// ../shared (corpus/codex-public; skipping where it is absent; see Shared).
// They are people's sessions: a test reads them there and never copies
// them into the repository.
func CodexPublic(t testing.TB) []string {
	return Transcripts(t, filepath.Join(Shared(t), "corpus", "codex-public"))
}

// PublicTree lays the public corpus out in a new temporary directory as
// the projects trees it was copied from (its file names are the original
// paths with "/" as "__"), subagent transcripts whose session is not in the
// corpus included, and returns it and how many transcripts it holds.
func PublicTree(t testing.TB) (string, int) {
	t.Helper()
	dir := t.TempDir()
	files := PublicTranscripts(t)
	for _, p := range files {
		name := filepath.Base(p)
		for _, prefix := range []string{"test__test_data__real_projects__", "tests__mock-data__", "mock-global-claude-dir__projects__"} {
			name = strings.TrimPrefix(name, prefix)
		}
		dst := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(name, "__", "/")))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, len(files)
}

// CopyTree copies a directory tree.
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
