package document

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// jsString is s as a JSON string, escaped as the clients escape it.
func jsString(s string) string {
	var buf bytes.Buffer
	writeJSString(&buf, s, false)
	return buf.String()
}

// viewInputs are tool calls whose input a view shows, each with a hole
// ("§") for a hostile text.
var viewInputs = []struct{ tool, input string }{
	{"Bash", `{"command":§,"description":"d","timeout":120000,"run_in_background":false}`},
	{"exec_command", `{"cmd":§,"yield_time_ms":1000}`},
	{"shell", `{"command":["bash","-lc",§],"workdir":"/w"}`},
	{"apply_patch", `§`},
	{"apply_patch", `{"input":§}`},
	{"Edit", `{"file_path":"/a.go","old_string":§,"new_string":"x\n"}`},
	{"Edit", `{"replace_all":true,"file_path":"/a.go","old_string":"a\nb\nc","new_string":§}`},
	{"MultiEdit", `{"file_path":"/a","edits":[{"old_string":§,"new_string":§},{"old_string":"","new_string":§,"replace_all":false}]}`},
	{"Write", `{"file_path":"/a.py","content":§}`},
	{"Read", `{"file_path":§,"offset":10,"limit":20}`},
	{"Grep", `{"pattern":§,"path":"src","output_mode":"content","-n":true}`},
	{"WebFetch", `{"url":"https://example.com","prompt":§}`},
	{"Agent", `{"description":"d","prompt":§,"subagent_type":"general-purpose"}`},
	{"ExitPlanMode", `{"plan":§}`},
	{"TodoWrite", `{"todos":[{"content":§,"status":"in_progress","activeForm":"x"},{"content":"b","status":"completed","activeForm":§},{"content":"c","status":§,"activeForm":"z"}]}`},
	{"TodoWrite", `{"todos":[{"content":§,"status":"pending","priority":"high","id":"1"}]}`},
	{"update_plan", `{"explanation":§,"plan":[{"step":§,"status":"pending"},{"step":"two","status":"completed"}]}`},
	{"TaskCreate", `{"subject":§,"description":§,"activeForm":"x"}`},
	{"TaskUpdate", `{"taskId":§,"status":"in_progress","owner":"alice"}`},
	{"TaskUpdate", `{"taskId":"1","owner":§}`},
	{"AskUserQuestion", `{"questions":[{"question":§,"header":"h","options":[{"label":§,"description":"d"},{"label":"b","description":§}],"multiSelect":false}]}`},
	{"AskUserQuestion", `{"question":§}`},
}

// viewDoc is a document of the tool calls of viewInputs with s in their
// holes.
func viewDoc(s string) *session.Document {
	var blocks []session.Block
	for i, v := range viewInputs {
		in := strings.ReplaceAll(v.input, "§", jsString(s))
		res := &session.Result{Entry: "r", Parts: []session.Part{{Kind: session.KindText, Text: "Exit code 2\n" + s}}}
		if i%3 == 1 {
			res = nil
		}
		blocks = append(blocks, session.Block{Kind: session.KindToolUse, Label: v.tool, ID: "t", Input: in, Result: res})
	}
	blocks = append(blocks,
		session.Block{Kind: session.KindThinking},
		session.Block{Kind: session.KindNote, Label: "turn_duration", Entry: "e", Time: "t", Text: s},
		session.Block{Kind: session.KindThinking, Label: "raw"},
		session.Block{Kind: session.KindText, Text: s},
		session.Block{Kind: session.KindNote, Text: s},
	)
	return &session.Document{
		Meta:    session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude"},
		Summary: "summary",
		Items:   []session.Item{{Round: 1, Time: "t", Role: "assistant", IDs: []string{"a"}, Blocks: blocks}},
	}
}

// TestViewsHostile: a tool input comes back byte for byte whatever its
// values hold, through its view or, where the view cannot carry them, the
// JSON.
func TestViewsHostile(t *testing.T) {
	for _, s := range append(hostileTexts, "a — b", "x _(y)_", "- [ ] z", "\\", "line\n", "diff\n-a\n+b", "+", "a\n\nb\n") {
		checkRoundTrip(t, "views", viewDoc(s))
	}
}

