package exportcodex_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// TestMain writes every text of a conversion through a mark, as a text
// of a megabyte or more is written (exportcore.LongTexts): the goldens
// and the real clients judge the conversion written so.
func TestMain(m *testing.M) {
	exportcore.SetLongTextForTest(0)
	os.Exit(m.Run())
}

var adapter = codex.New()

// corpus returns the real Codex rollouts in ../shared (skipping where it is
// absent; see testenv.Shared), as the sessions root and the files.
func corpus(t *testing.T) (string, []string) {
	t.Helper()
	root := filepath.Join(testenv.Shared(t), "corpus", "codex-0.169.0", "sessions")
	files := testenv.Transcripts(t, root)
	if len(files) == 0 {
		t.Fatalf("no rollouts in %s", root)
	}
	return root, files
}

// format is the Codex format as package check takes it.
var format = check.Format{
	Source: adapter,
	Export: func(d *inscribe.Doc, dir string) error {
		_, _, err := exportcodex.Session(d, adapter, dir, exportcodex.Options{})
		return err
	},
	Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
		return exportcodex.Transcript(d, adapter, w)
	},
}

// TestCorpus: every real rollout inscribes without error, exports byte for
// byte at the path Codex keeps it, and passes check.
func TestCorpus(t *testing.T) {
	root, files := corpus(t)
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			src, err := adapter.Session(p)
			if err != nil {
				t.Fatal(err)
			}
			s, err := inscribe.OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var md string
			for _, r := range s.Update(src, inscribe.Options{Verify: true}) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				for _, w := range r.Warnings {
					var le *source.LineError
					if !errors.As(w, &le) || !le.Torn {
						t.Errorf("warning: %v", w)
					}
				}
				md = r.Doc
			}
			out := t.TempDir()
			files, warnings, err := exportcodex.Session(storetest.Doc(t, md), adapter, out, exportcodex.Options{})
			if err != nil || len(warnings) > 0 {
				t.Fatalf("export: %v %v", err, warnings)
			}
			rel, _ := filepath.Rel(root, p)
			if len(files) != 1 || files[0].Path != filepath.Join(out, rel) {
				t.Fatalf("export wrote %v, want %s", files, filepath.Join(out, rel))
			}
			want, _ := os.ReadFile(p)
			got, _ := os.ReadFile(files[0].Path)
			if !bytes.Equal(got, storetest.WithoutTorn(want)) {
				t.Errorf("the export differs from the rollout")
			}
			reports, err := check.Session(src, format)
			if err != nil {
				t.Fatal(err)
			}
			for _, rep := range reports {
				if !rep.OK() {
					t.Errorf("check: %+v", rep.Findings)
				}
			}
		})
	}
}

// TestPrefixThenAppend: a rollout inscribed in two pieces, cut at every
// line boundary (and in the middle of some lines, as a writer caught
// mid-line leaves it), gives the store the whole rollout gives.
func TestPrefixThenAppend(t *testing.T) {
	root, files := corpus(t)
	for _, p := range files {
		rel, _ := filepath.Rel(root, p)
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			whole, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			storetest.PrefixThenAppend(t, adapter, rel, whole, nil)
		})
	}
}

// sample returns a bundled sample rollout (the corpus, copied into the
// repository) and its path below the sessions root.
func sample(t *testing.T, id string) ([]byte, string) {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions", "*", "*", "*", "rollout-*"+id+"*.jsonl"))
	if len(ms) != 1 {
		t.Fatalf("no sample rollout %s", id)
	}
	data, err := os.ReadFile(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"), ms[0])
	return data, rel
}

// inscribeOne inscribes a rollout written at rel under a fresh sessions
// root and returns its document and warnings.
func inscribeOne(t *testing.T, rel string, data []byte) (string, []error, *storetest.Live) {
	t.Helper()
	l := storetest.NewLive(t, adapter)
	l.Put(rel, data)
	var md string
	var warnings []error
	for _, r := range l.Update(true) {
		md = r.Doc
		warnings = append(warnings, r.Warnings...)
	}
	return md, warnings, l
}

// TestBadInput: lines that are not JSON, records and items of types scribe
// does not know, a fork whose source is not beside it and a torn last line
// are each a warning naming the file and line; the rest is inscribed, and
// the export gives every complete line back.
func TestBadInput(t *testing.T) {
	data, rel := sample(t, "c0af") // the fork: its source is not beside it
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	lines[len(lines)-1] += "\n"
	bad := []string{
		lines[0],
		"{not json\n",
		`{"timestamp":"2026-11-23T16:52:28.000Z","type":"hologram","payload":{"x":1}}` + "\n",
		`{"timestamp":"2026-11-23T16:52:28.001Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}}` + "\n",
		"\n",
	}
	bad = append(bad, lines[1:]...)
	bad = append(bad, `{"timestamp":"2026-11-23T16:52:29.000Z","type":"event_msg","pay`)
	src := strings.Join(bad, "")
	md, warnings, _ := inscribeOne(t, rel, []byte(src))
	want := map[int]string{1: "forked from thread", 2: "not a JSON object", 3: `type "hologram"`, 4: `type "web_search_call"`, len(bad): "torn last line"}
	got := map[int]string{}
	for _, w := range warnings {
		var le *source.LineError
		if !errors.As(w, &le) {
			t.Errorf("warning without a line: %v", w)
			continue
		}
		if !strings.HasSuffix(le.File, rel) {
			t.Errorf("warning names %s, not the rollout", le.File)
		}
		got[le.Line] = le.Msg
	}
	for line, frag := range want {
		if !strings.Contains(got[line], frag) {
			t.Errorf("line %d: warning %q, want one saying %q", line, got[line], frag)
		}
	}
	if len(got) != len(want) {
		t.Errorf("warnings %v, want lines %v", got, want)
	}
	doc, _ := os.ReadFile(md)
	for _, s := range []string{"hologram (shown as recorded)", "web_search_call (shown as recorded)", "forked three", "Fork reply 4."} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("the document does not show %q", s)
		}
	}
	if !bytes.Contains(doc, []byte("forked_from: 01a20952-bc69-7a02-82ff-4c4b50993747")) {
		t.Errorf("the document does not record the fork's origin")
	}
	var buf bytes.Buffer
	if ws, err := exportcodex.Transcript(storetest.Doc(t, md), adapter, &buf); err != nil || len(ws) > 0 {
		t.Fatalf("export: %v %v", err, ws)
	}
	if !bytes.Equal(buf.Bytes(), storetest.WithoutTorn([]byte(src))) {
		t.Errorf("the export does not give the complete lines back")
	}
}

