package exportgemini_test

import (
	"context"
	"io"
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

// original is a session the judge converts: as inscribed, the format it
// came from, and what its own real client sends resuming it.
type original struct {
	crosstest.Inscribed
	from   exportcore.Source
	client string
	sent   func() ([]exportcore.Unit, error)
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
	t.Run("claude", func(t *testing.T) {
		bin := realclient.Claude(t)
		var originals []original
		for _, s := range crosstest.InscribeAll(t, claude.New(), claudeRoot(t)) {
			originals = append(originals, original{Inscribed: s, from: fromClaude, client: "Claude Code", sent: func() ([]exportcore.Unit, error) {
				subs := ""
				if d := filepath.Join(strings.TrimSuffix(s.Source, ".jsonl"), "subagents"); isDir(d) {
					subs = d
				}
				orig, err := realclient.Probe(context.Background(), bin, s.Source, subs)
				if err != nil {
					return nil, err
				}
				return crosstest.ClaudeUnits(orig)
			}})
		}
		resumeInGemini(t, gp, originals)
	})
	t.Run("codex", func(t *testing.T) {
		cp := realclient.Codex(t)
		var originals []original
		for _, s := range crosstest.InscribeAll(t, codex.New(), codexRoot(t)) {
			originals = append(originals, original{Inscribed: s, from: fromCodex, client: "Codex", sent: func() ([]exportcore.Unit, error) {
				var others []string
				if strings.Contains(s.Source, "c0af-7253") {
					others, _ = filepath.Glob(filepath.Join(filepath.Dir(s.Source), "*bc69-7a02*"))
				}
				orig, err := cp.Probe(s.Source, others...)
				if err != nil {
					return nil, err
				}
				return crosstest.CodexUnits(orig)
			}})
		}
		resumeInGemini(t, gp, originals)
	})
}

func resumeInGemini(t *testing.T, gp *realclient.GeminiProbe, originals []original) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, s := range originals {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := filepath.Base(s.Source)
			want, err := s.sent()
			if err != nil {
				t.Errorf("%s: %s does not resume the original: %.1000v", name, s.client, err)
				return
			}
			if len(want) == 0 {
				return // nothing the model receives
			}
			files, losses, err := exportgemini.ConvertSession(storetest.Doc(t, s.Doc), s.from, filepath.Join(t.TempDir(), "p", "chats"), exportgemini.Options{})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			out, err := gp.Probe(files[0].Path)
			if err != nil {
				t.Errorf("%s: the Gemini CLI does not resume the conversion: %.2000v", name, err)
				return
			}
			got, err := geminiSent(out)
			if err != nil {
				t.Error(err)
				return
			}
			crosstest.Judge(t, crosstest.Judged{Name: name, From: s.client, To: "Gemini CLI", Sent: want, Received: got, Losses: losses,
				File: files[0].Path, Target: adapter})
			rep, err := check.Cross(storetest.Doc(t, s.Doc), s.from, toGemini(s.from))
			if err != nil {
				t.Error(err)
				return
			}
			for _, f := range rep.Findings {
				if !f.Explained() {
					t.Errorf("%s: check --to gemini: %s: %s", name, f.Kind, f.Msg)
				}
			}
		})
	}
	wg.Wait()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
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
