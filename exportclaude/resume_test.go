package exportclaude_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/internal/realclient"
	"github.com/scribe-archive/scribe/internal/storetest"
)

// TestResumeIsIdentical asks the real Claude Code client to resume each
// sample session twice, from the original transcript and from the one
// exported from the store, and requires the messages it sends the model to
// be identical. The client is the judge of whether an export resumes the
// same conversation.
func TestResumeIsIdentical(t *testing.T) {
	bin, err := realclient.Find()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_CLAUDE") != "" {
			t.Fatalf("the real client is required here: %v", err)
		}
		t.Skipf("%v", err)
	}
	s, projects := storetest.Samples(t)
	ts, err := claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	// Probes run a few at a time: each starts the client.
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, tr := range ts {
		tr := tr
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			md, _ := s.FindDoc(tr.ID)
			out := t.TempDir()
			if _, _, err := exportclaude.Session(md, out, exportclaude.Options{}); err != nil {
				t.Errorf("%s: export: %v", tr.ID, err)
				return
			}
			subs := ""
			if d := filepath.Join(strings.TrimSuffix(tr.Path, ".jsonl"), "subagents"); dirExists(d) {
				subs = d
			}
			want, err := realclient.Probe(context.Background(), bin, tr.Path, subs)
			if err != nil {
				t.Errorf("%s: resume the original: %v", tr.ID, err)
				return
			}
			exported := filepath.Join(out, tr.ID+".jsonl")
			esubs := ""
			if d := filepath.Join(out, tr.ID, "subagents"); dirExists(d) {
				esubs = d
			}
			got, err := realclient.Probe(context.Background(), bin, exported, esubs)
			if err != nil {
				t.Errorf("%s: resume the export: %v", tr.ID, err)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the client sends other messages when resuming the export", tr.ID)
			}
		}()
	}
	wg.Wait()
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestResumeSeesEdits is the control: an edit in the document reaches the
// client, so the comparison above can fail.
func TestResumeSeesEdits(t *testing.T) {
	bin, err := realclient.Find()
	if err != nil {
		if os.Getenv("SCRIBE_REQUIRE_CLAUDE") != "" {
			t.Fatalf("the real client is required here: %v", err)
		}
		t.Skipf("%v", err)
	}
	s, projects := storetest.Samples(t)
	id := "22222222-2222-4222-8222-222222222222"
	md, _ := s.FindDoc(id)
	doc, _ := os.ReadFile(md)
	edited := strings.Replace(string(doc), "\nsecond question\n", "\nsecond question, edited\n", 1)
	if edited == string(doc) {
		t.Fatal("nothing to edit")
	}
	os.WriteFile(md, []byte(edited), 0o644)
	out := t.TempDir()
	if _, _, err := exportclaude.Session(md, out, exportclaude.Options{}); err != nil {
		t.Fatal(err)
	}
	want, err := realclient.Probe(context.Background(), bin, filepath.Join(projects, "-home-dev-src-multiturn", id+".jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := realclient.Probe(context.Background(), bin, filepath.Join(out, id+".jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		t.Fatal("the client resumed the edited export as the original")
	}
	if !bytes.Contains(got, []byte("second question, edited")) {
		t.Error("the edit is not in what the client sends")
	}
}