// TestEditCarried: a person's edits of a prompt, a reply, a reasoning
// summary, a shell call's arguments, an apply_patch input and a tool's
// output go back into the values they came from; nothing else changes.
func TestEditCarried(t *testing.T) {
	data, rel := sample(t, "aced")
	md, _, _ := inscribeOne(t, rel, data)
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct{ from, to, inRollout string }{
		{"\ncreate hello.py please\n", "\ncreate hello.py please, \"quoted\"\ttab\n", `"text":"create hello.py please, \"quoted\"\ttab"`},
		{"\nLet me check the directory.\n", "\nLet me check the folder ✓.\n", `"text":"Let me check the folder ✓."`},
		{"The user wants a script. Let me list", "The user wants a file. Let me list", `The user wants a file. Let me list`},
		{"scribe:field cmd\nls -la\n", "scribe:field cmd\nls -l\n", `"arguments":"{\"cmd\":\"ls -l\"}"`},
		{"*** Add File: hello.py\n+print('hello')\n", "*** Add File: hello.py\n+print('hi')\n", `"input":"*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** End Patch\n"`},
		{"drwxr-xr-x 2 root root 4096 Nov 23 16:52 .\n", "drwxr-xr-x 2 root root 4096 Nov 23 16:52 [redacted]\n", `16:52 [redacted]\n`},
	}
	for _, e := range edits {
		if !bytes.Contains(doc, []byte(e.from)) {
			t.Fatalf("the document no longer holds %q", e.from)
		}
		doc = bytes.Replace(doc, []byte(e.from), []byte(e.to), 1)
	}
	if err := os.WriteFile(md, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	warnings, err := exportcodex.Transcript(storetest.Doc(t, md), adapter, &buf)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("export: %v %v", err, warnings)
	}
	got := strings.Split(buf.String(), "\n")
	orig := strings.Split(string(data), "\n")
	if len(got) != len(orig) {
		t.Fatalf("the export has %d lines, the rollout %d", len(got), len(orig))
	}
	changed := 0
	for i := range got {
		if got[i] != orig[i] {
			changed++
		}
	}
	for _, e := range edits {
		if !strings.Contains(buf.String(), e.inRollout) {
			t.Errorf("the export does not carry the edit to %q", e.inRollout)
		}
	}
	// The prompt, the reply, the reasoning, the call, the patch and the
	// output: six lines.
	if changed != len(edits) {
		t.Errorf("%d lines changed, want %d", changed, len(edits))
	}
}

// TestRel: where an export puts a rollout.
func TestRel(t *testing.T) {
	for _, c := range []struct{ source, started, want string }{
		{"testdata/codex/sessions/2026/11/23/rollout-2026-11-23T16-52-22-x.jsonl", "", "2026/11/23/rollout-2026-11-23T16-52-22-x.jsonl"},
		{"/tmp/a/rollout-x.jsonl", "2026-11-23T16:52:22.963Z", "2026/11/23/rollout-2026-11-23T16-52-22-id.jsonl"},
	} {
		m := &session.Meta{Source: c.source, SessionID: "id"}
		if c.started != "" {
			m.Started = &c.started
		}
		if got := exportcodex.Rel(m); got != filepath.FromSlash(c.want) {
			t.Errorf("Rel(%s) = %s, want %s", c.source, got, c.want)
		}
	}
}
