package storetest

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session/source"
)

// Live is a scratch folder of one client's sessions, which a test can
// grow, and the store beside it, which Update brings up to date as scribe
// append does.
type Live struct {
	t       testing.TB
	adapter source.Adapter
	// Root is the sessions folder, Data the store.
	Root, Data string
}

// NewLive makes an empty sessions folder read by adapter, and a store.
func NewLive(t testing.TB, adapter source.Adapter) *Live {
	d := t.TempDir()
	return &Live{t: t, adapter: adapter, Root: filepath.Join(d, "sessions"), Data: filepath.Join(d, "data")}
}

// Put writes a session file at rel in the sessions folder.
func (l *Live) Put(rel string, data []byte) {
	l.t.Helper()
	p := filepath.Join(l.Root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// Update inscribes every session of the folder (verify: as inscribe does,
// else as append does) and refreshes the indexes; a failure fails the
// test.
func (l *Live) Update(verify bool) []inscribe.Result {
	l.t.Helper()
	s, err := inscribe.OpenStore(l.Data)
	if err != nil {
		l.t.Fatal(err)
	}
	ss, err := l.adapter.Discover(l.Root)
	if err != nil {
		l.t.Fatal(err)
	}
	var out []inscribe.Result
	for _, src := range ss {
		for _, r := range s.Update(src, inscribe.Options{Verify: verify}) {
			if r.Err != nil {
				l.t.Fatalf("%s: %v", r.Source, r.Err)
			}
			out = append(out, r)
		}
	}
	if err := Views(s).RefreshIndexes(); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// Snapshot reads every file of the store but locks, stamps and databases
// (local or derived).
func (l *Live) Snapshot() map[string][]byte {
	out := map[string][]byte{}
	filepath.WalkDir(l.Data, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") ||
			strings.HasSuffix(d.Name(), ".lock") || d.Name() == "catalog-stamps.json" {
			return err
		}
		rel, _ := filepath.Rel(l.Data, p)
		out[rel], _ = os.ReadFile(p)
		return nil
	})
	return out
}

// DiffSnapshots says which files of two snapshots differ ("" when none).
func DiffSnapshots(got, want map[string][]byte) string {
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
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// PrefixThenAppend checks that a session file inscribed in two pieces, cut
// at every line boundary of a short one (a sample of a long one's) and in
// the middle of some lines (a writer caught mid-line), gives the store the
// whole file gives, and that a third update then changes nothing. rel is
// the file's place in the sessions folder; extra are files that come along
// whole (a subagent's), by their place.
func PrefixThenAppend(t testing.TB, adapter source.Adapter, rel string, whole []byte, extra map[string][]byte) {
	t.Helper()
	put := func(l *Live, data []byte) {
		l.Put(rel, data)
		for r, b := range extra {
			l.Put(r, b)
		}
	}
	ref := NewLive(t, adapter)
	put(ref, whole)
	ref.Update(true)
	want := ref.Snapshot()
	var ends []int
	for i, c := range whole {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	step := 1
	if len(ends) > 120 {
		step = len(ends) / 60
	}
	cuts := []int{0}
	for i := 0; i < len(ends); i += step {
		cuts = append(cuts, ends[i])
		if i%5 == 2 && i+1 < len(ends) {
			cuts = append(cuts, ends[i]+(ends[i+1]-ends[i])/2) // mid-line
		}
	}
	for _, cut := range cuts {
		l := NewLive(t, adapter)
		put(l, whole[:cut])
		l.Update(false)
		l.Put(rel, whole)
		l.Update(false)
		if d := DiffSnapshots(l.Snapshot(), want); d != "" {
			t.Fatalf("cut at byte %d: the store differs from the whole inscription: %s", cut, d)
		}
		for _, r := range l.Update(false) {
			if r.Outcome != inscribe.Unchanged {
				t.Fatalf("cut at byte %d: a second append gave %s", cut, r.Outcome)
			}
		}
	}
}

// WithoutTorn returns a session file's bytes without a torn last line
// (unterminated, not JSON), which is never inscribed: what an export of it
// gives back.
func WithoutTorn(data []byte) []byte {
	i := bytes.LastIndexByte(data, '\n')
	if i+1 < len(data) {
		if l := (source.Line{Raw: data[i+1:]}); l.Torn() {
			return data[:i+1]
		}
	}
	return data
}
