package views_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// sampleStore is the repository's testdata inscribed into a fresh store,
// with its views; it returns the views and the copy of testdata.
func sampleStore(t testing.TB) (*views.Views, string) {
	t.Helper()
	s, samples := storetest.Repository(t)
	return storetest.Views(s), samples
}

// reopen opens the store at root afresh, as another process would.
func reopen(root string) (*views.Views, error) {
	s, err := inscribe.OpenStore(root)
	if err != nil {
		return nil, err
	}
	return views.Open(s), nil
}

// liveDir is a scratch projects tree whose transcripts a test writes bit by
// bit, and the store inscribed from it.
type liveDir struct {
	t        *testing.T
	root     string
	projects string
}

func newLive(t *testing.T) *liveDir {
	root := t.TempDir()
	return &liveDir{t: t, root: root, projects: filepath.Join(root, "testdata", "claude", "projects")}
}

func (l *liveDir) put(rel string, data []byte) {
	p := filepath.Join(l.projects, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

func (l *liveDir) store() *views.Views {
	v, err := reopen(filepath.Join(l.root, "data"))
	if err != nil {
		l.t.Fatal(err)
	}
	return v
}

// update runs inscribe (verify) or append over the whole scratch tree.
func (l *liveDir) update(verify bool) {
	l.t.Helper()
	v := l.store()
	defer v.CloseIndex()
	storetest.Inscribe(l.t, v.Store, l.projects, inscribe.Options{Verify: verify})
}

// sample reads a sample transcript: its bytes and its path relative to the
// projects folder.
func sample(t *testing.T, dir, id string) ([]byte, string) {
	t.Helper()
	p := filepath.Join(testenv.Projects(t), dir, id+".jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b, filepath.Join(dir, id+".jsonl")
}

// prefixLines returns the first n lines of data.
func prefixLines(data []byte, n int) []byte {
	off := 0
	for i := 0; i < n; i++ {
		off += bytes.IndexByte(data[off:], '\n') + 1
	}
	return data[:off]
}

type stamp struct {
	mod  time.Time
	size int64
}

// stamps records when and how big each file of a store is.
func stamps(t testing.TB, root string) map[string]stamp {
	out := map[string]stamp{}
	for rel, p := range storeFiles(t, root) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = stamp{fi.ModTime(), fi.Size()}
	}
	return out
}

// folderOf is the folder of the document at md, as the store lays it out.
func folderOf(md string) string { return strings.TrimSuffix(md, ".md") }

// roundName is the file name of round n.
func roundName(n int) string { return fmt.Sprintf("%03d.json", n) }
