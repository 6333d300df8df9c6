package views_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestRepositoryData checks that the repository's data/ is exactly the
// inscription of the bundled samples: the golden files of the whole store.
// go test ./inscribe/views -update rewrites it.
func TestRepositoryData(t *testing.T) {
	s, _ := storetest.Repository(t)
	repoData := filepath.Join(testenv.RepoRoot(t), "data")
	got, want := storeFiles(t, filepath.Join(s.Root, "sessions")), storeFiles(t, filepath.Join(repoData, "sessions"))
	// The record a clone carries: the sessions, and the store's own
	// .gitignore, which leaves .scribe/ (the machine's state) out.
	ignore := filepath.Join(s.Root, ".gitignore")
	if *testenv.Update {
		os.RemoveAll(filepath.Join(repoData, "sessions"))
		testenv.CopyTree(t, filepath.Join(s.Root, "sessions"), filepath.Join(repoData, "sessions"))
		data, err := os.ReadFile(ignore)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repoData, ".gitignore"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if a, b := readFile(t, ignore), readFile(t, filepath.Join(repoData, ".gitignore")); !bytes.Equal(a, b) {
		t.Errorf("data/.gitignore is not the one scribe writes for a store (run go test ./inscribe/views -update)")
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
			t.Errorf("data/sessions/%s is missing (run go test ./inscribe/views -update)", n)
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
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe/views -update)", n)
		case !utf8.Valid(a) || !utf8.Valid(b):
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe/views -update); its bytes differ", n)
		default:
			t.Errorf("data/sessions/%s is stale (run go test ./inscribe/views -update):\n%s", n,
				testenv.Diff("data/sessions/"+n, b, "inscribed from testdata/", a))
		}
		diffed = true
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("data/sessions/%s should not be there (run go test ./inscribe/views -update)", n)
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// storeFiles lists a store's files (relative paths), leaving out lock files,
// stamps and the index databases (binary, and not byte-for-byte
// reproducible: views' tests compare them by their dumps).
func storeFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = p
		return nil
	})
	return files
}
