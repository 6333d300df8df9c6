package crosstest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/session/source"
)

// An Original is a session a judge converts: as inscribed, the format it
// came from (as a conversion reads it), its client's name, and what that
// real client sends its model when it resumes it (Sent, read as units).
type Original struct {
	Inscribed
	From   exportcore.Source
	Client string
	Sent   func() ([]exportcore.Unit, error)
	// MayRefuse: the client may refuse to resume it or send nothing (a
	// published file that is no session the client resumes, a Gemini CLI
	// session a loop-detection rollback left empty): then there is
	// nothing to carry.
	MayRefuse bool
}

// A Target is the client a judge converts into: its name, its Resumer
// (what check --to reads in its place), how a session is converted for it
// into a folder, what the real client sends its model resuming a
// conversion (read as units), and check --to on the original (the
// findings it cannot explain).
type Target struct {
	Name     string
	Resumer  source.Resumer
	Convert  func(o Original, dir string) (file string, losses *exportcore.Losses, err error)
	Received func(file string) ([]exportcore.Unit, error)
	Check    func(o Original) (unexplained []string, err error)
}

// JudgeAll judges the conversion of each original into to, two at a time:
// the original's real client resumes it, the target's real client resumes
// its conversion, and the target's model must receive everything the
// source's does, but for reported losses, as the target's Resumer says
// (Judge); check --to must find nothing it cannot explain.
func JudgeAll(t *testing.T, originals []Original, to Target) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, o := range originals {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := filepath.Base(o.Source)
			want, err := o.Sent()
			switch {
			case err != nil && o.MayRefuse:
				t.Logf("%s: %s does not resume the original: %.300v", name, o.Client, err)
				return
			case err != nil:
				t.Errorf("%s: %s does not resume the original: %.1000v", name, o.Client, err)
				return
			case len(want) == 0 && o.MayRefuse:
				return // nothing the model receives (a file of summaries)
			}
			file, losses, err := to.Convert(o, t.TempDir())
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			got, err := to.Received(file)
			if err != nil {
				t.Errorf("%s: %s does not resume the conversion: %.2000v", name, to.Name, err)
				return
			}
			Judge(t, Judged{Name: name, From: o.Client, To: to.Name, Sent: want, Received: got, Losses: losses, File: file, Target: to.Resumer})
			problems, err := to.Check(o)
			if err != nil {
				t.Error(err)
				return
			}
			for _, p := range problems {
				t.Errorf("%s: check --to: %s", name, p)
			}
		})
	}
	wg.Wait()
}

// ClaudeOriginals are Claude Code sessions as a judge converts them: the
// real Claude Code resumes each (with its subagents' folder beside it).
// mayRefuse says the sessions may not all be ones the client resumes
// (published files).
func ClaudeOriginals(t testing.TB, ss []Inscribed, from exportcore.Source, mayRefuse bool) []Original {
	bin := realclient.Claude(t)
	var out []Original
	for _, s := range ss {
		out = append(out, Original{Inscribed: s, From: from, Client: "Claude Code", MayRefuse: mayRefuse, Sent: func() ([]exportcore.Unit, error) {
			subs := ""
			if d := filepath.Join(strings.TrimSuffix(s.Source, ".jsonl"), "subagents"); isDir(d) {
				subs = d
			}
			orig, err := realclient.Probe(context.Background(), bin, s.Source, subs)
			if err != nil {
				return nil, err
			}
			return ClaudeUnits(orig)
		}})
	}
	return out
}

// CodexOriginals are Codex rollouts as a judge converts them: the real
// Codex resumes each (a fork of the bundled samples with its origin
// beside it).
func CodexOriginals(t testing.TB, ss []Inscribed, from exportcore.Source) []Original {
	cp := realclient.Codex(t)
	var out []Original
	for _, s := range ss {
		out = append(out, Original{Inscribed: s, From: from, Client: "Codex", Sent: func() ([]exportcore.Unit, error) {
			var others []string
			if strings.Contains(s.Source, "c0af-7253") {
				others, _ = filepath.Glob(filepath.Join(filepath.Dir(s.Source), "*bc69-7a02*"))
			}
			orig, err := cp.Probe(s.Source, others...)
			if err != nil {
				return nil, err
			}
			return CodexUnits(orig)
		}})
	}
	return out
}

// GeminiOriginals are Gemini CLI sessions as a judge converts them: the
// real Gemini CLI resumes each (it refuses one a loop-detection rollback
// left empty).
func GeminiOriginals(t testing.TB, ss []Inscribed, from exportcore.Source) []Original {
	gp := realclient.Gemini(t)
	var out []Original
	for _, s := range ss {
		out = append(out, Original{Inscribed: s, From: from, Client: "Gemini CLI", MayRefuse: true, Sent: func() ([]exportcore.Unit, error) {
			orig, err := gp.Probe(s.Source)
			if err != nil {
				return nil, err
			}
			return GeminiUnits(orig)
		}})
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
