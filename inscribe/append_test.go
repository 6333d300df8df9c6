package inscribe

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
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
	ts, err := claudeSrc.Discover(l.projects)
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

// sample returns a sample transcript's bytes and its path relative to the
// projects directory.
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

func updateErr(t *testing.T, l *liveDir, opts Options) error {
	t.Helper()
	ts, err := claudeSrc.Discover(l.projects)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, tr := range ts {
		for _, r := range l.store().Update(tr, opts) {
			if r.Err != nil {
				errs = append(errs, r.Err)
			}
		}
	}
	return errors.Join(errs...)
}

// TestSourceShrankOrReplaced: a source that no longer holds what was
// inscribed from it (cut short, or another file in its place, or a client
// that rewrote its history) loses nothing and fails nothing. Cut short, it
// holds nothing the record lacks: the store is as it was, and the update
// says why. Replaced, what was inscribed stays the session's document and
// the file as it is now is a continuation of it; a second rewrite is a
// second continuation.
func TestSourceShrankOrReplaced(t *testing.T) {
	const id = "22222222-2222-4222-8222-222222222222"
	whole, rel := sample(t, "-home-dev-src-multiturn", id)
	other, _ := sample(t, "-home-dev-src-long", "99999999-9999-4999-8999-999999999999")
	for _, c := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"shrank", prefixLines(whole, 10), "shrank"},
		{"replaced", other, "another file took its place"},
		// The same size: the append's check rests on the note's time
		// and the source's, then on its last bytes.
		{"replaced-same-size", other[:len(whole)], "another file took its place"},
	} {
		for _, verify := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/verify=%v", c.name, verify), func(t *testing.T) {
				l := newLive(t)
				l.put(rel, whole)
				l.update(true)
				before := l.snapshot()
				putAfterNote(t, l, rel, c.content, id)
				rs := l.update(verify)
				if len(rs) != 1 {
					t.Fatalf("results %+v, want one", rs)
				}
				r := rs[0]
				if w := rewriteWarning(r); !strings.Contains(w, c.want) || !strings.Contains(w, id+".jsonl") || !strings.Contains(w, id+".md") {
					t.Fatalf("warnings %q, want one naming both files and saying %q", r.Warnings, c.want)
				}
				after := l.snapshot()
				if c.name == "shrank" {
					if r.Outcome != Unchanged {
						t.Fatalf("outcome %s, want unchanged", r.Outcome)
					}
					sameSnapshot(t, "after the source shrank", after, before)
					return
				}
				if r.Outcome != Inscribed || !isContBase(strings.TrimSuffix(filepath.Base(r.Doc), ".md")) {
					t.Fatalf("%s %s, want a continuation inscribed", r.Doc, r.Outcome)
				}
				// Every file of the record is as it was but the session's
				// document, which lists the continuation, and the catalogs.
				for rel, b := range before {
					if !bytes.Equal(after[rel], b) && !strings.HasSuffix(rel, id+".md") && !strings.HasSuffix(rel, "index.md") && !strings.HasSuffix(rel, ".db") && !strings.Contains(rel, localDir) {
						t.Errorf("%s changed", rel)
					}
				}
				if conts := continuations(t, l, id); len(conts) != 1 || conts[0] != r.Doc {
					t.Fatalf("continuations %v, want %s", conts, r.Doc)
				}
				// Read again, the file is its continuation's; once more
				// rewritten, it goes on in a second one.
				if rs := l.update(verify); len(rs) != 1 || rs[0].Outcome != Unchanged || rs[0].Doc != r.Doc {
					t.Fatalf("results %+v, want %s unchanged", rs, r.Doc)
				}
				writeAfter(t, statePath(folderOf(r.Doc)), func() string { return l.put(rel, whole) })
				rs = l.update(verify)
				if len(rs) != 1 || rs[0].Outcome != Inscribed || rs[0].Doc == r.Doc || rewriteWarning(rs[0]) == "" {
					t.Fatalf("results %+v, want a second continuation", rs)
				}
				if conts := continuations(t, l, id); len(conts) != 2 {
					t.Fatalf("continuations %v, want two", conts)
				}
			})
		}
	}
}

// rewriteWarning returns the warning of an update that its source no
// longer holds what was inscribed from it, or "".
func rewriteWarning(r Result) string {
	for _, w := range r.Warnings {
		if strings.Contains(w.Error(), "keeps what was inscribed") || strings.Contains(w.Error(), "what was inscribed stays") {
			return w.Error()
		}
	}
	return ""
}

