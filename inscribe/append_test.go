package inscribe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/internal/testenv"
)

// liveDir is a scratch projects tree whose transcripts a test can grow.
type liveDir struct {
	t        *testing.T
	root     string // holds testdata/ and data/
	projects string
}

func newLive(t *testing.T) *liveDir {
	root := t.TempDir()
	return &liveDir{t: t, root: root, projects: filepath.Join(root, "testdata", "claude", "projects")}
}

// put writes a transcript (and whatever else) under the scratch tree.
func (l *liveDir) put(rel string, data []byte) string {
	p := filepath.Join(l.projects, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
	return p
}

func (l *liveDir) store() *Store {
	s, err := OpenStore(filepath.Join(l.root, "data"))
	if err != nil {
		l.t.Fatal(err)
	}
	return s
}

// update runs inscribe (verify) or append over the whole scratch tree.
func (l *liveDir) update(verify bool) []Result {
	l.t.Helper()
	s := l.store()
	ts, err := claude.Discover(l.projects)
	if err != nil {
		l.t.Fatal(err)
	}
	var out []Result
	for _, tr := range ts {
		for _, r := range s.Update(tr, Options{Verify: verify}) {
			if r.Err != nil {
				l.t.Fatalf("%s: %v", r.Source, r.Err)
			}
			out = append(out, r)
		}
	}
	if err := s.RefreshIndexes(); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// snapshot reads every file of the store.
func (l *liveDir) snapshot() map[string][]byte {
	out := map[string][]byte{}
	for rel, p := range storeFiles(l.t, filepath.Join(l.root, "data")) {
		b, err := os.ReadFile(p)
		if err != nil {
			l.t.Fatal(err)
		}
		out[rel] = b
	}
	return out
}

func sameSnapshot(t *testing.T, what string, got, want map[string][]byte) bool {
	t.Helper()
	var diffs []string
	for n, w := range want {
		if g, ok := got[n]; !ok {
			diffs = append(diffs, "missing "+n)
		} else if !bytes.Equal(g, w) {
			diffs = append(diffs, "differs "+n)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			diffs = append(diffs, "extra "+n)
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%s: store differs from the whole inscription: %s", what, strings.Join(diffs, "; "))
		return false
	}
	return true
}

// cuts returns the cut points (byte offsets) to try in a transcript: every
// line boundary of a small one, a sample of a large one, and a few cuts in
// the middle of a line (a writer caught mid-line).
func cuts(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	var out []int
	step := 1
	if len(ends) > 120 {
		step = len(ends) / 60
	}
	for i := 0; i < len(ends); i += step {
		out = append(out, ends[i])
		if i%3 == 1 && i+1 < len(ends) {
			out = append(out, ends[i]+(ends[i+1]-ends[i])/2) // mid-line
		}
	}
	return append([]int{0}, out...)
}

// TestPrefixThenAppend: for every sample session, inscribing a prefix and
// then appending the whole gives exactly the store that inscribing the
// whole gives, at every cut point, including cuts in the middle of a line.
func TestPrefixThenAppend(t *testing.T) {
	for _, p := range testenv.Transcripts(t, testenv.Projects(t)) {
		if strings.Contains(p, "/subagents/") {
			continue // cut with their session below
		}
		rel, _ := filepath.Rel(testenv.Projects(t), p)
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			whole, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// Everything beside the transcript (subagents, tool results)
			// comes along whole.
			extra := map[string][]byte{}
			folder := strings.TrimSuffix(p, ".jsonl")
			filepath.WalkDir(folder, func(q string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					r, _ := filepath.Rel(testenv.Projects(t), q)
					extra[r], _ = os.ReadFile(q)
				}
				return nil
			})
			ref := newLive(t)
			ref.put(rel, whole)
			for r, b := range extra {
				ref.put(r, b)
			}
			ref.update(true)
			want := ref.snapshot()

			for _, cut := range cuts(whole) {
				l := newLive(t)
				l.put(rel, whole[:cut])
				for r, b := range extra {
					l.put(r, b)
				}
				l.update(false)
				l.put(rel, whole)
				l.update(false)
				if !sameSnapshot(t, fmt.Sprintf("cut at byte %d", cut), l.snapshot(), want) {
					return
				}
				// And once more: nothing new, nothing written.
				for _, r := range l.update(false) {
					if r.Outcome != Unchanged {
						t.Fatalf("cut at byte %d: a second append gave %s for %s", cut, r.Outcome, r.Doc)
					}
				}
			}
		})
	}
}
