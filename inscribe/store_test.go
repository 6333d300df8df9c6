package inscribe

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
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

// storeFiles lists the files the store writes (relative paths): not lock
// files, and not the derived views' files (indexes, tables of rounds,
// catalogs, tags), which package inscribe/views writes and tests.
func storeFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || isDB(d.Name()) || d.Name() == catalogFile || d.Name() == tagsFile {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = p
		return nil
	})
	return files
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

// TestFindDoc: a document is found in whichever bucket holds it, the first
// in name order, a bucket made after the last look too, and a document
// removed is not found any more.
func TestFindDoc(t *testing.T) {
	s := &Store{Root: t.TempDir()}
	if _, ok := s.FindDoc("s1"); ok {
		t.Fatal("found s1 in a store without a sessions folder")
	}
	put(t, s.docPath("claude", "s1"), "x")
	if p, ok := s.FindDoc("s1"); !ok || p != s.docPath("claude", "s1") {
		t.Errorf("FindDoc(s1) = %s, %v", p, ok)
	}
	put(t, s.docPath("codex", "s2"), "x") // a bucket made since
	if p, ok := s.FindDoc("s2"); !ok || p != s.docPath("codex", "s2") {
		t.Errorf("FindDoc(s2) in a new bucket = %s, %v", p, ok)
	}
	put(t, s.docPath("codex", "s1"), "x")
	if p, _ := s.FindDoc("s1"); p != s.docPath("claude", "s1") {
		t.Errorf("FindDoc(s1) in two buckets = %s, want the first by name", p)
	}
	os.Remove(s.docPath("claude", "s1"))
	os.Remove(s.docPath("codex", "s1"))
	if p, ok := s.FindDoc("s1"); ok {
		t.Errorf("FindDoc(s1) after its removal = %s", p)
	}
}

// TestRolesBadPattern: a projects pattern that cannot match (malformed) is
// an error that names the file, the line and what to do, not a role that
// silently never applies (issue 32, 11).
func TestRolesBadPattern(t *testing.T) {
	root := t.TempDir()
	roles := "roles:\n  - id: eng\n    name: Engineer\n    projects:\n      - /home/*/src\n      - /home/[dev/src\n"
	if err := os.WriteFile(filepath.Join(root, "roles.yaml"), []byte(roles), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenStore(root)
	if err == nil {
		t.Fatal("a malformed pattern is accepted")
	}
	for _, want := range []string{filepath.Join(root, "roles.yaml") + ":6:", "/home/[dev/src", "eng"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
