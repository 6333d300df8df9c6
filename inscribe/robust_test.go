package inscribe

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session/source"
)

// line builds a JSONL line.
func line(s string) string { return s + "\n" }

const (
	prompt1 = `{"parentUuid":null,"isSidechain":false,"promptId":"p1","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/me/app","sessionId":"s1","version":"2.1.0"}`
	reply1  = `{"parentUuid":"u1","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"text","text":"hi there"}]},"type":"assistant","uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z","sessionId":"s1"}`
)

// inscribeOne inscribes one transcript with the given content and returns
// the result and the document.
func inscribeOne(t *testing.T, name string, content []byte) (Result, []byte, *Store) {
	t.Helper()
	l := newLive(t)
	p := l.put(filepath.Join("-home-me-app", name), content)
	s := l.store()
	res := s.Update(claudeAt(p, strings.TrimSuffix(name, ".jsonl"), filepath.Dir(p)), Options{Verify: true})
	r := res[len(res)-1]
	var doc []byte
	if r.Err == nil {
		doc, _ = os.ReadFile(r.Doc)
	}
	return r, doc, s
}

// exportOf regenerates the transcript of a document from its round files.
func exportOf(t *testing.T, md string) []byte {
	t.Helper()
	var buf bytes.Buffer
	folder := folderOf(md)
	ns, err := roundNumbers(roundsDir(folder))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, n := range ns {
		rf, err := readRound(filepath.Join(roundsDir(folder), roundName(n)))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeEntries(&buf, rf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func warned(r Result, file string, lineNo int, substr string) bool {
	for _, w := range r.Warnings {
		var le *source.LineError
		if errors.As(w, &le) && le.Line == lineNo && strings.HasSuffix(le.File, file) && strings.Contains(le.Msg, substr) {
			return true
		}
	}
	return false
}

// TestBadInput: input the adapter must survive. Each case is inscribed; the
// problem is reported with its file and line; nothing is lost (the round
// files give the input back byte for byte, less a torn last line); and the
// document parses.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name    string
		input   string
		want    string // the export, when not the input
		warn    int    // the line a warning must name (0: none)
		warnMsg string
		inDoc   string // text the document must show
	}{
		{name: "torn-last-line", input: line(prompt1) + `{"parentUuid":"u1","type":"assi`, want: line(prompt1), warn: 2, warnMsg: "torn last line"},
		{name: "invalid-json-mid-file", input: line(prompt1) + line(`{"type": nope}`) + line(reply1), warn: 2, warnMsg: "not a JSON object", inDoc: "hi there"},
		{name: "unknown-entry-type", input: line(prompt1) + line(`{"type":"hologram","uuid":"h1","parentUuid":"u1","timestamp":"2026-01-01T00:00:00.500Z","beam":{"x":1}}`) + line(`{"type":"telemetry-v9","n":3}`) + line(reply1),
			inDoc: `"beam":{"x":1}`},
		{name: "entries-without-uuid", input: line(`{"type":"user","message":{"role":"user","content":"no identity"},"timestamp":"2026-01-01T00:00:00.000Z"}`) + line(reply1), inDoc: "no identity"},
		{name: "dangling-parent", input: line(prompt1) + line(strings.Replace(reply1, `"parentUuid":"u1"`, `"parentUuid":"nowhere"`, 1)), inDoc: "continues nowhere, which is not in this transcript"},
		{name: "tool-use-without-result", input: line(prompt1) + line(`{"parentUuid":"u1","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"sleep 100"}}]},"type":"assistant","uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}`),
			inDoc: "No result recorded."},
		// An empty file makes no document: TestNoEntryYetIsSkipped.
		{name: "blank-lines", input: line(prompt1) + "\n   \n" + line(reply1), inDoc: "hi there"},
		{name: "no-final-newline", input: line(prompt1) + reply1, inDoc: "hi there"},
		{name: "crlf-line-ends", input: prompt1 + "\r\n" + reply1 + "\r\n", warn: 0},
		{name: "invalid-utf8", input: line(strings.Replace(prompt1, "hello", "hel\xff\xfelo", 1)) + line(reply1), warn: 1, warnMsg: "invalid UTF-8", inDoc: "hel\ufffd\ufffdlo"},
		{name: "message-not-an-object", input: line(`{"type":"user","uuid":"u1","message":"just a string","timestamp":"t"}`), warn: 1, warnMsg: "message is not an object"},
		{name: "content-of-odd-shape", input: line(`{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":{"weird":true}},"timestamp":"t"}`), inDoc: `{"weird":true}`},
		{name: "top-level-array", input: line(prompt1) + line(`[1,2,3]`) + line(reply1), warn: 2, warnMsg: "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, doc, _ := inscribeOne(t, "s1.jsonl", []byte(c.input))
			if r.Err != nil {
				t.Fatalf("inscribe failed: %v", r.Err)
			}
			want := c.input
			if c.want != "" {
				want = c.want
			}
			if got := exportOf(t, r.Doc); string(got) != want {
				t.Errorf("round files give back\n%q\nwant\n%q", got, want)
			}
			if c.warn > 0 && !warned(r, "s1.jsonl", c.warn, c.warnMsg) {
				t.Errorf("no warning naming s1.jsonl:%d %q; warnings: %v", c.warn, c.warnMsg, r.Warnings)
			}
			if c.warn == 0 && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings: %v", r.Warnings)
			}
			if c.inDoc != "" && !bytes.Contains(doc, []byte(c.inDoc)) {
				t.Errorf("the document does not show %q", c.inDoc)
			}
			if _, err := document.Parse(doc, r.Doc); err != nil {
				t.Errorf("the document does not parse: %v", err)
			}
		})
	}
}

