package exportcodex_test

import (
	"bytes"
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
	files, _, err := exportcodex.ConvertSession(storetest.Doc(t, md), fromClaude, dir, exportcodex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Path
}

// claudeSessions inscribes the bundled Claude Code sessions
// (testdata/claude/projects, written by Claude Code 2.1.328) and those of
// the public corpus (../shared, written by Claude Code 1.0 to 2.1 on other
// people's machines, each copied to <session id>.jsonl, the name the
// client resumes), into one store.
func claudeSessions(t *testing.T) []crosstest.Inscribed {
	dir := filepath.Join(t.TempDir(), "public")
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
	return crosstest.InscribeAll(t, claude.New(), filepath.Join(testenv.RepoRoot(t), "testdata", "claude", "projects"), dir)
}

// TestCrossResumeInCodex is the judge of export-codex for Claude Code and
// Gemini CLI sessions: for every bundled Claude Code session, every session
// of the public corpus and every bundled Gemini CLI session, the source's
// real client resumes the original and the real Codex client resumes the
// conversion, and Codex sends its model, in order, every prompt, reply,
// image, tool call and result the source client sends (a compaction's
// summary and what it preserved), but for what the conversion reports as
// lost. check --to codex reads the same: the Codex it stands in for
// (codex's Resume) sends what the real one sends, and it finds nothing
// lost unreported either.
func TestCrossResumeInCodex(t *testing.T) {
	cp := probeTool(t)
	to := crosstest.Target{Name: "Codex", Resumer: codex.New(),
		Convert: func(o crosstest.Original, dir string) (string, *exportcore.Losses, error) {
			files, losses, err := exportcodex.ConvertSession(storetest.Doc(t, o.Doc), o.From, dir, exportcodex.Options{})
			if err != nil {
				return "", losses, err
			}
			return files[0].Path, losses, nil
		},
		Received: func(file string) ([]exportcore.Unit, error) {
			out, err := cp.Probe(file)
			if err != nil {
				return nil, err
			}
			return crosstest.CodexUnits(out)
		},
		Check: func(o crosstest.Original) ([]string, error) {
			return unexplained(check.Cross(storetest.Doc(t, o.Doc), o.From, toCodexFrom(o.From)))
		}}
	t.Run("claude", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.ClaudeOriginals(t, claudeSessions(t), fromClaude, true), to)
	})
	t.Run("gemini", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.GeminiOriginals(t, crosstest.InscribeAll(t, gemini.New(), geminiRoot(t)), fromGemini), to)
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

// toCodex is the Codex client as a cross-agent check of a Claude Code
// session takes it.
var toCodex = toCodexFrom(fromClaude)

// toCodexFrom is the Codex client as a cross-agent check of a session of
// the format from takes it.
func toCodexFrom(from exportcore.Source) check.CrossFormat {
	return check.CrossFormat{Name: "codex", Target: codex.New(), Convert: func(d *inscribe.Doc, dir string) (*exportcodex.Losses, error) {
		_, losses, err := exportcodex.ConvertSession(d, from, dir, exportcodex.Options{})
		return losses, err
	}}
}

// TestCrossRoundTrip: for every bundled Claude Code and Gemini CLI
// session, check --to codex finds nothing the conversion lost without
// reporting it (what Codex would send resuming it holds what the source
// client sends, but for reported losses), and the conversion inscribed
// back keeps the session's id, directory, title and model.
func TestCrossRoundTrip(t *testing.T) {
	for _, src := range []struct {
		from exportcore.Source
		docs map[string]string
	}{{fromClaude, claudeDocs(t)}, {fromGemini, crosstest.Inscribe(t, gemini.New(), geminiRoot(t))}} {
		for _, id := range sortedIDs(src.docs) {
			rep, err := check.Cross(storetest.Doc(t, src.docs[id]), src.from, toCodexFrom(src.from))
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

// fromClaude is the source format of the sessions converted here.
var fromClaude = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
	return exportclaude.Transcript(d, claude.New(), w)
}, Resumer: claude.New()}

// fromGemini is the Gemini CLI as a conversion reads a session inscribed
// from it.
var fromGemini = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
	return exportgemini.Transcript(d, gemini.New(), w)
}, Resumer: gemini.New()}

// geminiRoot holds the bundled Gemini CLI sessions (the corpus written by
// Gemini CLI 0.61.0).
func geminiRoot(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp")
}
