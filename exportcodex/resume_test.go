package exportcodex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// probeTool returns the real Codex client's probe (realclient.FindCodex).
// Where the client is missing, the test is skipped with a message, unless
// SCRIBE_REQUIRE_CODEX is set (as .ci/run sets it): then it fails.
func probeTool(t *testing.T) *realclient.CodexProbe {
	t.Helper()
	return realclient.Codex(t)
}

// probe prints the input the client sends when it resumes rollout, with
// others (a fork's source) beside it.
func probe(t *testing.T, p *realclient.CodexProbe, rollout string, others ...string) []byte {
	t.Helper()
	out, err := p.Probe(rollout, others...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResumeLikeSource: for every real rollout, the real client resumes
// the export exactly as it resumes the source: it sends the model the same
// input. A fork is probed with its source beside it, the source rollout for
// the source and the exported one for the export.
func TestResumeLikeSource(t *testing.T) {
	cp := probeTool(t)
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
		if _, ws, err := exportcodex.Session(storetest.Doc(t, docs[src.Path]), adapter, out, exportcodex.Options{}); err != nil || len(ws) > 0 {
			t.Fatalf("export %s: %v %v", src.Path, err, ws)
		}
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			m, err := storetest.Doc(t, docs[p]).Meta()
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
			want := probe(t, cp, p, srcOthers...)
			got := probe(t, cp, filepath.Join(out, rel), expOthers...)
			if !bytes.Equal(got, want) {
				t.Errorf("the client resumes the export differently from the source:\nsource: %.2000s\nexport: %.2000s", want, got)
			}
		})
	}
}

// TestResumeCarriesEdit: a prompt edited in the document is what the
// client resumes with.
func TestResumeCarriesEdit(t *testing.T) {
	cp := probeTool(t)
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
	files, ws, err := exportcodex.Session(storetest.Doc(t, md), adapter, out, exportcodex.Options{})
	if err != nil || len(ws) > 0 {
		t.Fatalf("export: %v %v", err, ws)
	}
	got := probe(t, cp, files[0].Path)
	if !strings.Contains(string(got), `"third question, edited"`) {
		t.Errorf("the client does not resume with the edited prompt:\n%.3000s", got)
	}
}

// TestSameAgentPublic: every rollout of other people's machines
// (../shared/corpus/codex-public, Codex 0.121.0 to 0.145.0, with server
// compactions, subagent threads and messages between agents) exports from
// the store to its bytes, and the real client resumes the export exactly
// as it resumes the source.
func TestSameAgentPublic(t *testing.T) {
	cp := probeTool(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, s := range crosstest.InscribeAll(t, adapter, testenv.CodexPublic(t)...) {
		name := filepath.Base(s.Source)
		src, err := os.ReadFile(s.Source)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if ws, err := exportcodex.Transcript(storetest.Doc(t, s.Doc), adapter, &buf); err != nil || len(ws) > 0 {
			t.Fatalf("%s: export: %v %v", name, err, ws)
		}
		if !bytes.Equal(buf.Bytes(), src) {
			t.Errorf("%s: the export is not the source byte for byte (%d bytes, not %d)", name, buf.Len(), len(src))
			continue
		}
		exported := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(exported, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			want, err := cp.Probe(s.Source)
			if err != nil {
				t.Errorf("%s: %.1000v", name, err)
				return
			}
			got, err := cp.Probe(exported)
			if err != nil {
				t.Errorf("%s: resume the export: %.1000v", name, err)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the client resumes the export differently from the source", name)
			}
		})
	}
	wg.Wait()
}
