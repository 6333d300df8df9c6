package exportclaude_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestResumeIsIdentical asks the real Claude Code client to resume each
// sample session twice, from the original transcript and from the one
// exported from the store, and requires the messages it sends the model to
// be identical. The client is the judge of whether an export resumes the
// same conversation.
func TestResumeIsIdentical(t *testing.T) {
	bin := realclient.Claude(t)
	s, projects := storetest.Samples(t)
	ts, err := storetest.Claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	var cases []resumeCase
	for _, tr := range ts {
		md, _ := s.FindDoc(tr.ID)
		cases = append(cases, resumeCase{name: tr.ID, source: tr.Path, doc: md})
	}
	judge(t, bin, cases)
}

// TestResumeIsIdenticalPublic does the same for the sessions of the public
// corpus (../shared), written by Claude Code 1.0 to 2.1 on other people's
// machines.
func TestResumeIsIdenticalPublic(t *testing.T) {
	bin := realclient.Claude(t)
	dir := t.TempDir()
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []resumeCase
	for _, p := range testenv.PublicTranscripts(t) {
		// The corpus names each file <where it was found>__<session id>.jsonl;
		// the client resumes <session id>.jsonl.
		base := filepath.Base(p)
		id := strings.TrimSuffix(base[strings.LastIndex(base, "__")+2:], ".jsonl")
		if strings.HasPrefix(id, "agent-") {
			continue // a subagent's transcript: the client resumes sessions, not these
		}
		src := filepath.Join(dir, "projects", "-public", id+".jsonl")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr := storetest.ClaudeAt(src, id, filepath.Dir(src))
		for _, r := range s.Update(tr, inscribe.Options{}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", p, r.Err)
			}
		}
		md, _ := s.FindDoc(id)
		cases = append(cases, resumeCase{name: base, source: src, doc: md})
	}
	judge(t, bin, cases)
}

// resumeCase is a transcript and the document inscribed from it.
type resumeCase struct{ name, source, doc string }

// judge exports each case's document and requires the client to send the
// same messages when it resumes the export as when it resumes the source.
func judge(t *testing.T, bin string, cases []resumeCase) {
	// Probes run a few at a time: each starts the client.
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := t.TempDir()
			if _, _, err := exportclaude.Session(storetest.Doc(t, c.doc), storetest.Claude, out, exportclaude.Options{}); err != nil {
				t.Errorf("%s: export: %v", c.name, err)
				return
			}
			id := strings.TrimSuffix(filepath.Base(c.source), ".jsonl")
			subs := ""
			if d := filepath.Join(strings.TrimSuffix(c.source, ".jsonl"), "subagents"); dirExists(d) {
				subs = d
			}
			want, wantErr := realclient.Probe(context.Background(), bin, c.source, subs)
			exported := filepath.Join(out, id+".jsonl")
			esubs := ""
			if d := filepath.Join(out, id, "subagents"); dirExists(d) {
				esubs = d
			}
			got, err := realclient.Probe(context.Background(), bin, exported, esubs)
			switch {
			case wantErr != nil && err != nil:
				// Some published files are not sessions the client can
				// resume at all; the export must not be one either.
				t.Logf("%s: the client resumes neither the original nor the export: %v", c.name, wantErr)
				return
			case wantErr != nil:
				t.Errorf("%s: the client resumes the export but not the original: %v", c.name, wantErr)
				return
			case err != nil:
				t.Errorf("%s: resume the export: %v", c.name, err)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the client sends other messages when resuming the export", c.name)
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
	bin := realclient.Claude(t)
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
	if _, _, err := exportclaude.Session(storetest.Doc(t, md), storetest.Claude, out, exportclaude.Options{}); err != nil {
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
