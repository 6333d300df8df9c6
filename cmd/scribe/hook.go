package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
)

// hookInput is the part of Claude Code's hook input that append reads.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
}

// hookInputTimeout is how long append --hook waits for a complete JSON
// object on stdin (a test shortens it).
var hookInputTimeout = 10 * time.Second

// hookTranscriptWait is how long append --hook waits for a transcript
// that is not there yet: Claude Code writes a session's lines in batches,
// and a new session's first batch can come after its first Stop hook
// starts.
const hookTranscriptWait = 3 * time.Second

// waitForTranscript returns once path exists, or after wait, or when ctx
// is done; the update that follows says what is wrong if it still does
// not exist.
func waitForTranscript(ctx context.Context, path string, wait time.Duration) {
	pollUntil(ctx, wait, func() bool {
		_, err := os.Stat(path)
		return !errors.Is(err, fs.ErrNotExist)
	})
}

// waitForGrowth reports whether the file at path changed size within wait,
// or false when ctx is done first.
func waitForGrowth(ctx context.Context, path string, wait time.Duration) bool {
	first, err := os.Stat(path)
	if err != nil {
		return false
	}
	return pollUntil(ctx, wait, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() != first.Size()
	})
}

// pollUntil reports whether done holds within wait, asking it every 50 ms
// (at once first), or false when ctx is done first.
func pollUntil(ctx context.Context, wait time.Duration, done func() bool) bool {
	deadline := time.Now().Add(wait)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// allUnchanged reports whether an update found nothing new anywhere.
func allUnchanged(results []inscribe.Result) bool {
	for _, r := range results {
		if r.Outcome != inscribe.Unchanged {
			return false
		}
	}
	return len(results) > 0
}

// hookInputMax bounds the hook input. Claude Code's is a few hundred bytes.
const hookInputMax = 64 << 20

const hookInputWant = "expected Claude Code's hook JSON with transcript_path"

// readHookInput reads Claude Code's hook input: the first JSON object on r.
// It returns as soon as that object is complete, whether or not r is closed
// after it, and fails when none is complete after timeout or within limit
// bytes. On a timeout the read is left behind, blocked: the process is about
// to end.
func readHookInput(ctx context.Context, r io.Reader, timeout time.Duration, limit int64) (hookInput, error) {
	cr := &countingReader{r: io.LimitReader(r, limit+1)}
	type result struct {
		in  hookInput
		err error
	}
	done := make(chan result, 1)
	go func() {
		var in hookInput
		err := json.NewDecoder(cr).Decode(&in)
		done <- result{in, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		if res.err != nil {
			return hookInput{}, hookInputError(res.err, cr.n.Load(), limit)
		}
		if res.in.TranscriptPath == "" {
			return hookInput{}, errors.New("hook input has no transcript_path")
		}
		return res.in, nil
	case <-timer.C:
		if n := cr.n.Load(); n > 0 {
			return hookInput{}, fmt.Errorf("hook input on stdin is incomplete after %v (%d bytes and no complete JSON object): %s", timeout, n, hookInputWant)
		}
		return hookInput{}, withHint(fmt.Errorf("no hook input on stdin after %v: %s", timeout, hookInputWant), hookByHand)
	case <-ctx.Done():
		return hookInput{}, fmt.Errorf("read hook input on stdin: %w", ctx.Err())
	}
}

const hookByHand = "append --hook is for a Claude Code hook; to append a transcript yourself, run scribe append TRANSCRIPT"

// hookInputError says why the hook input did not decode, n bytes into it.
func hookInputError(err error, n, limit int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case n > limit:
		return fmt.Errorf("hook input on stdin is larger than %s: %s", sizeText(limit), hookInputWant)
	case errors.Is(err, io.EOF):
		return withHint(fmt.Errorf("no hook input on stdin (it is empty): %s", hookInputWant), hookByHand)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("hook input on stdin ends before its JSON is complete (%d bytes): %s", n, hookInputWant)
	case errors.As(err, &se):
		return fmt.Errorf("hook input on stdin is not JSON: %v: %s", err, hookInputWant)
	case errors.As(err, &te):
		return fmt.Errorf("hook input on stdin is not the JSON object expected: %v: %s", err, hookInputWant)
	}
	return fmt.Errorf("read hook input on stdin: %w", err)
}

// sizeText writes a byte count the way a person would.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d %s", n, plural(int(n), "byte", "bytes"))
}

// countingReader counts the bytes read through it; another goroutine may
// read the count.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
