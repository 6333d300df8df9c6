package inscribe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
)

// TestUpgradeFormat1 brings a scribe/1 store forward. testdata/scribe1 is
// two documents of the store the last scribe/1 version wrote (the
// repository's data/ at that commit), one with a sidechain. A person edited
// one of them (its summary and a message); an append over unchanged sources
// upgrades both to the current format, keeps the edits, and gives exactly
// what a fresh inscription gives, edits aside.
func TestUpgradeFormat1(t *testing.T) {
	repo := testenv.RepoRoot(t)
	dir := t.TempDir()
	testenv.CopyTree(t, filepath.Join(repo, "testdata", "scribe1", "data"), filepath.Join(dir, "data"))
	projects := filepath.Join(dir, "testdata", "claude", "projects")
	testenv.CopyTree(t, testenv.Projects(t), projects)

	const id = "11111111-1111-4111-8111-111111111111"
	edited := filepath.Join(dir, "data", "sessions", "claude", id+".md")
	old, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := document.ParseMeta(old, edited); err != nil {
		t.Fatalf("a scribe/1 document no longer parses: %v", err)
	}
	edit := func(doc []byte) []byte {
		doc = bytes.Replace(doc, []byte("_Summary pending. First prompt:_ create hello.py please"), []byte("A person's summary."), 1)
		return bytes.Replace(doc, []byte("\ncreate hello.py please\n"), []byte("\ncreate hello.py please (edited)\n"), 1)
	}
	if bytes.Equal(edit(old), old) {
		t.Fatal("the fixture no longer holds the text the test edits")
	}
	if err := os.WriteFile(edited, edit(old), 0o644); err != nil {
		t.Fatal(err)
	}

	s, err := OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	upgraded := map[string]bool{}
	for _, r := range inscribeAll(t, s, projects, Options{}) {
		if r.Outcome == Upgraded {
			upgraded[filepath.Base(r.Doc)] = true
		}
	}
	for _, want := range []string{id + ".md", "33333333-3333-4333-8333-333333333333.md", "agent-a851eb1970e603fa2.md"} {
		if !upgraded[want] {
			t.Errorf("%s was not upgraded (upgraded: %v)", want, upgraded)
		}
	}

	// Every document of the fixture now has the head the repository's
	// data/ (the current format) has, the person's edits kept, and its
	// body as it was: messages written before are not rewritten, so they
	// keep the rendering of their time (the JSON form of a tool call's
	// input, say). Read, they are the same messages as data/'s.
	fixture := storeFiles(t, filepath.Join(repo, "testdata", "scribe1", "data"))
	for rel := range fixture {
		if !strings.HasSuffix(rel, ".md") || filepath.Base(rel) == "index.md" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, "data", rel))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(repo, "data", rel))
		if err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadFile(fixture[rel])
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rel, id) {
			want, before = edit(want), edit(before)
		}
		gotBody, wantBody, beforeBody := firstItem(got), firstItem(want), firstItem(before)
		if !bytes.Equal(got[:len(got)-len(gotBody)], want[:len(want)-len(wantBody)]) {
			t.Errorf("%s after the upgrade has another head than the current format's document:\n%s", rel, firstDiff(string(want), string(got)))
		}
		if !bytes.Equal(gotBody, beforeBody) {
			t.Errorf("%s: the upgrade changed the messages:\n%s", rel, firstDiff(string(beforeBody), string(gotBody)))
		}
		gd, err := document.Parse(got, rel)
		if err != nil {
			t.Fatal(err)
		}
		wd, err := document.Parse(want, rel)
		if err != nil {
			t.Fatal(err)
		}
		if !document.Equal(gd, wd) {
			t.Errorf("%s after the upgrade does not read as the current format's document", rel)
		}
		m := &gd.Meta
		if m.Format != session.FormatVersion || m.SourceFormat != claudeSrc.Format() || m.AgentName != "Claude" {
			t.Errorf("%s: format %q, source_format %q, agent_name %q", rel, m.Format, m.SourceFormat, m.AgentName)
		}
	}

	// A second run has nothing left to do.
	for _, r := range inscribeAll(t, s, projects, Options{}) {
		if r.Outcome != Unchanged {
			t.Errorf("second run: %s %s", r.Outcome, r.Doc)
		}
	}
}

// firstItem returns a document from its first message on.
func firstItem(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("\n\n---\n\n### ")); i >= 0 {
		return doc[i:]
	}
	return nil
}

// firstDiff shows the first line where two texts differ, with a little
// context.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return "(same lines; the bytes differ)"
}
