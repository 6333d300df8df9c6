package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
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
		// A panic while updating a document, in one of the workers. (The
		// stand-in is made by reflection so that it need not name the type
		// of what Update takes.)
		saved := storeUpdate
		defer func() { storeUpdate = saved }()
		reflect.ValueOf(&storeUpdate).Elem().Set(reflect.MakeFunc(reflect.TypeOf(storeUpdate),
			func([]reflect.Value) []reflect.Value { panic("boom") }))
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

// endless reads as a JSON object whose string never ends.
type endless struct{ started bool }

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	if !r.started {
		n = copy(p, `{"transcript_path":"`)
		r.started = true
	}
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestHookInput: the hook input is read up to its first JSON object, within
// a time and a size bound, and each way it can be wrong is said plainly.
func TestHookInput(t *testing.T) {
	const want = "expected Claude Code's hook JSON with transcript_path"
	ctx := context.Background()
	for _, c := range []struct {
		name, in, err string
	}{
		{"ok", hookJSON("proj/s.jsonl"), ""},
		{"ok, then more", hookJSON("proj/s.jsonl") + "\n{\"more\":", ""},
		{"empty", "", "no hook input on stdin (it is empty): " + want},
		{"blank", " \n\t", "no hook input on stdin (it is empty): " + want},
		{"not JSON", "Stop\n", "hook input on stdin is not JSON: invalid character 'S' looking for beginning of value: " + want},
		{"cut short", `{"transcript_path":"pro`, "hook input on stdin ends before its JSON is complete (23 bytes): " + want},
		{"not an object", `"proj/s.jsonl"`, "hook input on stdin is not the JSON object expected: "},
		{"no transcript_path", `{"hook_event_name":"SessionEnd"}`, "hook input has no transcript_path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := readHookInput(ctx, strings.NewReader(c.in), time.Minute, hookInputMax)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err == "" && in.TranscriptPath != "proj/s.jsonl":
				t.Fatalf("transcript_path %q, want proj/s.jsonl", in.TranscriptPath)
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}

	t.Run("larger than the bound", func(t *testing.T) {
		// Once "unexpected EOF" from a 1 MiB bound; now 64 MiB, and said.
		_, err := readHookInput(ctx, new(endless), time.Minute, hookInputMax)
		if err == nil || err.Error() != "hook input on stdin is larger than 64 MiB: "+want {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("object, then stdin left open", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		go w.Write([]byte(hookJSON("proj/s.jsonl")))
		in, err := readHookInput(ctx, r, time.Minute, hookInputMax)
		if err != nil || in.TranscriptPath != "proj/s.jsonl" {
			t.Fatalf("got %+v, %v", in, err)
		}
	})

	t.Run("stdin left open, nothing on it", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		_, err := readHookInput(ctx, r, 50*time.Millisecond, hookInputMax)
		if err == nil || err.Error() != "no hook input on stdin after 50ms: "+want {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("stdin left open mid-object", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		go w.Write([]byte(`{"transcript_path":`))
		_, err := readHookInput(ctx, r, 200*time.Millisecond, hookInputMax)
		if err == nil || !strings.HasPrefix(err.Error(), "hook input on stdin is incomplete after 200ms (19 bytes and no complete JSON object): ") {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("append --hook, stdin left open", func(t *testing.T) {
		saved := hookInputTimeout
		defer func() { hookInputTimeout = saved }()
		hookInputTimeout = 50 * time.Millisecond
		r, w := io.Pipe()
		defer w.Close()
		var stdout, stderr bytes.Buffer
		code := run([]string{"--root", filepath.Join(t.TempDir(), "data"), "append", "--hook"}, r, &stdout, &stderr)
		if code != exitHookFailed || !strings.Contains(stderr.String(), "scribe: error: no hook input on stdin after 50ms: "+want) {
			t.Fatalf("status %d, stderr:\n%s", code, stderr.String())
		}
	})
}

// TestWaitForTranscript: the hook waits for a transcript the client writes
// after the hook started, and gives up on one that never comes.
func TestWaitForTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(p, []byte("{}\n"), 0o644)
	}()
	waitForTranscript(context.Background(), p, time.Minute)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("returned before the transcript was written: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "never.jsonl")
	waitForTranscript(context.Background(), missing, 100*time.Millisecond)
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a transcript that never comes: %v", err)
	}
}