// TestUnsafeSessionID: a session id that would escape the store is refused;
// the store is untouched.
func TestUnsafeSessionID(t *testing.T) {
	l := newLive(t)
	s := l.store()
	for _, id := range []string{"..", ".", "a/b", "", "index", "Index"} {
		res := s.Update(claudeAt(l.put("-p/x.jsonl", []byte(line(prompt1))), id, l.projects), Options{})
		if len(res) != 1 || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "refused") {
			t.Errorf("id %q: %+v, want refused", id, res)
		}
	}
	if _, err := os.Stat(s.SessionsDir()); !errors.Is(err, os.ErrNotExist) {
		t.Error("the store was written to")
	}
	// An id inside the content is not trusted: the file name is the id.
	r, _, _ := inscribeOne(t, "good.jsonl", []byte(line(strings.Replace(prompt1, `"sessionId":"s1"`, `"sessionId":"../../etc"`, 1))))
	if r.Err != nil || filepath.Base(r.Doc) != "good.md" {
		t.Errorf("got %v %s", r.Err, r.Doc)
	}
}

// TestUnreadableSource: a source that cannot be read fails alone; the rest
// of a batch goes on.
func TestUnreadableSource(t *testing.T) {
	l := newLive(t)
	l.put("-p/ok.jsonl", []byte(line(prompt1)))
	if err := os.Symlink(filepath.Join(l.root, "missing"), filepath.Join(l.projects, "-p", "gone.jsonl")); err != nil {
		t.Fatal(err)
	}
	// Discovery leaves a link that leads nowhere out, saying so
	// (source.Tree); a source that cannot be read once found still fails
	// alone.
	ts, err := claudeSrc.Discover(filepath.Join(l.projects, "-p"))
	skips, err := source.Skips(err)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 1 || filepath.Base(skips[0].Path) != "gone.jsonl" {
		t.Errorf("skipped %v, want gone.jsonl", skips)
	}
	gone := filepath.Join(l.projects, "-p", "gone.jsonl")
	ts = append(ts, claudeAt(gone, "gone", filepath.Dir(gone)))
	s := l.store()
	failed, ok := 0, 0
	for _, tr := range ts {
		for _, r := range s.Update(tr, Options{}) {
			if r.Err != nil {
				failed++
				if !strings.Contains(r.Err.Error(), "gone.jsonl") {
					t.Errorf("the error does not name the file: %v", r.Err)
				}
			} else {
				ok++
			}
		}
	}
	if failed != 1 || ok != 1 {
		t.Errorf("%d failed, %d ok; want 1 and 1", failed, ok)
	}
}

// TestHugeLine: a line over 100 MB is read, kept and given back whole.
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the 100 MB line")
	}
	big := strings.Repeat("x", 101<<20)
	shape := `{"type":"api-request-shape","sessionId":"s1","shape":"` + big + `"}`
	input := line(prompt1) + line(shape) + line(reply1)
	r, doc, _ := inscribeOne(t, "s1.jsonl", []byte(input))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := exportOf(t, r.Doc); !bytes.Equal(got, []byte(input)) {
		t.Error("the huge line did not come back whole")
	}
	if !bytes.Contains(doc, []byte("hi there")) {
		t.Error("the entries after the huge line are missing")
	}
}
