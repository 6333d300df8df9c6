package exportclaude_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/exportgemini"
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
	files, _, err := exportclaude.ConvertSession(storetest.Doc(t, md), fromCodex, dir, exportclaude.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Path
}

// codexRollouts inscribes the bundled Codex rollouts (testdata/codex/sessions,
// the corpus written by Codex 0.169.0) and those of other people's
// machines (../shared/corpus/codex-public, written by Codex 0.121.0 to
// 0.145.0), into one store.
func codexRollouts(t *testing.T) []crosstest.Inscribed {
	roots := append([]string{filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions")}, testenv.CodexPublic(t)...)
	return crosstest.InscribeAll(t, codex.New(), roots...)
}

// TestCrossResumeInClaude is the judge of export-claude for Codex and
// Gemini CLI sessions: for every bundled Codex rollout, every rollout of
// other people's machines and every bundled Gemini CLI session, the source's
// real client resumes the original and the real Claude Code client resumes
// the conversion, and Claude Code sends its model, in order, every prompt,
// reply, image, tool call and result the source client sends (a
// compaction's replacement history as the summary), but for what the
// conversion reports as lost. check --to claude reads the same: the Claude
// Code it stands in for (claude's Resume) sends what the real one sends,
// and it finds nothing lost unreported either.
func TestCrossResumeInClaude(t *testing.T) {
	bin := realclient.Claude(t)
	to := crosstest.Target{Name: "Claude Code", Resumer: claude.New(),
		Convert: func(o crosstest.Original, dir string) (string, *exportcore.Losses, error) {
			files, losses, err := exportclaude.ConvertSession(storetest.Doc(t, o.Doc), o.From, dir, exportclaude.Options{})
			if err != nil {
				return "", losses, err
			}
			return files[0].Path, losses, nil
		},
		Received: func(file string) ([]exportcore.Unit, error) {
			out, err := realclient.Probe(context.Background(), bin, file, "")
			if err != nil {
				return nil, err
			}
			return crosstest.ClaudeUnits(out)
		},
		Check: func(o crosstest.Original) ([]string, error) {
			return unexplained(check.Cross(storetest.Doc(t, o.Doc), o.From, toClaudeFrom(o.From)))
		}}
	t.Run("codex", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.CodexOriginals(t, codexRollouts(t), fromCodex), to)
	})
	t.Run("gemini", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.GeminiOriginals(t, geminiSessions(t), fromGemini), to)
	})
}

// unexplained are the findings of a check --to report that no reported
// loss explains.
func unexplained(rep *check.Report, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range rep.Findings {
		if !f.Explained() {
			out = append(out, string(f.Kind)+": "+f.Msg)
		}
	}
	return out, nil
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

// toClaude is the Claude Code client as a cross-agent check of a Codex
// session takes it.
var toClaude = toClaudeFrom(fromCodex)

// toClaudeFrom is the Claude Code client as a cross-agent check of a
// session of the format from takes it.
func toClaudeFrom(from exportcore.Source) check.CrossFormat {
	return check.CrossFormat{Name: "claude", Target: claude.New(), Convert: func(d *inscribe.Doc, dir string) (*exportclaude.Losses, error) {
		_, losses, err := exportclaude.ConvertSession(d, from, dir, exportclaude.Options{})
		return losses, err
	}}
}

// TestCrossRoundTrip: for every bundled Codex and Gemini CLI session,
// check --to claude finds nothing the conversion lost without reporting it
// (what Claude Code would send resuming it holds what the source client
// sends, but for reported losses),
// and the conversion inscribed back keeps the session's id, directory,
// title and model.
func TestCrossRoundTrip(t *testing.T) {
	for _, src := range []struct {
		from exportcore.Source
		docs map[string]string
	}{{fromCodex, codexDocs(t)}, {fromGemini, geminiDocs(t)}} {
		for _, id := range sortedIDs(src.docs) {
			rep, err := check.Cross(storetest.Doc(t, src.docs[id]), src.from, toClaudeFrom(src.from))
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
// written right after its call (Claude's API needs it there; Codex sends
// it joined to its call), and check --to finds nothing lost.
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
	rep, err := check.Cross(storetest.Doc(t, md), fromCodex, toClaude)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if !f.Explained() {
			t.Errorf("%s: %s", f.Kind, f.Msg)
		}
	}
	var buf bytes.Buffer
	if _, err := exportclaude.Convert(storetest.Doc(t, md), fromCodex, &buf); err != nil {
		t.Fatal(err)
	}
	call := strings.Index(buf.String(), `"tool_use","id":"call_x"`)
	result := strings.Index(buf.String(), `"tool_result","tool_use_id":"call_x","content":"late output"`)
	second := strings.Index(buf.String(), `"content":"second"`)
	if call < 0 || result < call || second < result {
		t.Errorf("the result is not between its call and the next prompt:\n%s", buf.String())
	}
}

// fromCodex is the source format of the sessions converted here.
var fromCodex = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
	return exportcodex.Transcript(d, codex.New(), w)
}, Resumer: codex.New()}