// TestViewsUsed: the views are used for ordinary values (a hostile one may
// send a call back to JSON, an ordinary one must not).
func TestViewsUsed(t *testing.T) {
	for _, v := range viewInputs {
		in := strings.ReplaceAll(v.input, "§", jsString("ordinary text"))
		b := &session.Block{Kind: session.KindToolUse, Label: v.tool, Input: in}
		if _, _, _, ok := viewOf(b); !ok {
			t.Errorf("%s %s: no view", v.tool, in)
		}
	}
	// An input that escapes every character past ASCII (as Python writes
	// JSON) has a view too.
	for _, in := range []string{`{"cmd":"echo \u00b7 \ud83d\ude42"}`, `{"cmd":"echo \u00b7","workdir":"/h\u00e9"}`} {
		b := &session.Block{Kind: session.KindToolUse, Label: "exec_command", ID: "t", Input: in}
		if _, esc, _, ok := viewOf(b); !ok || esc != escapeASCII {
			t.Errorf("%s: no view that escapes as ASCII", in)
		}
		checkRoundTrip(t, "ascii", &session.Document{
			Meta:  session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude"},
			Items: []session.Item{{Time: "t", Role: "assistant", IDs: []string{"a"}, Blocks: []session.Block{*b}}},
		})
	}
	// Inputs no view shows: written as JSON, and still read back.
	for _, in := range []struct{ tool, input string }{
		{"Bash", `{"command":"a\u003cb"}`},              // escaped as no client escapes
		{"Bash", `{"command":"é\u00e9"}`},               // escaped two ways
		{"Bash", `{"command":"cr\r\nlf"}`},              // a fence cannot carry a CR
		{"Bash", `{"command":["ls"]}`},                  // not a string
		{"Bash", `{"description":"no command"}`},        // no value to show
		{"shell", `{"command":["ls","-la"]}`},           // not a script
		{"mcp__x__y", `{"command":"ls"}`},               // an MCP tool
		{"Edit", `{"old_string":"a","new_string":1}`},   // not strings
		{"TodoWrite", `{"todos":[]}`},                   // nothing to list
		{"TodoWrite", `{"todos":[{"content":"a\nb"}]}`}, // a line end in an item
		{"Bash", `{"command":"ls","command":"pwd"}`},    // a key twice: the view shows the first; fine, but check
	} {
		b := &session.Block{Kind: session.KindToolUse, Label: in.tool, ID: "t", Input: in.input}
		_, _, _, ok := viewOf(b)
		if ok && in.input != `{"command":"ls","command":"pwd"}` {
			t.Errorf("%s %s: a view, want JSON", in.tool, in.input)
		}
		checkRoundTrip(t, "json", &session.Document{
			Meta:  session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude"},
			Items: []session.Item{{Time: "t", Role: "assistant", IDs: []string{"a"}, Blocks: []session.Block{*b}}},
		})
	}
}

// TestDiffLines: a diff gives both strings back, however they differ.
func TestDiffLines(t *testing.T) {
	cases := [][2]string{{"", ""}, {"a", ""}, {"", "a"}, {"a\n", "a"}, {"a\nb\nc", "a\nx\nc"}, {"\n\n", "\n"},
		{"1\n2\n3\n4\n5", "0\n1\n3\n5\n6"}, {strings.Repeat("x\n", 600), strings.Repeat("y\n", 600)}}
	for _, c := range cases {
		d := diffLines(c[0], c[1])
		a, b, bad := parseDiff(d)
		if bad >= 0 || a != c[0] || b != c[1] {
			t.Errorf("%q, %q: diff %q reads back as %q, %q (bad line %d)", c[0], c[1], d, a, b, bad)
		}
	}
	if got := diffLines("a\nb\nc", "a\nx\nc"); got != " a\n-b\n+x\n c" {
		t.Errorf("diff = %q", got)
	}
}

// TestViewParseErrors: a view edited out of shape is an error that names
// the line.
func TestViewParseErrors(t *testing.T) {
	d := viewDoc("ordinary")
	md := string(Render(d))
	for _, c := range []struct{ old, new, want string }{
		{"- [ ] ordinary _(in\\_progress)_\n", "* [ ] ordinary\n", "this line is not an item of the list (3 items are expected)"},
		{"-ordinary\n+x\n", "-ordinary\nx\n", "of the diff does not start with"},
		{`"input":{"command":null,`, `"input":{"kommand":null,`, `the tool's input has no value at "command"`},
		{"--><p><i>ordinary</i></p>", "--><p>ordinary</p>", "a note's text must follow its marker on the same line"},
	} {
		if strings.Count(md, c.old) < 1 {
			t.Fatalf("%q is not in the document", c.old)
		}
		_, err := Parse([]byte(strings.Replace(md, c.old, c.new, 1)), "doc.md")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q: got %v, want %q", c.old, c.new, err, c.want)
		}
	}
}

