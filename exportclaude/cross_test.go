package exportclaude_test

import (
	"bytes"
	"context"
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
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// codexDocs inscribes the bundled Codex rollouts (testdata/codex/sessions,
// the corpus written by Codex 0.169.0) and returns their documents by
// session id.
func codexDocs(t *testing.T) map[string]string {
	return crosstest.Inscribe(t, codex.New(), filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"))
}

func sortedIDs(docs map[string]string) []string {
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// convert writes the conversion of md into dir as <id>.jsonl.
func convert(t *testing.T, md, dir string) string {
	t.Helper()
	files, _, err := exportclaude.ConvertSession(storetest.Doc(t, md), dir, exportclaude.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Path
}

// TestCrossResumeInClaude is the judge of export-claude for Codex
// sessions: the real Claude Code client resumes the conversion of every
// bundled Codex rollout, and the model receives, in order, every prompt,
// every reply and every tool call with its full result of the live
// conversation, as structured blocks.
func TestCrossResumeInClaude(t *testing.T) {
	bin := realclient.Claude(t)
	docs := codexDocs(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, id := range sortedIDs(docs) {
		md := docs[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := convert(t, md, t.TempDir())
			out, err := realclient.Probe(context.Background(), bin, p, "")
			if err != nil {
				t.Errorf("%s: the client does not resume the conversion: %v", id, err)
				return
			}
			got, err := claudeUnits(out)
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

// claudeUnits reads the messages Claude Code sent as units.
func claudeUnits(out []byte) ([]crosstest.Unit, error) {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &msgs); err != nil {
		return nil, err
	}
	var us []crosstest.Unit
	for _, m := range msgs {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			us = append(us, crosstest.Unit{Kind: m.Role, Text: s})
			continue
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, err
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				us = append(us, crosstest.Unit{Kind: m.Role, Text: b.Text})
			case "tool_use":
				us = append(us, crosstest.Unit{Kind: "call", Name: b.Name, Input: b.Input})
			case "tool_result":
				u := crosstest.Unit{Kind: "result"}
				if json.Unmarshal(b.Content, &s) == nil {
					u.Parts = []string{s}
				} else {
					var ps []struct{ Type, Text string }
					json.Unmarshal(b.Content, &ps)
					for _, p := range ps {
						if p.Type == "image" {
							u.Parts = append(u.Parts, "[image]")
						} else {
							u.Parts = append(u.Parts, p.Text)
						}
					}
				}
				us = append(us, u)
			}
		}
	}
	return us, nil
}

// TestConvertIsDeterministic: two conversions of a document are the same
// bytes (every identity they mint derives from the session id and a
// position), and converting writes nothing but the transcript.
func TestConvertIsDeterministic(t *testing.T) {
	docs := codexDocs(t)
	for _, id := range sortedIDs(docs) {
		a, b := t.TempDir(), t.TempDir()
		pa, pb := convert(t, docs[id], a), convert(t, docs[id], b)
		da, _ := os.ReadFile(pa)
		db, _ := os.ReadFile(pb)
		if len(da) == 0 || string(da) != string(db) {
			t.Errorf("%s: two conversions differ (or are empty)", id)
		}
		if ents, _ := os.ReadDir(a); len(ents) != 1 {
			t.Errorf("%s: the conversion wrote %d files", id, len(ents))
		}
	}
}

// toClaude is the Claude Code client as a cross-agent check takes it.
var toClaude = check.CrossFormat{Name: "claude", Target: claude.New(), Convert: func(d *inscribe.Doc, dir string) (*exportclaude.Losses, error) {
	_, losses, err := exportclaude.ConvertSession(d, dir, exportclaude.Options{})
	return losses, err
}}

// TestCrossRoundTrip: every bundled Codex session converted to Claude Code
// and inscribed back is the same conversation, but for the losses the
// conversion reports (check --to claude finds no unexplained difference).
func TestCrossRoundTrip(t *testing.T) {
	docs := codexDocs(t)
	for _, id := range sortedIDs(docs) {
		rep, err := check.Cross(storetest.Doc(t, docs[id]), toClaude)
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

// lateResult is a rollout whose call's output came after the next prompt
// (the output is in another round than its call).
const lateResult = `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"01a20952-0000-7000-8000-000000000001","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/home/x/p","originator":"codex_exec","cli_version":"0.169.0"}}
{"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}}
{"timestamp":"2026-01-02T03:04:07.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 9\"}","call_id":"call_x"}}
{"timestamp":"2026-01-02T03:04:08.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}}
{"timestamp":"2026-01-02T03:04:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_x","output":"late output"}}
{"timestamp":"2026-01-02T03:04:10.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}
`

// TestConvertMovesLateResult: a result recorded after the next prompt is
// moved to right after its call (Claude's API needs it there), reported,
// and check --to accounts for it.
func TestConvertMovesLateResult(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "2026", "01", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rollout-2026-01-02T03-04-05-01a20952-0000-7000-8000-000000000001.jsonl")
	if err := os.WriteFile(p, []byte(lateResult), 0o644); err != nil {
		t.Fatal(err)
	}
	docs := crosstest.Inscribe(t, codex.New(), filepath.Dir(filepath.Dir(filepath.Dir(dir))))
	md := docs["01a20952-0000-7000-8000-000000000001"]
	rep, err := check.Cross(storetest.Doc(t, md), toClaude)
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, f := range rep.Findings {
		if !f.Explained() {
			t.Errorf("%s: %s", f.Kind, f.Msg)
		}
		if f.What == exportcore.WhatMoved && f.Count == 1 {
			moved = true
		}
	}
	if !moved {
		t.Errorf("the moved result is not reported: %+v", rep.Findings)
	}
	var buf bytes.Buffer
	if _, err := exportclaude.Convert(storetest.Doc(t, md), &buf); err != nil {
		t.Fatal(err)
	}
	call := strings.Index(buf.String(), `"tool_use","id":"call_x"`)
	result := strings.Index(buf.String(), `"tool_result","tool_use_id":"call_x","content":"late output"`)
	second := strings.Index(buf.String(), `"content":"second"`)
	if call < 0 || result < call || second < result {
		t.Errorf("the result is not between its call and the next prompt:\n%s", buf.String())
	}
}
