package codex_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// resumeFile is Resume of a rollout, its origin looked for beside it.
func resumeFile(t *testing.T, p string) []exportcore.Unit {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := codex.New().Resume(f, func(id string) (io.ReadCloser, error) {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "*"+id+".jsonl"))
		if len(m) == 0 {
			return nil, os.ErrNotExist
		}
		return os.Open(m[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	return exportcore.SentUnits(r)
}

// TestResumeIsWhatCodexSends holds Resume to the real client: for every
// bundled rollout and every rollout of other people's machines
// (../shared/corpus/codex-public), the prompts, replies, images, calls
// and results Resume says Codex sends on resume are those it sends, in
// order.
func TestResumeIsWhatCodexSends(t *testing.T) {
	cp := realclient.Codex(t)
	files := testenv.Transcripts(t, filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions"))
	files = append(files, testenv.CodexPublic(t)...)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, p := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var others []string
			if strings.Contains(p, "c0af-7253") {
				others, _ = filepath.Glob(filepath.Join(filepath.Dir(p), "*bc69-7a02*"))
			}
			out, err := cp.Probe(p, others...)
			if err != nil {
				t.Errorf("%s: %.1000v", p, err)
				return
			}
			want, err := crosstest.CodexUnits(out)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return
			}
			got := resumeFile(t, p)
			if d := crosstest.Diff(want, got); d != "" {
				t.Errorf("%s: Resume differs from what Codex sends:\n%s", filepath.Base(p), d)
			}
		})
	}
	wg.Wait()
}