// buildCodexDoc builds the document of a Codex rollout in memory.
func buildCodexDoc(t testing.TB, path string) *session.Document {
	return buildAdapterDoc(t, codex.New(), path)
}

// buildGeminiDoc builds the document of a Gemini CLI session in memory.
func buildGeminiDoc(t testing.TB, path string) *session.Document {
	return buildAdapterDoc(t, gemini.New(), path)
}

// buildAdapterDoc builds the document of a session file of src's format
// in memory.
func buildAdapterDoc(t testing.TB, src source.Adapter, path string) *session.Document {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := src.NewBuilder(source.Config{File: path}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return buildWith(t, b, f, src.Format(), src.AgentName())
}

func TestRoundTripCodexCorpus(t *testing.T) {
	for _, p := range codexTranscripts(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			checkRoundTrip(t, p, buildCodexDoc(t, p))
		})
	}
}

func TestRoundTripGeminiCorpus(t *testing.T) {
	for _, p := range geminiSessions(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			checkRoundTrip(t, p, buildGeminiDoc(t, p))
		})
	}
}

// geminiSessions are the Gemini CLI samples' session files (startup files
// too: they build, though no document is made of them).
func geminiSessions(t testing.TB) []string {
	var out []string
	filepath.WalkDir(filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func codexTranscripts(t testing.TB) []string {
	ps := testenv.Transcripts(t, filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"))
	return append(ps, testenv.Transcripts(t, filepath.Join(testenv.Shared(t), "corpus", "codex-0.169.0", "sessions"))...)
}

// TestCorpusReads: over every session of the corpora, the documents
// read like the conversation: no thinking opens onto nothing, no client
// bookkeeping has a heading of its own, and every call of a tool with a
// view is shown through it (a shell command as bash, an edit as a diff).
func TestCorpusReads(t *testing.T) {
	var docs []*session.Document
	var names []string
	for _, p := range append(testenv.Transcripts(t, testenv.Projects(t)), testenv.PublicTranscripts(t)...) {
		docs, names = append(docs, buildDoc(t, p)), append(names, p)
	}
	for _, p := range codexTranscripts(t) {
		docs, names = append(docs, buildCodexDoc(t, p)), append(names, p)
	}
	for _, p := range geminiSessions(t) {
		docs, names = append(docs, buildGeminiDoc(t, p)), append(names, p)
	}
	views, calls := 0, 0
	for k, d := range docs {
		md := Render(d)
		if bytes.Contains(md, []byte("<summary>Thinking</summary>\n<!-- scribe:thinking -->\n\n```text scribe:verbatim\n\n```")) {
			t.Errorf("%s: a thinking block opens onto nothing", names[k])
		}
		for _, it := range d.Items {
			if it.Role == "system" && it.Note != "" && it.Note != "compaction" && it.Note != "reminder" && it.Note != "context" {
				t.Errorf("%s: %s · %s has a heading of its own", names[k], it.Role, it.Note)
			}
			for i := range it.Blocks {
				b := &it.Blocks[i]
				if b.Kind != session.KindToolUse || !json.Valid([]byte(b.Input)) {
					continue
				}
				in, _ := decodeTree([]byte(b.Input))
				if viewParts(b.Label, in) == nil {
					continue
				}
				calls++
				if _, _, _, ok := viewOf(b); ok {
					views++
				} else {
					t.Errorf("%s: a %s call is written as JSON: %.200s", names[k], b.Label, b.Input)
				}
			}
		}
	}
	t.Logf("%d documents, %d calls of tools with a view, %d shown through it", len(docs), calls, views)
}

// viewOf is toolView of a block, its input decoded as the printer does.
func viewOf(b *session.Block) (json.RawMessage, string, []viewPart, bool) {
	in, _ := decodeTree([]byte(b.Input))
	return toolView(b, in)
}
