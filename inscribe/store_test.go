package inscribe

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// inscribeAll inscribes every session under dir into store: dir is a
// folder of sessions of one client, or a copy of the repository's testdata
// (the samples of every client).
func inscribeAll(t testing.TB, s *Store, dir string, opts Options) []Result {
	t.Helper()
	dirs := []string{dir}
	if fi, err := os.Stat(filepath.Join(dir, "claude", "projects")); err == nil && fi.IsDir() {
		dirs = []string{filepath.Join(dir, "claude", "projects"), filepath.Join(dir, "codex", "sessions")}
	}
	var all []Result
	for _, d := range dirs {
		for _, a := range []source.Adapter{claudeSrc, codexSrc} {
			if !a.Detect(d) {
				continue
			}
			ts, err := a.Discover(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range ts {
				for _, r := range s.Update(tr, opts) {
					if r.Err != nil {
						t.Fatalf("%s: %v", r.Source, r.Err)
					}
					all = append(all, r)
				}
			}
		}
	}
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	return all
}

// sampleStore inscribes the bundled samples into a fresh store laid out as
// the repository is (store at <dir>/data, samples at <dir>/testdata: Claude
// Code's in claude/projects, Codex's in codex/sessions), so that recorded
// source paths match the repository's. It returns the store and the copy
// of testdata.
func sampleStore(t testing.TB) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	samples := filepath.Join(dir, "testdata")
	testenv.CopyTree(t, testenv.Projects(t), filepath.Join(samples, "claude", "projects"))
	testenv.CopyTree(t, filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"), filepath.Join(samples, "codex", "sessions"))
	s, err := OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	inscribeAll(t, s, samples, Options{Verify: true})
	return s, samples
}

// storeFiles lists a store's files (relative paths), leaving out lock files.
func storeFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || isDB(d.Name()) { // locks, stamps, indexes: local or derived
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = p
		return nil
	})
	return files
}

// TestRepositoryData checks that the repository's data/ is exactly the
// inscription of the bundled samples: the golden files of the whole store.
// go test ./inscribe -update rewrites it.
func TestRepositoryData(t *testing.T) {
	s, _ := sampleStore(t)
	repoData := filepath.Join(testenv.RepoRoot(t), "data")
	got, want := storeFiles(t, filepath.Join(s.Root, "sessions")), storeFiles(t, filepath.Join(repoData, "sessions"))
	if *testenv.Update {
		os.RemoveAll(filepath.Join(repoData, "sessions"))
		testenv.CopyTree(t, filepath.Join(s.Root, "sessions"), filepath.Join(repoData, "sessions"))
		os.Remove(filepath.Join(repoData, "sessions", ".lock"))
		filepath.WalkDir(filepath.Join(repoData, "sessions"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == ".lock" {
				os.Remove(p)
			}
			return nil
		})
		return
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	diffed := false
	for _, n := range names {
		w, ok := want[n]
		if !ok {
			t.Errorf("data/sessions/%s is missing (run go test ./inscribe -update)", n)
			continue
		}
		a, _ := os.ReadFile(got[n])
		b, _ := os.ReadFile(w)
		if bytes.Equal(a, b) {
			continue
		}
		// The first stale file shows how: a line diff from what data/
		// holds to what the samples give now.
		switch {
		case diffed:
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe -update)", n)
		case !utf8.Valid(a) || !utf8.Valid(b):
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe -update); its bytes differ", n)
		default:
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe -update):\n%s", n,
				testenv.Diff("data/sessions/"+n, b, "inscribed from testdata/", a))
		}
		diffed = true
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("data/sessions/%s should not be there (run go test ./inscribe -update)", n)
		}
	}
}

type stamp struct {
	mod   time.Time
	size  int64
	inode uint64
}

func stamps(t testing.TB, root string) map[string]stamp {
	out := map[string]stamp{}
	for rel, p := range storeFiles(t, root) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = stamp{fi.ModTime(), fi.Size(), inode(fi)}
	}
	return out
}

// TestInscribeTwice: a second inscribe (or append) changes no byte and
// writes no file.
func TestInscribeTwice(t *testing.T) {
	s, projects := sampleStore(t)
	before := stamps(t, s.Root)
	time.Sleep(10 * time.Millisecond)
	for _, opts := range []Options{{Verify: true}, {}} {
		for _, r := range inscribeAll(t, s, projects, opts) {
			if r.Outcome != Unchanged {
				t.Errorf("%s: %s, want unchanged", r.Doc, r.Outcome)
			}
		}
	}
	after := stamps(t, s.Root)
	for rel, st := range after {
		if b, ok := before[rel]; !ok {
			t.Errorf("%s was created", rel)
		} else if b != st {
			t.Errorf("%s was written again", rel)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
}

// TestDocumentsParse: every document in the store parses, and parses to a
// document that renders to the same bytes.
func TestDocumentsParse(t *testing.T) {
	s, _ := sampleStore(t)
	for rel, p := range storeFiles(t, s.Root) {
		if !strings.HasSuffix(rel, ".md") || strings.HasSuffix(rel, "index.md") {
			continue
		}
		src, _ := os.ReadFile(p)
		d, err := document.Parse(src, p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !bytes.Equal(document.Render(d), src) {
			t.Errorf("%s: render(parse(doc)) != doc", rel)
		}
	}
}

// isDB reports whether a file is an index database (derived, binary, and
// not byte-for-byte reproducible: indexes are compared by their dumps).
func isDB(name string) bool {
	return strings.HasSuffix(name, ".db") || strings.HasSuffix(name, ".db-wal") || strings.HasSuffix(name, ".db-shm")
}
