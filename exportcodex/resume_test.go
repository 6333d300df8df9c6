package exportcodex_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testenv"
)

// probeTool returns the command that asks the real Codex client what it
// sends the model when it resumes a rollout
// (../shared/realclient/codex_resume_probe.py, with CODEX naming the
// client's launcher). Where the client, python3 or ../shared is missing,
// the test is skipped with a message, unless SCRIBE_REQUIRE_CODEX is set
// (as .ci/run sets it): then it fails.
func probeTool(t *testing.T) (python, script string) {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("SCRIBE_REQUIRE_CODEX") != "" {
			t.Fatalf("%s, and SCRIBE_REQUIRE_CODEX is set", why)
		}
		t.Skipf("%s: install the client with .ci/install-codex and export CODEX=$(.ci/install-codex | tail -1)", why)
	}
	script = filepath.Join(testenv.Shared(t), "realclient", "codex_resume_probe.py")
	if _, err := os.Stat(script); err != nil {
		skip(script + " is missing")
	}
	launcher := os.Getenv("CODEX")
	if launcher == "" {
		skip("CODEX is not set")
	}
	if _, err := os.Stat(launcher); err != nil {
		skip("CODEX=" + launcher + " does not exist")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		skip("python3 is not on PATH")
	}
	return python, script
}

// probe prints the input the client sends when it resumes rollout, with
// others (a fork's source) beside it.
func probe(t *testing.T, python, script, rollout string, others ...string) []byte {
	t.Helper()
	cmd := exec.Command(python, append([]string{script, rollout}, others...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe %s: %v\n%s%s", rollout, err, out, stderr.Bytes())
	}
	return out
}

// TestResumeLikeSource: for every real rollout, the real client resumes
// the export exactly as it resumes the source: it sends the model the same
// input. A fork is probed with its source beside it, the source rollout for
// the source and the exported one for the export.
func TestResumeLikeSource(t *testing.T) {
	python, script := probeTool(t)
	root, files := corpus(t)
	s, err := inscribe.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := adapter.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sessions")
	docs := map[string]string{} // source path -> document
	for _, src := range srcs {
		for _, r := range s.Update(src, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			docs[r.Source] = r.Doc
		}
		if _, ws, err := exportcodex.Session(docs[src.Path], adapter, out, exportcodex.Options{}); err != nil || len(ws) > 0 {
			t.Fatalf("export %s: %v %v", src.Path, err, ws)
		}
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			m, err := document.ReadMeta(docs[p])
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			var srcOthers, expOthers []string
			if m.ForkedFrom != nil {
				origin := codex.FindRollout(root, *m.ForkedFrom)
				if origin == "" {
					t.Fatalf("the fork's source %s is not in the corpus", *m.ForkedFrom)
				}
				srcOthers = []string{origin}
				expOthers = []string{codex.FindRollout(out, *m.ForkedFrom)}
			}
			want := probe(t, python, script, p, srcOthers...)
			got := probe(t, python, script, filepath.Join(out, rel), expOthers...)
			if !bytes.Equal(got, want) {
				t.Errorf("the client resumes the export differently from the source:\nsource: %.2000s\nexport: %.2000s", want, got)
			}
		})
	}
}

// TestResumeCarriesEdit: a prompt edited in the document is what the
// client resumes with.
func TestResumeCarriesEdit(t *testing.T) {
	python, script := probeTool(t)
	data, rel := sample(t, "b3d9")
	md, _, _ := inscribeOne(t, rel, data)
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(doc, []byte("\nthird question\n"), []byte("\nthird question, edited\n"), 1)
	if bytes.Equal(edited, doc) {
		t.Fatal("the document no longer holds the prompt the test edits")
	}
	if err := os.WriteFile(md, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, ws, err := exportcodex.Session(md, adapter, out, exportcodex.Options{})
	if err != nil || len(ws) > 0 {
		t.Fatalf("export: %v %v", err, ws)
	}
	got := probe(t, python, script, files[0].Path)
	if !strings.Contains(string(got), `"third question, edited"`) {
		t.Errorf("the client does not resume with the edited prompt:\n%.3000s", got)
	}
}
