package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// tmp is the repository's copy of the Gemini corpus, laid out as
// ~/.gemini/tmp.
var tmp = filepath.Join("..", "..", "testdata", "gemini", "tmp")

// corpus returns the session files of the corpus that are not startup
// files, subagents' included.
func corpus(t testing.TB) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			if h, ok := readHead(p); ok && !h.stub {
				out = append(out, p)
			}
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatal("no Gemini sessions in testdata/gemini/tmp")
	}
	return out
}

// corpusFile is the session file of a scenario of the corpus.
func corpusFile(t testing.TB, project, id8 string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(tmp, project, "chats", "session-*-"+id8+".jsonl"))
	for _, m := range ms {
		if h, ok := readHead(m); ok && !h.stub {
			return m
		}
	}
	t.Fatalf("no session %s in %s", id8, project)
	return ""
}

// recorder is the store's graph, in memory.
type recorder struct {
	byID   map[string]source.Node
	items  []source.Node
	listed map[string]bool
}

func newRecorder() *recorder {
	return &recorder{byID: map[string]source.Node{}, listed: map[string]bool{}}
}

func (g *recorder) Lookup(u string) (source.Node, bool) { n, ok := g.byID[u]; return n, ok }
func (g *recorder) Items() []source.Node                { return g.items }
func (g *recorder) Record(nodes []source.Node) {
	for _, n := range nodes {
		// As in the store's graph: an identity's first item is listed,
		// and the first node of an identity found.
		if n.IsItem() && !g.listed[n.UUID] {
			g.listed[n.UUID] = true
			g.items = append(g.items, n)
		}
		if _, ok := g.byID[n.UUID]; !ok {
			g.byID[n.UUID] = n
		}
	}
}

// built is what a builder made of a source.
type built struct {
	rounds   []*session.Round // closed, then the open one
	fin      source.Finished
	state    json.RawMessage
	warnings []error
}

// items are the document's items, in order.
func (b built) items() []session.Item {
	var out []session.Item
	for _, r := range b.rounds {
		out = append(out, r.Items...)
	}
	return out
}

// build feeds the lines of data from line first on (stopping at a torn
// last line, as the store does) to a builder at state, with graph g.
func build(t testing.TB, file string, data []byte, first int, state json.RawMessage, g *recorder) built {
	t.Helper()
	b, err := NewBuilder(source.Config{File: file}, state, g)
	if err != nil {
		t.Fatal(err)
	}
	var out built
	lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		if l.No < first {
			continue
		}
		if l.Torn() {
			break
		}
		if r := b.Add(l); r != nil {
			out.rounds = append(out.rounds, r)
		}
	}
	out.fin = b.Finish()
	if out.fin.Open != nil {
		out.rounds = append(out.rounds, out.fin.Open)
	}
	if out.state, err = b.State(); err != nil || !json.Valid(out.state) {
		t.Fatalf("%s: the builder's state: %q, %v", file, out.state, err)
	}
	out.warnings = b.Warnings()
	return out
}

func buildFile(t testing.TB, p string) built {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return build(t, p, data, 1, nil, newRecorder())
}

// TestCorpusBuilds: every session of the corpus builds with every line in
// a round, and without a warning.
func TestCorpusBuilds(t *testing.T) {
	for _, p := range corpus(t) {
		data, _ := os.ReadFile(p)
		b := buildFile(t, p)
		kept := 0
		for _, r := range b.rounds {
			kept += len(r.Entries)
		}
		lines := bytes.Count(data, []byte("\n"))
		if kept != lines {
			t.Errorf("%s: %d complete lines, %d kept", p, lines, kept)
		}
		for _, w := range b.warnings {
			t.Errorf("%s: %v", p, w)
		}
		if b.fin.Meta.SessionID == "" || len(b.items()) == 0 {
			t.Errorf("%s: session %q, %d items", p, b.fin.Meta.SessionID, len(b.items()))
		}
	}
}

