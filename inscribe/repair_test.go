package inscribe

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// edit makes a person's edits to the five-round sample's document: the
// summary, and the text of round 2's reply.
func edit(t *testing.T, md string) []byte {
	t.Helper()
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(doc, []byte("_Summary pending. First prompt:_ first question"), []byte("A summary, by hand."), 1)
	edited = bytes.Replace(edited, []byte("\nAnswer number 2.\n"), []byte("\nAnswer number two (edited by hand).\n"), 1)
	if bytes.Count(edited, []byte("by hand")) != 2 {
		t.Fatal("the sample no longer holds the text the test edits")
	}
	if err := os.WriteFile(md, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	return edited
}

func repairOne(t *testing.T, l *liveDir, src string) Result {
	t.Helper()
	return updateOne(t, l, src, Options{Repair: true})
}

// TestRepairKeepsEdits: round files, the read note, the record and the
// graph lost at once are rebuilt from the source, and the document, which
// still reads and holds the same messages, is left as it is: the person's
// summary and edited message stay (issue 14).
func TestRepairKeepsEdits(t *testing.T) {
	l, src, md := recordStore(t)
	want := l.snapshot()
	edited := edit(t, md)
	folder := folderOf(md)
	os.Remove(roundPath(folder, 3))
	os.Truncate(roundPath(folder, 5), 10) // the open round
	os.Remove(statePath(folder))
	os.Remove(filepath.Join(folder, roundsFile))
	os.Truncate(graphPath(folder), 7)

	r := repairOne(t, l, src)
	if r.Err != nil || r.Outcome != Repaired {
		t.Fatalf("%s %v", r.Outcome, r.Err)
	}
	for _, what := range []string{"rounds/003.json was missing", "rounds/005.json was damaged", "state.json: made anew"} {
		if !said(r, what) {
			t.Errorf("the repair does not say %q: %v", what, r.Warnings)
		}
	}
	got := l.snapshot()
	rel := "sessions/claude/" + multiturn + ".md"
	if !bytes.Equal(got[rel], edited) {
		t.Errorf("the document changed:\n%s", got[rel])
	}
	got[rel] = want[rel]
	sameSnapshot(t, "after the repair", openAtAside(got), openAtAside(want))
	if r := updateOne(t, l, src, Options{Verify: true}); r.Err != nil || r.Outcome != Unchanged {
		t.Errorf("inscribe after the repair: %s %v", r.Outcome, r.Err)
	}
	// A sound document: nothing to do, nothing written.
	before := stamps(t, filepath.Join(l.root, "data"))
	if r := repairOne(t, l, src); r.Err != nil || r.Outcome != Unchanged || len(r.Warnings) > 0 {
		t.Errorf("repair of a sound document: %s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	if after := stamps(t, filepath.Join(l.root, "data")); !sameStamps(before, after) {
		t.Error("the repair of a sound document wrote to the store")
	}
}

// openAtAside drops the read notes' doc_open_at, which a person's edit of
// the summary moves.
func openAtAside(snap map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range snap {
		if filepath.Base(k) == stateFile {
			v = regexp.MustCompile(`"doc_open_at": [0-9]+`).ReplaceAll(v, nil)
		}
		out[k] = v
	}
	return out
}

func said(r Result, what string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w.Error(), what) {
			return true
		}
	}
	return false
}

