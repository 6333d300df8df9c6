package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// resumeFile is Resume of a session file.
func resumeFile(t *testing.T, p string) []exportcore.Unit {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gemini.New().Resume(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return exportcore.SentUnits(r)
}

// TestResumeIsWhatGeminiSends holds Resume to the real client: for every
// session of the samples (the shared corpus, copied), the prompts, replies,
// images, calls and results Resume says the Gemini CLI sends on resume are
// those it sends, in order (a function response as many times as the
// client sends it). A session the client does not resume has nothing to
// send.
func TestResumeIsWhatGeminiSends(t *testing.T) {
	p := realclient.Gemini(t)
	var files []string
	ss, err := gemini.New().Discover(filepath.Join(testenv.RepoRoot(t), "testdata", "gemini", "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		files = append(files, s.Path)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			got := resumeFile(t, f)
			out, err := p.Probe(f)
			if err != nil {
				if len(got) > 0 && strings.Contains(err.Error(), "sent no") {
					t.Errorf("%s: the client does not resume it, and Resume says it sends %d units: %.300v", f, len(got), err)
				}
				return
			}
			want, err := crosstest.GeminiUnits(out)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				return
			}
			if d := crosstest.Diff(want, got); d != "" {
				t.Errorf("%s: Resume differs from what the Gemini CLI sends:\n%s", filepath.Base(f), d)
			}
		})
	}
	wg.Wait()
}