// fromGemini is the Gemini CLI as a conversion reads a session inscribed
// from it.
var fromGemini = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
	return exportgemini.Transcript(d, gemini.New(), w)
}, Resumer: gemini.New()}

// geminiDocs inscribes the bundled Gemini CLI sessions and returns their
// documents by session id.
func geminiDocs(t *testing.T) map[string]string {
	return crosstest.Inscribe(t, gemini.New(), filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp"))
}

// geminiSessions inscribes the bundled Gemini CLI sessions
// (testdata/gemini/tmp, the corpus written by Gemini CLI 0.61.0).
func geminiSessions(t *testing.T) []crosstest.Inscribed {
	return crosstest.InscribeAll(t, gemini.New(), filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp"))
}

// TestCrossFindsDroppedPrompt: check --to fails on a conversion that drops
// a person's prompt without reporting it, and names the prompt.
func TestCrossFindsDroppedPrompt(t *testing.T) {
	docs := codexDocs(t)
	for _, id := range sortedIDs(docs) {
		var prompt string
		drop := check.CrossFormat{Name: "claude", Target: claude.New(), Convert: func(d *inscribe.Doc, dir string) (*exportclaude.Losses, error) {
			files, losses, err := exportclaude.ConvertSession(d, fromCodex, dir, exportclaude.Options{})
			if err != nil {
				return nil, err
			}
			data, err := os.ReadFile(files[0].Path)
			if err != nil {
				return nil, err
			}
			var out bytes.Buffer
			for line := range strings.Lines(string(data)) {
				var e map[string]any
				if json.Unmarshal([]byte(line), &e) == nil && e["type"] == "user" && prompt == "" && e["isMeta"] == nil {
					if m, ok := e["message"].(map[string]any); ok {
						if s, ok := m["content"].(string); ok && strings.TrimSpace(s) != "" {
							prompt, m["content"] = s, ""
							b, _ := json.Marshal(e)
							line = string(b) + "\n"
						}
					}
				}
				out.WriteString(line)
			}
			return losses, os.WriteFile(files[0].Path, out.Bytes(), 0o644)
		}}
		rep, err := check.Cross(storetest.Doc(t, docs[id]), fromCodex, drop)
		if err != nil {
			t.Fatal(err)
		}
		if prompt == "" {
			continue // no prompt of its own to drop
		}
		found := false
		for _, f := range rep.Findings {
			if !f.Explained() && strings.Contains(f.Msg, "would not send user text") && strings.Contains(f.Msg, strings.TrimSpace(prompt)[:min(20, len(strings.TrimSpace(prompt)))]) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: check --to does not fail on the prompt %q dropped silently: %+v", id, prompt, rep.Findings)
		}
		return
	}
	t.Fatal("no bundled session has a prompt to drop")
}