// TestPrefixThenContinue: a session built in two runs, cut at every line
// boundary (the second run starting from the first's state, at its open
// round, with the graph of its closed rounds), gives the items and the
// head that one run over the whole gives.
func TestPrefixThenContinue(t *testing.T) {
	for _, p := range corpus(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			whole := build(t, p, data, 1, nil, newRecorder())
			want := whole.items()
			lines := bytes.SplitAfter(data, []byte("\n"))
			step := 1
			if len(lines) > 120 {
				step = len(lines) / 60 // a long session: a sample of its lines
			}
			for cut := 0; cut <= len(lines); cut += step {
				g := newRecorder()
				prefix := bytes.Join(lines[:cut], nil)
				first := build(t, p, prefix, 1, nil, g)
				var pos struct {
					NextLine int `json:"next_line"`
				}
				json.Unmarshal(first.state, &pos)
				if pos.NextLine == 0 {
					pos.NextLine = 1
				}
				second := build(t, p, data, pos.NextLine, first.state, g)
				var got []session.Item
				for _, r := range first.rounds {
					if !r.Open {
						got = append(got, r.Items...)
					}
				}
				got = append(got, second.items()...)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("cut after line %d: the items differ from one run's:\n%s", cut, diffItems(got, want))
				}
				if !reflect.DeepEqual(second.fin.Meta, whole.fin.Meta) || second.fin.FirstPrompt != whole.fin.FirstPrompt {
					t.Fatalf("cut after line %d: the head differs:\n got %+v\nwant %+v", cut, second.fin.Meta, whole.fin.Meta)
				}
			}
		})
	}
}

func diffItems(got, want []session.Item) string {
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w any = "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "item %d:\n got %+v\nwant %+v\n", i, g, w)
		}
	}
	return b.String()
}

// summary is an item as the tests below expect it: its id (shortened to
// 8 characters, "@" and the line kept), role and note, and the parent it
// names.
func summary(it session.Item) string {
	id := it.IDs[0]
	at := ""
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id, at = id[:i], id[i:]
	}
	s := id[:min(8, len(id))] + at + " " + it.Role
	if it.Note != "" {
		s += "/" + it.Note
	}
	if it.Parent != "" {
		s += " <- " + it.Parent[:min(8, len(it.Parent))]
	}
	return s
}

func summaries(items []session.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = summary(it)
	}
	return out
}

// TestReplay: what the client's rewrites of its history make of the
// document, scenario by scenario of the corpus.
func TestReplay(t *testing.T) {
	for _, c := range []struct {
		project, id8 string
		items        []string
		leaf         string
		branches     []session.Branch
	}{
		// A resume in the creation minute writes the history again
		// (twice): nothing new is shown.
		{"quick-resume", "9edddddd", []string{"d04923d3 system/context", "de88d79f user", "afe15239 assistant", "01c044cc assistant",
			"cdb90942 user", "47f2fb38 assistant", "10853cd9 assistant", "5c404f35 user", "c608727d assistant"}, "c608727d-55cd-4cdb-82ca-6bfbbf9d8a46", nil},
		// /rewind to the second prompt: the new prompt continues the
		// first reply, beside the rewound one.
		{"rewind", "9e555555", []string{"d04923d3 system/context", "7fae6302 user", "85693c8d assistant", "d7c99e61 user", "5bfdb4a7 assistant",
			"83ef0f1f user", "d1dbe5ef assistant", "ec11c577 user <- 85693c8d", "c83d7727 assistant", "586e9569 user", "4f2aa714 assistant"},
			"4f2aa714-f867-41cc-a774-b3d41ba64651", []session.Branch{{At: "85693c8d-a258-4b48-883b-3823429e2941",
				Children: []string{"d7c99e61-cb4a-4fe4-b636-a35309490f1c", "ec11c577-9c92-4d85-916b-1dba0bab510b"}, Live: "ec11c577-9c92-4d85-916b-1dba0bab510b"}}},
		// A compression: the snapshot continues the history it
		// replaced, which stays on the live branch (as a compaction of
		// Claude Code's), and the client's restatement of the last turn
		// follows it.
		{"compress", "9e444444", []string{"d04923d3 system/context", "b03f0590 user", "9380e9f8 assistant", "0dd9f8e1 user", "0b8eb7ce assistant",
			"584638c8 user", "ede3f255 assistant", "0feae14c system/compaction", "501c405a assistant", "416177fc user", "e3cb238a assistant",
			"75ffcedb assistant", "20fe38d4 user", "957fa060 assistant"}, "957fa060-c19f-46ea-9507-fcc0f0484017", nil},
		// A loop-detection rollback leaves nothing but the context.
		{"loop-detected", "9effffff", []string{"d04923d3 system/context", "80a74cac user", "dac72ba4 user <- d04923d3"}, "d04923d38bb0f6017037e74183378ef4",
			[]session.Branch{{At: "d04923d38bb0f6017037e74183378ef4", Children: []string{"80a74cac-da8d-43a7-a883-0f9adc973fb8", "dac72ba4-92e5-4b77-a71d-7fcad0e84e67"}}}},
	} {
		b := buildFile(t, corpusFile(t, c.project, c.id8))
		if got := summaries(b.items()); !reflect.DeepEqual(got, c.items) {
			t.Errorf("%s: items\n got %q\nwant %q", c.project, got, c.items)
		}
		if got := b.fin.Meta.Leaf; got == nil || *got != c.leaf {
			t.Errorf("%s: leaf %v, want %s", c.project, got, c.leaf)
		}
		if got := b.fin.Meta.Branches; !reflect.DeepEqual(got, c.branches) {
			t.Errorf("%s: branches\n got %+v\nwant %+v", c.project, got, c.branches)
		}
	}
}

