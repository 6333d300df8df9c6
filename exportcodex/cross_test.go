package exportcodex_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// claudeDocs inscribes the bundled Claude Code sessions
// (testdata/claude/projects, the corpus written by Claude Code 2.1.328)
// and returns their documents by session id.
func claudeDocs(t *testing.T) map[string]string {
	return crosstest.Inscribe(t, claude.New(), filepath.Join(testenv.RepoRoot(t), "testdata", "claude", "projects"))
}

func sortedIDs(docs map[string]string) []string {
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func convert(t *testing.T, md, dir string) string {
	t.Helper()
	files, _, err := exportcodex.ConvertSession(storetest.Doc(t, md), dir, exportcodex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Path
}

// TestCrossResumeInCodex is the judge of export-codex for Claude Code
// sessions: the real Codex client resumes the conversion of every bundled
// Claude Code session, and the model receives, in order, every prompt,
// every reply and every tool call with its full result of the live
// branch, as structured items.
func TestCrossResumeInCodex(t *testing.T) {
	cp := probeTool(t)
	docs := claudeDocs(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, id := range sortedIDs(docs) {
		md := docs[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := convert(t, md, t.TempDir())
			out, err := cp.Probe(p)
			if err != nil {
				t.Errorf("%s: the client does not resume the conversion: %v", id, err)
				return
			}
			got, err := codexUnits(out)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				return
			}
			want := crosstest.Expect(t, storetest.Doc(t, md), []string{"aborted"})
			if len(want) == 0 {
				t.Errorf("%s: nothing to expect", id)
			}
			if err := crosstest.Match(want, got); err != nil {
				t.Errorf("%s: %v\nwant:\n%sgot:\n%s", id, err, crosstest.Dump(want), crosstest.Dump(got))
				return
			}
			if err := crosstest.None(crosstest.Abandoned(t, storetest.Doc(t, md)), got); err != nil {
				t.Errorf("%s: %v", id, err)
			}
			t.Logf("%s: the model receives all %d units of the conversation, in order", id, len(want))
		}()
	}
	wg.Wait()
}

// TestCrossResumeInCodexPublic does the same for the sessions of the public
// corpus (../shared), written by Claude Code 1.0 to 2.1 on other people's
// machines.
func TestCrossResumeInCodexPublic(t *testing.T) {
	cp := probeTool(t)
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range testenv.PublicTranscripts(t) {
		base := filepath.Base(p)
		id := base[strings.LastIndex(base, "__")+2:]
		if strings.HasPrefix(id, "agent-") {
			continue // a subagent's transcript: not a session of its own
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docs := crosstest.Inscribe(t, claude.New(), dir)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, id := range sortedIDs(docs) {
		md := docs[id]
		want := crosstest.Expect(t, storetest.Doc(t, md), []string{"aborted"})
		if len(want) == 0 {
			continue // nothing the model would receive (a file of summaries)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := convert(t, md, t.TempDir())
			out, err := cp.Probe(p)
			if err != nil {
				t.Errorf("%s: the client does not resume the conversion: %.2000v", id, err)
				return
			}
			got, err := codexUnits(out)
			if err == nil {
				err = crosstest.Match(want, got)
			}
			if err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}()
	}
	wg.Wait()
}

// codexUnits reads the input items Codex sent as units.
func codexUnits(out []byte) ([]crosstest.Unit, error) {
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, err
	}
	var us []crosstest.Unit
	for _, it := range items {
		switch it.Type {
		case "message":
			var parts []struct{ Type, Text string }
			json.Unmarshal(it.Content, &parts)
			for _, p := range parts {
				if p.Type == "input_text" || p.Type == "output_text" {
					us = append(us, crosstest.Unit{Kind: it.Role, Text: p.Text})
				}
			}
		case "function_call":
			us = append(us, crosstest.Unit{Kind: "call", Name: it.Name, Input: json.RawMessage(it.Arguments)})
		case "function_call_output":
			u := crosstest.Unit{Kind: "result"}
			var s string
			if json.Unmarshal(it.Output, &s) == nil {
				u.Parts = []string{s}
			} else {
				var ps []struct{ Type, Text string }
				json.Unmarshal(it.Output, &ps)
				for _, p := range ps {
					if p.Type == "input_image" {
						u.Parts = append(u.Parts, "[image]")
					} else {
						u.Parts = append(u.Parts, p.Text)
					}
				}
			}
			us = append(us, u)
		}
	}
	return us, nil
}

// TestConvertIsDeterministic: two conversions of a document are the same
// bytes.
func TestConvertIsDeterministic(t *testing.T) {
	docs := claudeDocs(t)
	for _, id := range sortedIDs(docs) {
		pa, pb := convert(t, docs[id], t.TempDir()), convert(t, docs[id], t.TempDir())
		da, _ := os.ReadFile(pa)
		db, _ := os.ReadFile(pb)
		if len(da) == 0 || !bytes.Equal(da, db) {
			t.Errorf("%s: two conversions differ (or are empty)", id)
		}
	}
}

// toCodex is the Codex client as a cross-agent check takes it.
var toCodex = check.CrossFormat{Name: "codex", Target: codex.New(), Convert: func(d *inscribe.Doc, dir string) (*exportcodex.Losses, error) {
	_, losses, err := exportcodex.ConvertSession(d, dir, exportcodex.Options{})
	return losses, err
}}

// TestCrossRoundTrip: every bundled Claude Code session converted to Codex
// and inscribed back is the same conversation, but for the losses the
// conversion reports (check --to codex finds no unexplained difference).
func TestCrossRoundTrip(t *testing.T) {
	docs := claudeDocs(t)
	for _, id := range sortedIDs(docs) {
		rep, err := check.Cross(storetest.Doc(t, docs[id]), toCodex)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if !f.Explained() {
				t.Errorf("%s: %s: %s", id, f.Kind, f.Msg)
			} else {
				t.Logf("%s: %s %d %s of %s (%s)", id, f.Kind, f.Count, f.Unit, f.What, f.Detail)
			}
		}
	}
}
