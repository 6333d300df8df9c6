package exportgemini_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/exportgemini"
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

var adapter = gemini.New()

// corpus returns the tmp folder of the real Gemini sessions in ../shared
// (skipping where it is absent; see testenv.Shared) and its sessions.
func corpus(t *testing.T) (string, []source.Session) {
	t.Helper()
	root := filepath.Join(testenv.Shared(t), "corpus", "gemini-0.61.0", "tmp")
	ss, err := adapter.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 {
		t.Fatalf("no sessions in %s", root)
	}
	return root, ss
}

// samples is the repository's copy of the corpus (testdata/gemini/tmp).
func samples(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp")
}

// format is the Gemini format as package check takes it.
var format = check.Format{
	Source: adapter,
	Export: func(d *inscribe.Doc, dir string) error {
		_, _, err := exportgemini.Session(d, adapter, dir, exportgemini.Options{})
		return err
	},
	Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) { return exportgemini.Transcript(d, adapter, w) },
}

// TestCorpus: every real session inscribes without error (a torn last line
// aside), exports byte for byte, its subagents' files with it, into the
// chats folder the client keeps it in, and passes check.
func TestCorpus(t *testing.T) {
	root, ss := corpus(t)
	for _, src := range ss {
		t.Run(filepath.Base(src.Path), func(t *testing.T) {
			t.Parallel()
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
			tmp := t.TempDir()
			m := readMeta(t, md)
			dir, err := exportgemini.Dir(tmp, m)
			if err != nil {
				t.Fatal(err)
			}
			files, warnings, err := exportgemini.Session(storetest.Doc(t, md), adapter, dir, exportgemini.Options{})
			if err != nil || len(warnings) > 0 {
				t.Fatalf("export: %v %v", err, warnings)
			}
			want := map[string]string{filepath.Join(tmp, mustRel(t, root, src.Path)): src.Path,
				filepath.Join(filepath.Dir(dir), ".project_root"): filepath.Join(filepath.Dir(src.Dir), ".project_root")}
			for _, sc := range src.Sidechains {
				want[filepath.Join(tmp, mustRel(t, root, sc.Path))] = sc.Path
			}
			if len(files) != len(want) {
				t.Errorf("export wrote %v, want %v", files, want)
			}
			for _, f := range files {
				from, ok := want[f.Path]
				if !ok {
					t.Errorf("export wrote %s", f.Path)
					continue
				}
				w, _ := os.ReadFile(from)
				got, _ := os.ReadFile(f.Path)
				if strings.HasSuffix(from, ".jsonl") {
					w = storetest.WithoutTorn(w)
				}
				if !bytes.Equal(got, w) {
					t.Errorf("%s differs from %s", f.Path, from)
				}
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

func mustRel(t *testing.T, root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func readMeta(t *testing.T, md string) *session.Meta {
	t.Helper()
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var m session.Meta
	head, _, _ := bytes.Cut(bytes.TrimPrefix(data, []byte("---\n")), []byte("\n---\n"))
	for _, l := range strings.Split(string(head), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		v = strings.Trim(v, `"`)
		switch k {
		case "session_id":
			m.SessionID = v
		case "project":
			m.Project = &v
		case "source":
			m.Source = v
		case "started":
			m.Started = &v
		}
	}
	return &m
}

// TestPrefixThenAppend: a session inscribed in two pieces, cut at every
// line boundary (and in the middle of some lines, as a writer caught
// mid-line leaves it), gives the store the whole session gives: the
// client's rewrites of its history (a message written again, a $set of
// the history, a $rewindTo) read in a later run make what they make in
// one.
func TestPrefixThenAppend(t *testing.T) {
	root := samples(t)
	ss, err := adapter.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range ss {
		if src.Path == "" {
			continue
		}
		t.Run(filepath.Base(src.Path), func(t *testing.T) {
			t.Parallel()
			whole, err := os.ReadFile(src.Path)
			if err != nil {
				t.Fatal(err)
			}
			// The subagents' files come along whole.
			extra := map[string][]byte{}
			for _, sc := range src.Sidechains {
				extra[mustRel(t, root, sc.Path)], _ = os.ReadFile(sc.Path)
			}
			storetest.PrefixThenAppend(t, adapter, mustRel(t, root, src.Path), whole, extra)
		})
	}
}

// inscribeOne inscribes a session file written at rel under a fresh tmp
// folder and returns its document and warnings.
func inscribeOne(t *testing.T, rel string, data []byte) (string, []error) {
	t.Helper()
	l := storetest.NewLive(t, adapter)
	l.Put(rel, data)
	var md string
	var warnings []error
	for _, r := range l.Update(true) {
		md = r.Doc
		warnings = append(warnings, r.Warnings...)
	}
	return md, warnings
}

// sample is a session file of the repository's samples and its path
// below the tmp folder.
func sample(t *testing.T, project, id8 string) ([]byte, string) {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(samples(t), project, "chats", "session-*-"+id8+".jsonl"))
	sort.Slice(ms, func(i, j int) bool { return len(ms[i]) < len(ms[j]) })
	for _, m := range ms {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(data, []byte("\n")) > 2 {
			return data, mustRel(t, samples(t), m)
		}
	}
	t.Fatalf("no sample session %s", id8)
	return nil, ""
}

// TestBadInput: a line that is not JSON, a record of no kind the client
// reads, a $rewindTo to a message the history does not hold and a torn
// last line are each a warning naming the file and line; the rest is
// inscribed, and the export gives every complete line back.
func TestBadInput(t *testing.T) {
	data, rel := sample(t, "rewind", "9e555555")
	lines := strings.SplitAfter(string(data), "\n")
	bad := append([]string{}, lines[:4]...)
	bad = append(bad,
		"{not json\n",
		`{"hologram":{"x":1}}`+"\n",
		`{"$rewindTo":"no-such-message"}`+"\n",
		"\n",
	)
	bad = append(bad, lines[4:len(lines)-1]...)
	bad = append(bad, `{"id":"torn","timestamp":"2026-11-27T04:4`)
	src := strings.Join(bad, "")
	md, warnings := inscribeOne(t, rel, []byte(src))
	want := map[int]string{5: "not a JSON object", 6: "a record of no kind the client reads", 7: "$rewindTo names message no-such-message",
		len(bad): "torn last line"}
	got := map[int]string{}
	for _, w := range warnings {
		var le *source.LineError
		if !errors.As(w, &le) {
			t.Errorf("warning without a line: %v", w)
			continue
		}
		if !strings.HasSuffix(le.File, rel) {
			t.Errorf("warning names %s, not the session file", le.File)
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
	for _, s := range []string{"record (shown as recorded)", "hologram", "Branch reply three (new)."} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("the document does not show %q", s)
		}
	}
	var buf bytes.Buffer
	if ws, err := exportgemini.Transcript(storetest.Doc(t, md), adapter, &buf); err != nil || len(ws) > 0 {
		t.Fatalf("export: %v %v", err, ws)
	}
	if !bytes.Equal(buf.Bytes(), storetest.WithoutTorn([]byte(src))) {
		t.Errorf("the export does not give the complete lines back")
	}
}

// TestEditCarried: a person's edits of a prompt, a reply, a thought, a
// shell call's command and a tool's output go back into the values they
// came from; nothing else changes.
func TestEditCarried(t *testing.T) {
	data, rel := sample(t, "tools-thinking", "9e111111")
	md, _ := inscribeOne(t, rel, data)
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct{ from, to, inFile string }{
		{"\ncreate hello.py please\n", "\ncreate hello.py please, \"quoted\"\ttab\n", `"text":"create hello.py please, \"quoted\"\ttab"`},
		{"\nLet me check the directory.\n", "\nLet me check the folder ✓.\n", `"content":"Let me check the folder ✓."`},
		{"\nThe user wants a script. Let me list the directory first.\n", "\nThe user wants a file.\n", `"description":"The user wants a file."`},
		{"scribe:field command\npython3 hello.py\n", "scribe:field command\npython3 -u hello.py\n", `"command":"python3 -u hello.py"`},
		{"Output: hello, world\n", "Output: [redacted]\n", `Output: [redacted]\n`},
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
	warnings, err := exportgemini.Transcript(storetest.Doc(t, md), adapter, &buf)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("export: %v %v", err, warnings)
	}
	got := strings.Split(buf.String(), "\n")
	orig := strings.Split(string(data), "\n")
	if len(got) != len(orig) {
		t.Fatalf("the export has %d lines, the session %d", len(got), len(orig))
	}
	var changed []int
	for i := range got {
		if got[i] != orig[i] {
			changed = append(changed, i+1)
		}
	}
	for _, e := range edits {
		if !strings.Contains(buf.String(), e.inFile) {
			t.Errorf("the export does not carry the edit to %q", e.inFile)
		}
	}
	// The prompt (line 3); the reply and its thought, in the version the
	// document shows (line 7); the command and its output (line 27).
	if want := []int{3, 7, 27}; !slicesEqual(changed, want) {
		t.Errorf("lines %v changed, want %v", changed, want)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPlacement: where an export puts a session: the project's folder as
// projects.json or a .project_root names it, else the folder it came
// from, else the client's name for it; the file's name is the one it came
// with, else the client's.
func TestPlacement(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), ".gemini", "tmp")
	os.MkdirAll(filepath.Join(tmp, "mine"), 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(tmp), "projects.json"), []byte(`{"projects":{"/src/registered":"reg"}}`), 0o644)
	os.MkdirAll(filepath.Join(tmp, "other"), 0o755)
	os.WriteFile(filepath.Join(tmp, "other", ".project_root"), []byte("/src/marked"), 0o644)
	os.MkdirAll(filepath.Join(tmp, "taken"), 0o755)
	os.WriteFile(filepath.Join(tmp, "taken", ".project_root"), []byte("/somewhere/else"), 0o644)
	for _, c := range []struct {
		project, recorded, want string
		created                 bool
	}{
		{"/src/registered", "x", "reg", true},
		{"/src/marked", "x", "other", false},
		{"/src/Fresh Project", "mine", "mine", true},
		{"/src/Fresh Project", "taken", "fresh-project", true},
		{"/src/taken", "", "taken-1", true},
	} {
		got, created := exportgemini.ProjectFolder(tmp, c.project, c.recorded)
		if got != c.want || created != c.created {
			t.Errorf("ProjectFolder(%s, %s) = %s, %v; want %s, %v", c.project, c.recorded, got, created, c.want, c.created)
		}
	}
	started := "2026-11-27T04:42:29.020Z"
	for _, c := range []struct{ source, want string }{
		{"testdata/gemini/tmp/x/chats/session-2026-11-27T04-42-9e111111.jsonl", "session-2026-11-27T04-42-9e111111.jsonl"},
		{"/copies/renamed.jsonl", "session-2026-11-27T04-42-9e111111.jsonl"},
	} {
		m := &session.Meta{SessionID: "9e111111-1111-4111-8111-111111111111", Source: c.source, Started: &started}
		if got := exportgemini.Name(m); got != c.want {
			t.Errorf("Name(%s) = %s, want %s", c.source, got, c.want)
		}
	}
}