// TestBadInput: what the client would not read, or reads otherwise than
// it looks, is a warning naming the file and the line; every line is kept.
func TestBadInput(t *testing.T) {
	ctx := `{"$set":{"messages":[{"id":"ctx","timestamp":"t0","type":"user","content":[{"text":"<session_context>\nhi\n</session_context>"}]}]}}`
	lines := []string{
		`{"sessionId":"s1","projectHash":"h","startTime":"t0","kind":"main"}`,
		ctx,
		`{"id":"p1","timestamp":"t1","type":"user","content":[{"text":"first"}]}`,
		`{not json`,
		`{"whatever":1}`,
		`{"id":"r1","timestamp":"t2","type":"gemini","content":"reply","toolCalls":"not a list"}`,
		`{"$rewindTo":"nowhere"}`,
		`{"id":"x1","timestamp":"t3","type":"future","content":"?"}`,
		`{"$set":{"messages":[{"no":"id"},{"id":"p2","timestamp":"t4","type":"user","content":"again"}]}}`,
		``,
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	b := build(t, "bad.jsonl", data, 1, nil, newRecorder())
	var got []string
	for _, w := range b.warnings {
		le, ok := w.(*source.LineError)
		if !ok || le.File != "bad.jsonl" {
			t.Errorf("warning %v does not name the file and line", w)
			continue
		}
		got = append(got, fmt.Sprintf("%d: %s", le.Line, le.Msg))
	}
	for _, want := range []string{"4: not a JSON object", "5: a record of no kind the client reads", "6: a field of another type",
		"7: $rewindTo names message nowhere, which is not in the history", "8: message x1 of type \"future\"", "9: element 0 of the messages set is not a message"} {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Errorf("no warning %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	kept := 0
	for _, r := range b.rounds {
		kept += len(r.Entries)
	}
	if kept != len(lines) {
		t.Errorf("%d lines, %d kept", len(lines), kept)
	}
	// The rewind to an unknown message emptied the history, as the
	// client does: what comes next starts again from the root; the $set
	// after it replaces the history with a message of a person's the
	// document does not show, a compression (its summary continues what
	// it replaced); everything stays in the document.
	if got, want := summaries(b.items()), []string{"ctx system/context", "p1 user", "r1 assistant", "x1 future <- root", "p2 system/compaction"}; !reflect.DeepEqual(got, want) {
		t.Errorf("items %q, want %q", got, want)
	}
}

// FuzzBuilder: any bytes build without a panic, every line is kept in some
// round, and the state is JSON.
func FuzzBuilder(f *testing.F) {
	for _, p := range corpus(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		parts := bytes.SplitAfter(data, []byte("\n"))
		for i := 0; i+4 <= len(parts) && i < 40; i += 4 {
			f.Add(bytes.Join(parts[i:i+4], nil))
		}
	}
	f.Add([]byte("null\n[1]\n\"s\"\n{}\n{\"id\":1}\n{\"$set\":null}\n{\"$rewindTo\":\"a\"}\n{\"id\":\"a\",\"type\":\"gemini\",\"toolCalls\":[{\"id\":\"c\",\"result\":7}]}\n"))
	f.Add([]byte(`{"id":"u","type":"user","content":[{"functionResponse":{"id":"c","response":{"output":"x"}}},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := build(t, "fuzz.jsonl", data, 1, nil, newRecorder())
		kept := 0
		for _, r := range b.rounds {
			kept += len(r.Entries)
		}
		lr := source.NewLineReader(bytes.NewReader(data), 1, 0)
		lines := 0
		for {
			l, err := lr.Next()
			if err != nil || l.Torn() {
				break
			}
			lines++
		}
		if kept != lines {
			t.Fatalf("%d lines, %d kept", lines, kept)
		}
	})
}