func sameStamps(a, b map[string]stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRepairDamagedDocument: a document cut short is rebuilt from the
// source, keeping its head's summary and every message that is still whole
// as it was, edits included; a document deleted is rebuilt whole.
func TestRepairDamagedDocument(t *testing.T) {
	l, src, md := recordStore(t)
	edited := edit(t, md)
	cut := bytes.Index(edited, []byte("\nAnswer number 4.")) // in round 4
	if err := os.WriteFile(md, edited[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	r := repairOne(t, l, src)
	if r.Err != nil || r.Outcome != Repaired || !said(r, ".md was damaged: rebuilt from the source, keeping 7 of its messages") {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	if got, _ := os.ReadFile(md); !bytes.Equal(got, edited) {
		t.Errorf("the rebuilt document is not the edited one:\n%s", got)
	}
	if r := updateOne(t, l, src, Options{Verify: true}); r.Err != nil || r.Outcome != Unchanged {
		t.Errorf("inscribe after the repair: %s %v", r.Outcome, r.Err)
	}

	want := l.snapshot()
	os.Remove(md)
	if r := repairOne(t, l, src); r.Err != nil || r.Outcome != Repaired || !said(r, ".md was missing: rebuilt from the source") {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	got := l.snapshot()
	rel := "sessions/claude/" + multiturn + ".md"
	if !bytes.Contains(got[rel], []byte("Answer number 2.")) {
		t.Errorf("a deleted document comes back as the source gives it")
	}
	got[rel] = want[rel]
	sameSnapshot(t, "after the repair of a deleted document", openAtAside(got), openAtAside(want))
}

// TestRepairSourceGone: with the source gone, what the round files hold
// rebuilds the rest (here a deleted document and read note); a damaged round
// file cannot be recovered, and the repair says so, naming it, and changes
// nothing.
func TestRepairSourceGone(t *testing.T) {
	l, src, md := recordStore(t)
	want := l.snapshot()
	os.Remove(src)
	folder := folderOf(md)
	os.Remove(md)
	os.Remove(statePath(folder))
	r := repairOne(t, l, src)
	if r.Err != nil || r.Outcome != Repaired || !said(r, "the source is gone: rebuilt from the round files") || !said(r, ".md was missing: rebuilt from the round files") {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	sameSnapshot(t, "rebuilt from the round files", l.snapshot(), want)

	os.Truncate(roundPath(folder, 2), 50)
	before := l.snapshot()
	r = repairOne(t, l, src)
	var de *DamageError
	if !errors.As(r.Err, &de) || de.File != roundPath(folder, 2) || !strings.Contains(de.Why, "cannot be recovered: "+src+": the source is gone") {
		t.Fatalf("%v, want round 2 named as lost", r.Err)
	}
	sameSnapshot(t, "after a repair that could not", l.snapshot(), before)
}

// TestRepairSourceChanged: a source whose inscribed part changed is not
// trusted; the round files, when whole, are.
func TestRepairSourceChanged(t *testing.T) {
	l, src, md := recordStore(t)
	want := l.snapshot()
	data, _ := os.ReadFile(src)
	os.WriteFile(src, bytes.Replace(data, []byte("first question"), []byte("FIRST question"), 1), 0o644)
	os.Remove(md)
	r := repairOne(t, l, src)
	if r.Err != nil || r.Outcome != Repaired || !said(r, "no longer holds what was inscribed from it: rebuilt from the round files") {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	sameSnapshot(t, "rebuilt from the round files", l.snapshot(), want)
}

// TestSameMessagesBeforeNotes: a document written before the client's
// bookkeeping became notes holds such an entry as a message of its own; a
// repair takes it for the same messages, and leaves it as it is.
func TestSameMessagesBeforeNotes(t *testing.T) {
	note := session.Block{Kind: session.KindNote, Label: "turn_duration", Entry: "s1", Time: "t2", Text: "turn took 3 s"}
	reply := session.Item{Time: "t1", Role: "assistant", IDs: []string{"a1"}, Blocks: []session.Block{{Kind: session.KindText, Text: "hi"}}}
	prompt := session.Item{Round: 1, Time: "t0", Role: "user", IDs: []string{"u1"}, Blocks: []session.Block{{Kind: session.KindText, Text: "hello"}}}
	meta := session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude"}
	withNote := reply
	withNote.Blocks = append(append([]session.Block(nil), reply.Blocks...), note)
	fresh := document.Render(&session.Document{Meta: meta, Summary: "s", Items: []session.Item{prompt, withNote}})
	system := session.Item{Time: "t2", Role: "system", Note: "turn_duration", IDs: []string{"s1"}, Blocks: []session.Block{{Kind: session.KindRaw, Label: "system", Text: `{"type":"system"}`}}}
	old := document.Render(&session.Document{Meta: meta, Summary: "s", Items: []session.Item{prompt, reply, system}})
	if !sameMessages(memDoc(old), memDoc(fresh), "doc.md") {
		t.Error("a document written before notes does not hold the same messages")
	}
	other := system
	other.IDs = []string{"x1"}
	if sameMessages(memDoc(document.Render(&session.Document{Meta: meta, Summary: "s", Items: []session.Item{prompt, reply, other}})), memDoc(fresh), "doc.md") {
		t.Error("a message the fresh document has nowhere is taken for the same messages")
	}
	if sameMessages(memDoc(document.Render(&session.Document{Meta: meta, Summary: "s", Items: []session.Item{prompt}})), memDoc(fresh), "doc.md") {
		t.Error("a document short of a message is taken for the same messages")
	}
}

// TestItemChunks checks that the messages repair finds in a document by
// its lines are the messages the parser reads, each chunk running from
// its ItemOpen to the next one's, with documents whose lines are longer
// than the reader's buffer.
func TestItemChunks(t *testing.T) {
	docs, _ := filepath.Glob("../data/sessions/*/*.md")
	if len(docs) == 0 {
		t.Fatal("no documents in ../data")
	}
	long := strings.Repeat("x", 100<<10)
	for _, md := range docs {
		if filepath.Base(md) == "index.md" {
			continue
		}
		doc, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		// A line longer than the reader's buffer at the end of every
		// message but the last.
		if i := bytes.Index(doc, []byte(document.ItemOpen)); i >= 0 {
			i++
			doc = append(doc[:i:i], bytes.ReplaceAll(doc[i:], []byte(document.ItemOpen), []byte("\n"+long+"\n"+document.ItemOpen))...)
		}
		for _, b := range [][]byte{doc, bytes.ReplaceAll(doc, []byte("\n"+long+"\n"), []byte("\n"))} {
			d, err := document.Parse(b, md)
			if err != nil {
				t.Fatalf("%s: %v", md, err)
			}
			chunks, err := itemChunks(memDoc(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) != len(d.Items) {
				t.Fatalf("%s: %d chunks, %d messages", md, len(chunks), len(d.Items))
			}
			for i, c := range chunks {
				if !slices.Equal(c.ids, d.Items[i].IDs) || !bytes.HasPrefix(b[c.start:], []byte(document.ItemOpen)) {
					t.Fatalf("%s: chunk %d: %v at %d, want the message %v", md, i, c.ids, c.start, d.Items[i].IDs)
				}
				if want := int64(len(b)); i+1 < len(chunks) {
					want = chunks[i+1].start
					if c.end != want {
						t.Fatalf("%s: chunk %d ends at %d, want %d", md, i, c.end, want)
					}
				} else if c.end != want {
					t.Fatalf("%s: the last chunk ends at %d, want %d", md, c.end, want)
				}
			}
		}
	}
}

// TestRepairBuilderState: a repair that replaces the graph also replaces
// the builder's state in the read note it keeps, with the fresh one: the
// state's fork points were read from the graph (here, ones that no run
// of the session would give).
func TestRepairBuilderState(t *testing.T) {
	l, src, md := recordStore(t)
	folder := folderOf(md)
	st, err := readState(folder)
	if err != nil || st == nil {
		t.Fatalf("read note: %v", err)
	}
	fresh := string(st.Builder)
	var builder map[string]json.RawMessage
	if err := json.Unmarshal(st.Builder, &builder); err != nil {
		t.Fatal(err)
	}
	builder["forks"] = json.RawMessage(`{"tip":"bogus","at":[{"at":"bogus","children":["x","y"],"live":"y"}]}`)
	if st.Builder, err = json.Marshal(builder); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath(folder), data, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Truncate(graphPath(folder), 7)

	if r := repairOne(t, l, src); r.Err != nil || r.Outcome != Repaired {
		t.Fatalf("%s %v", r.Outcome, r.Err)
	}
	if st, err = readState(folder); err != nil || st == nil {
		t.Fatalf("read note after the repair: %v", err)
	}
	if got := string(st.Builder); got != fresh {
		t.Errorf("the builder's state after the repair:\n%s\nwant the fresh one:\n%s", got, fresh)
	}
}
