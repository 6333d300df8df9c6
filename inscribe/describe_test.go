package inscribe

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// TestSetSummarySurvivesAppend: a summary and a title written through the
// store stay in the document's head when the session goes on, and the rest
// of the store is what inscribing the whole session gives.
func TestSetSummarySurvivesAppend(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	ref := newLive(t)
	ref.put(rel, whole)
	ref.update(true)
	want := ref.snapshot()

	l := newLive(t)
	l.put(rel, prefixLines(whole, 10))
	l.update(false)
	s := l.store()
	md, ok := s.FindDoc("22222222-2222-4222-8222-222222222222")
	if !ok {
		t.Fatal("the session's document is not in the store")
	}
	const summary = "Asked five numbered questions.\n\nEach answer is `Answer number N.`"
	if changed, err := s.SetSummary(md, "\n  "+summary+"\n"); err != nil || !changed {
		t.Fatalf("SetSummary: changed %v, %v", changed, err)
	}
	if changed, err := s.SetTitle(md, "Numbered questions"); err != nil || !changed {
		t.Fatalf("SetTitle: changed %v, %v", changed, err)
	}
	if changed, err := s.SetSummary(md, summary); err != nil || changed {
		t.Fatalf("SetSummary again: changed %v, %v; want no change", changed, err)
	}
	if err := checkDoc(md); err != nil {
		t.Fatalf("the store after SetSummary: %v", err)
	}

	l.put(rel, whole)
	l.update(false)
	h, err := readHead(md)
	if err != nil {
		t.Fatal(err)
	}
	if h.Summary != summary {
		t.Errorf("summary after the append = %q, want %q", h.Summary, summary)
	}
	if h.Meta.Title == nil || *h.Meta.Title != "Numbered questions" {
		t.Errorf("title after the append = %v, want Numbered questions", h.Meta.Title)
	}
	// Apart from the head, the document and every other file are what
	// inscribing the whole gives.
	got := l.snapshot()
	docRel, _ := filepath.Rel(filepath.Join(l.root, "data"), md)
	g, w := got[docRel], want[docRel]
	if gb, wb := body(t, g), body(t, w); !bytes.Equal(gb, wb) {
		t.Errorf("the document's messages differ from the whole inscription's")
	}
	delete(got, docRel)
	delete(want, docRel)
	// The read note says where the open round starts in the document,
	// which a longer head moves.
	noteRel := filepath.Join(localDir, "docs", strings.TrimSuffix(strings.TrimPrefix(docRel, "sessions"+string(filepath.Separator)), ".md"), stateFile)
	for _, snap := range []map[string][]byte{got, want} {
		snap[noteRel] = regexp.MustCompile(`"doc_open_at": \d+`).ReplaceAll(snap[noteRel], []byte(`"doc_open_at": 0`))
	}
	sameSnapshot(t, "after SetSummary and an append", got, want)
	// The document still parses whole.
	if _, err := document.Parse(g, md); err != nil {
		t.Errorf("the document does not parse: %v", err)
	}
}

// body returns a document from its first message on.
func body(t *testing.T, doc []byte) []byte {
	t.Helper()
	i := bytes.Index(doc, []byte(document.ItemOpen))
	if i < 0 {
		t.Fatal("no message in the document")
	}
	return doc[i:]
}

// TestSetSummaryRefuses: a summary that would hide the messages from the
// parser, or is empty or too long, is refused and the document is left as
// it was.
func TestSetSummaryRefuses(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	l := newLive(t)
	l.put(rel, whole)
	l.update(false)
	s := l.store()
	md, _ := s.FindDoc("22222222-2222-4222-8222-222222222222")
	before, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, summary, want string }{
		{"open fence", "Done.\n\n```go\nfunc main() {", "close every code fence"},
		{"a message", "Done.\n\n---\n\n### 2026-01-01T00:00:00Z · user\n<!-- scribe {\"ids\":[\"x\"],\"time\":\"t\",\"role\":\"user\"} -->\n\nhi", "close every code fence"},
		{"empty", " \n ", "empty"},
		{"too long", strings.Repeat("a", MaxSummary+1), "shorten it"},
		{"not UTF-8", "bad \xff byte", "UTF-8"},
	} {
		if _, err := s.SetSummary(md, c.summary); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: SetSummary: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, title, want string }{
		{"two lines", "one\ntwo", "one line"},
		{"too long", strings.Repeat("t", MaxTitle+1), "shorten it"},
	} {
		if _, err := s.SetTitle(md, c.title); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: SetTitle: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	after, _ := os.ReadFile(md)
	if !bytes.Equal(before, after) {
		t.Error("a refused summary or title changed the document")
	}
}