// continuations returns the documents of the session's continuations.
func continuations(t *testing.T, l *liveDir, id string) []string {
	t.Helper()
	d, ok := l.store().Find(id)
	if !ok {
		t.Fatalf("%s is not in the store", id)
	}
	conts, err := d.Continuations()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range conts {
		out = append(out, c.Path())
	}
	return out
}

// TestUntouchedSourceNotRead: a source that nothing wrote to since its read
// note was written is not read, by inscribe (Verify) either: a no-op costs a
// stat per source. Its bytes are changed here behind the note's back (the
// note rewritten after them, which no real writer does) to see that they
// are not compared; TestSourceShrankOrReplaced shows the same change caught
// once the source is written after the note.
func TestUntouchedSourceNotRead(t *testing.T) {
	if !changeTimeTrusted {
		t.Skip("no status change time on this system: every source is hashed")
	}
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	other, _ := sample(t, "-home-dev-src-long", "99999999-9999-4999-8999-999999999999")
	for _, verify := range []bool{false, true} {
		t.Run(fmt.Sprintf("verify=%v", verify), func(t *testing.T) {
			l := newLive(t)
			src := l.put(rel, whole)
			l.update(true)
			l.put(rel, other[:len(whole)])
			note := statePath(filepath.Join(l.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222"))
			noteBytes, err := os.ReadFile(note)
			if err != nil {
				t.Fatal(err)
			}
			writeAfter(t, src, func() string {
				if err := os.WriteFile(note, noteBytes, 0o644); err != nil {
					t.Fatal(err)
				}
				return note
			})
			before := l.snapshot()
			for _, r := range l.update(verify) {
				if r.Err != nil || r.Outcome != Unchanged {
					t.Fatalf("%s: %s %v, want unchanged: the source was read", r.Doc, r.Outcome, r.Err)
				}
			}
			sameSnapshot(t, "after the no-op", l.snapshot(), before)
		})
	}
}

// putAfterNote replaces a source once the clock has moved past the change
// time of its document's read note, as a file written later would.
func putAfterNote(t *testing.T, l *liveDir, rel string, data []byte, id string) {
	t.Helper()
	note := statePath(filepath.Join(l.root, "data", "sessions", "claude", id))
	writeAfter(t, note, func() string { return l.put(rel, data) })
}

// writeAfter calls write, which writes a file and returns its path, until
// that file's change time is later than the change time of the file at ref.
func writeAfter(t *testing.T, ref string, write func() string) {
	t.Helper()
	for i := 0; ; i++ {
		p := write()
		fi, err1 := os.Stat(p)
		rfi, err2 := os.Stat(ref)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if changeTime(fi).After(changeTime(rfi)) {
			return
		}
		if i == 1000 {
			t.Fatal("the clock does not move")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPersonEditsSurvive: a person's summary, engagements and edits of
// closed rounds survive every append; the rest is what a whole inscription
// gives.
func TestPersonEditsSurvive(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	ref := newLive(t)
	ref.put(rel, whole)
	ref.update(true)
	want, _ := os.ReadFile(filepath.Join(ref.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222.md"))

	l := newLive(t)
	l.put(rel, prefixLines(whole, 30)) // two rounds and a bit
	l.update(false)
	md := filepath.Join(l.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222.md")
	doc, _ := os.ReadFile(md)
	edits := []struct{ old, new string }{
		{"_Summary pending. First prompt:_ first question", "Asked three questions, got three answers."},
		{"engagements: []", "engagements:\n  - id: console-work\n    phase_at_start: design\n    phase_at_end: \"\""},
		{"\nfirst question\n", "\nfirst question (asked twice)\n"},
	}
	edited := string(doc)
	for _, e := range edits {
		if !strings.Contains(edited, e.old) {
			t.Fatalf("%q is not in the document", e.old)
		}
		edited = strings.Replace(edited, e.old, e.new, 1)
	}
	os.WriteFile(md, []byte(edited), 0o644)
	l.put(rel, whole)
	l.update(false)
	got, _ := os.ReadFile(md)
	expect := string(want)
	for _, e := range edits {
		expect = strings.Replace(expect, e.old, e.new, 1)
	}
	if string(got) != expect {
		t.Errorf("after append, the document is not the whole inscription with the person's edits")
	}
	for _, r := range l.update(false) {
		if r.Outcome != Unchanged {
			t.Errorf("a second append gave %s", r.Outcome)
		}
	}
}

// TestEditedOpenRound: the last round is provisional; an append refuses to
// replace a person's edit there, unless forced.
func TestEditedOpenRound(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	l := newLive(t)
	l.put(rel, prefixLines(whole, 30))
	l.update(false)
	md := filepath.Join(l.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222.md")
	doc, _ := os.ReadFile(md)
	// The last item belongs to the open round: add a paragraph to it.
	edited := append(append([]byte{}, doc...), "\nthird question?\n"...)
	os.WriteFile(md, edited, 0o644)
	l.put(rel, whole)
	var ee *EditedError
	if err := updateErr(t, l, Options{}); !errors.As(err, &ee) {
		t.Fatalf("error %v, want EditedError", err)
	}
	if got, _ := os.ReadFile(md); !bytes.Equal(got, edited) {
		t.Fatal("the edited document was changed")
	}
	if err := updateErr(t, l, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(md); bytes.Contains(got, []byte("third question?")) {
		t.Error("--force did not replace the provisional round")
	}

	// Forced on a source that did not change, the read note stays what it
	// was, and no pending note is left behind.
	note := statePath(folderOf(md))
	before, _ := os.ReadFile(note)
	doc, _ = os.ReadFile(md)
	os.WriteFile(md, append(doc, "\nedited again\n"...), 0o644)
	if err := updateErr(t, l, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(note); !bytes.Equal(after, before) {
		t.Errorf("the read note changed:\n%s\nwas\n%s", after, before)
	}
}

// TestStoreFaults: a full disk or a read-only store is a clear error, and
// the previous document stays intact.
func TestStoreFaults(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	for _, c := range []struct {
		name string
		op   string
		err  error
	}{
		{"disk-full", "write", syscall.ENOSPC},
		{"read-only", "open", syscall.EROFS},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLive(t)
			l.put(rel, prefixLines(whole, 30))
			l.update(false)
			before := l.snapshot()
			l.put(rel, whole)
			atomicfile.TestOnlyFault = func(op, name string) error {
				if op == c.op {
					return c.err
				}
				return nil
			}
			err := updateErr(t, l, Options{})
			atomicfile.TestOnlyFault = nil
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			sameSnapshot(t, "after the failed append", l.snapshot(), before)
			// Once the fault is gone, the append completes.
			l.update(false)
			ref := newLive(t)
			ref.put(rel, whole)
			ref.update(true)
			sameSnapshot(t, "after the fault cleared", l.snapshot(), ref.snapshot())
		})
	}
}

// TestSidechainGrows: a subagent transcript that appears, or grows, after
// its session was inscribed ends up as if inscribed whole.
func TestSidechainGrows(t *testing.T) {
	main, rel := sample(t, "-home-dev-src-subagent", "33333333-3333-4333-8333-333333333333")
	subRel := filepath.Join("-home-dev-src-subagent", "33333333-3333-4333-8333-333333333333", "subagents", "agent-a851eb1970e603fa2")
	sub, _ := os.ReadFile(filepath.Join(testenv.Projects(t), subRel+".jsonl"))
	meta, _ := os.ReadFile(filepath.Join(testenv.Projects(t), subRel+".meta.json"))
	ref := newLive(t)
	ref.put(rel, main)
	ref.put(subRel+".jsonl", sub)
	ref.put(subRel+".meta.json", meta)
	ref.update(true)
	want := ref.snapshot()
	for _, n := range []int{-1, 0, 1, 5, 9, 14} { // -1: the subagent file does not exist yet
		l := newLive(t)
		l.put(rel, main)
		if n >= 0 {
			l.put(subRel+".jsonl", prefixLines(sub, n))
			l.put(subRel+".meta.json", meta)
		}
		l.update(false)
		l.put(subRel+".jsonl", sub)
		l.put(subRel+".meta.json", meta)
		l.update(false)
		sameSnapshot(t, fmt.Sprintf("subagent cut after %d lines", n), l.snapshot(), want)
	}
}

// TestNoteMadeFromRecord: a document whose read note is not on this
// machine (a clone of the store, a .scribe/ deleted; or a note lost, or a
// rebuild killed after writing only the next note) gets it from its record
// at its next update, and the update then goes on as if the note had been
// there: the store ends as the whole inscription leaves it, byte for byte.
// Without a record of its round files either, the document is not touched
// until the update is told to rebuild it.
func TestNoteMadeFromRecord(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	ref := newLive(t)
	ref.put(rel, whole)
	ref.update(true)
	want := ref.snapshot()

	folder := filepath.Join("sessions", "claude", "22222222-2222-4222-8222-222222222222")
	for _, c := range []struct {
		name   string
		note   string // what state.json holds instead of the real note ("": none)
		record bool   // rounds.tsv is lost too
	}{
		{"deleted", "", false},
		{"local state deleted", "-", false},
		{"unreadable", "{not json", false},
		{"killed-rebuild", `{"version":1,"none":true,"next":{"version":1,"size":1,"seen":1,"doc_open_at":0,"doc_tail_hash":"00"}}`, false},
		{"no record", "", true},
	} {
		for _, verify := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/verify=%v", c.name, verify), func(t *testing.T) {
				l := newLive(t)
				l.put(rel, prefixLines(whole, 30)) // closed rounds, and an open one
				l.update(true)
				l.put(rel, whole)
				dir := filepath.Join(l.root, "data", folder)
				p := statePath(dir)
				switch c.note {
				case "-":
					os.RemoveAll(filepath.Join(l.root, "data", localDir))
				case "":
					os.Remove(p)
				default:
					os.WriteFile(p, []byte(c.note), 0o644)
				}
				if c.record {
					os.Remove(filepath.Join(dir, roundsFile))
					before := l.snapshot()
					err := updateErr(t, l, Options{Verify: verify})
					var mn *MissingNoteError
					if !errors.As(err, &mn) || !strings.Contains(err.Error(), "22222222-2222-4222-8222-222222222222.md") || !strings.Contains(err.Error(), stateFile) {
						t.Fatalf("error %v, want a MissingNoteError naming the document and its note", err)
					}
					sameSnapshot(t, "after the refused update", l.snapshot(), before)
					if err := updateErr(t, l, Options{Verify: true, Rebuild: true}); err != nil {
						t.Fatal(err)
					}
				} else if err := updateErr(t, l, Options{Verify: verify}); err != nil {
					t.Fatal(err)
				}
				got := l.snapshot()
				if c.note == "-" {
					// The derived indexes this test's store does not keep.
					for k := range want {
						if _, ok := got[k]; !ok && strings.HasSuffix(k, ".db") {
							delete(want, k)
						}
					}
				}
				sameSnapshot(t, "after the update", got, want)
			})
		}
	}
}

// TestFirstInscriptionStopped: a first inscription that commits its round
// files as it goes (inscribe.roundsPerCommit) and stops before it puts the
// document in place leaves a folder that is no orphan (a document deleted
// by hand) but an unfinished inscription, which the next update finishes:
// the store then is what an inscription of the whole session gives.
func TestFirstInscriptionStopped(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	ref := newLive(t)
	ref.put(rel, whole)
	ref.update(true)
	want := ref.snapshot()

	l := newLive(t)
	l.put(rel, whole)
	doc := filepath.Join(l.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222.md")
	TestOnlyRoundsPerCommit = 1
	atomicfile.TestOnlyFault = func(op, name string) error {
		if name == doc {
			return syscall.EIO
		}
		return nil
	}
	err := updateErr(t, l, Options{})
	atomicfile.TestOnlyFault, TestOnlyRoundsPerCommit = nil, 0
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("error %v, want the fault's", err)
	}
	rounds, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(doc, ".md"), "rounds", "*"))
	if len(rounds) < 2 {
		t.Fatalf("the stopped inscription committed %d round files, want some", len(rounds))
	}
	s := l.store()
	if o := s.Orphans(""); len(o) != 0 {
		t.Errorf("orphans %v, want none", o)
	}
	if u := s.Unfinished(""); len(u) != 1 || u[0].Path() != doc {
		t.Errorf("unfinished %v, want %s", u, doc)
	}
	if u := s.Unfinished("22222222-2222-4222-8222-222222222222"); len(u) != 1 {
		t.Errorf("unfinished by name %v, want %s", u, doc)
	}
	l.update(false)
	sameSnapshot(t, "after the stopped inscription was finished", l.snapshot(), want)
	if u := l.store().Unfinished(""); len(u) != 0 {
		t.Errorf("unfinished %v after the update, want none", u)
	}
}
