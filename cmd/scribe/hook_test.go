package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testenv"
)

const hookSession = "22222222-2222-4222-8222-222222222222"

// hookDir makes a scratch directory holding a copy of a sample transcript
// (proj/<session>.jsonl, its first n lines; all of it when n is 0) and
// returns the directory and the transcript's path.
func hookDir(t *testing.T, n int) (dir, transcript string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", hookSession+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		off := 0
		for i := 0; i < n; i++ {
			off += bytes.IndexByte(data[off:], '\n') + 1
		}
		data = data[:off]
	}
	dir = t.TempDir()
	transcript = filepath.Join(dir, "proj", hookSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(transcript, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, transcript
}

// hookJSON is Claude Code's Stop hook input for a transcript.
func hookJSON(transcript string) string {
	b, _ := json.Marshal(map[string]any{"session_id": hookSession, "transcript_path": transcript,
		"cwd": "/home/dev/src/multiturn", "hook_event_name": "Stop", "stop_hook_active": false})
	return string(b)
}

// runHook runs scribe in this process and returns its status and output.
func runHook(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errw bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errw)
	return code, out.String(), errw.String()
}

// TestHookPanic: a panic is a failure like any other. In hook mode it
// exits 1, not the 2 of an unrecovered panic, which would block a Stop hook.
func TestHookPanic(t *testing.T) {
	t.Run("command", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want int
		}{
			{[]string{"boom", "--hook"}, exitHookFailed},
			{[]string{"boom"}, exitError},
		} {
			var stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: new(bytes.Buffer), stderr: &stderr}
			root := newRootCmd(e)
			boom := &cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error { panic("boom") }}
			boom.Flags().Bool("hook", false, "")
			root.AddCommand(boom)
			if got := execute(e, root, c.args); got != c.want {
				t.Errorf("%v: status %d, want %d", c.args, got, c.want)
			}
			if !strings.Contains(stderr.String(), "internal error") || !strings.Contains(stderr.String(), "panic: boom") {
				t.Errorf("%v: stderr does not report the panic:\n%s", c.args, stderr.String())
			}
		}
	})
	t.Run("update", func(t *testing.T) {
		// A panic while updating a document, in one of the workers.
		saved := storeUpdate
		defer func() { storeUpdate = saved }()
		storeUpdate = func(*inscribe.Store, claude.Transcript, inscribe.Options) []inscribe.Result { panic("boom") }
		dir, transcript := hookDir(t, 0)
		code, stdout, stderr := runHook(hookJSON(transcript), "--root", filepath.Join(dir, "data"), "append", "--hook")
		if code != exitHookFailed {
			t.Errorf("status %d, want %d", code, exitHookFailed)
		}
		if !strings.Contains(stderr, transcript+": internal error") || !strings.Contains(stderr, "panic: boom") {
			t.Errorf("stderr does not report the panic with the transcript:\n%s", stderr)
		}
		if !strings.Contains(stdout, "1 failed") {
			t.Errorf("stdout does not count the failure:\n%s", stdout)
		}
	})
}
