package exportgemini_test

import (
	"io"
	"path/filepath"
	"sort"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
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

// fromClaude and fromCodex are the formats of the sessions converted
// here, as a conversion reads them.
var (
	fromClaude = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
		return exportclaude.Transcript(d, claude.New(), w)
	}, Resumer: claude.New()}
	fromCodex = exportcore.Source{Transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
		return exportcodex.Transcript(d, codex.New(), w)
	}, Resumer: codex.New()}
)

// claudeRoot and codexRoot hold the bundled Claude Code sessions and
// Codex rollouts.
func claudeRoot(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "claude", "projects")
}

func codexRoot(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions")
}

func sortedIDs(docs map[string]string) []string {
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// geminiSent reads what the Gemini CLI sent resuming a conversion: every
// unit but its own context (another client's tags in a conversion's texts
// are sent as texts).
func geminiSent(out []byte) ([]exportcore.Unit, error) {
	us, err := crosstest.GeminiSent(out)
	return exportcore.Canon(us), err
}

// TestCrossResumeInGemini is the judge of export-gemini for Claude Code
// and Codex sessions: for every bundled Claude Code session and Codex
// rollout, the source's real client resumes the original and the real
// Gemini CLI resumes the conversion, and the Gemini CLI sends its model,
// in order, every prompt, reply, image, tool call and result the source
// client sends (after a compaction, the summary and what follows), but for
// what the conversion reports as lost. check --to gemini reads the same:
// the Gemini CLI it stands in for (gemini's Resume) sends what the real
// one sends, and it finds nothing lost unreported either.
func TestCrossResumeInGemini(t *testing.T) {
	gp := realclient.Gemini(t)
	to := crosstest.Target{Name: "Gemini CLI", Resumer: adapter,
		Convert: func(o crosstest.Original, dir string) (string, *exportcore.Losses, error) {
			files, losses, err := exportgemini.ConvertSession(storetest.Doc(t, o.Doc), o.From, filepath.Join(dir, "p", "chats"), exportgemini.Options{})
			if err != nil {
				return "", losses, err
			}
			return files[0].Path, losses, nil
		},
		Received: func(file string) ([]exportcore.Unit, error) {
			out, err := gp.Probe(file)
			if err != nil {
				return nil, err
			}
			return geminiSent(out)
		},
		Check: func(o crosstest.Original) ([]string, error) {
			return unexplained(check.Cross(storetest.Doc(t, o.Doc), o.From, toGemini(o.From)))
		}}
	t.Run("claude", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.ClaudeOriginals(t, crosstest.InscribeAll(t, claude.New(), claudeRoot(t)), fromClaude, false), to)
	})
	t.Run("codex", func(t *testing.T) {
		crosstest.JudgeAll(t, crosstest.CodexOriginals(t, crosstest.InscribeAll(t, codex.New(), codexRoot(t)), fromCodex), to)
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

// toGemini is the conversion to Gemini CLI of a session of the format
// from, as check --to gemini runs it.
func toGemini(from exportcore.Source) check.CrossFormat {
	return check.CrossFormat{Name: "gemini", Target: adapter, Convert: func(d *inscribe.Doc, dir string) (*exportcore.Losses, error) {
		_, losses, err := exportgemini.ConvertSession(d, from, filepath.Join(dir, "p", "chats"), exportgemini.Options{})
		return losses, err
	}}
}

// TestCrossRoundTrip: for every bundled Claude Code and Codex session,
// check --to gemini finds nothing the conversion lost without reporting it
// (what the Gemini CLI would send resuming it holds what the source client
// sends, but for reported losses), and the conversion inscribed back keeps
// the session's id, directory, title and model.
func TestCrossRoundTrip(t *testing.T) {
	for _, src := range []struct {
		from exportcore.Source
		docs map[string]string
	}{{fromClaude, crosstest.Inscribe(t, claude.New(), claudeRoot(t))}, {fromCodex, crosstest.Inscribe(t, codex.New(), codexRoot(t))}} {
		for _, id := range sortedIDs(src.docs) {
			rep, err := check.Cross(storetest.Doc(t, src.docs[id]), src.from, toGemini(src.from))
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
