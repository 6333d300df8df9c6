package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestCodexRolloutHead: a Codex rollout whose first line is not its
// session_meta (a line written twice, the first a copy of a later one) is
// read; one whose first line is still being written is skipped with a
// warning that names file:line, and read once the line is whole (issue
// 32, 10).
func TestCodexRolloutHead(t *testing.T) {
	rel := filepath.Join("2026", "11", "23", "rollout-2026-11-23T16-52-29-01a20952-c650-7460-8240-fe79e3d5153c.jsonl")
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions", rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	dir := t.TempDir()

	// A line written twice, ahead of the session_meta.
	dup := filepath.Join(dir, "dup", rel)
	os.MkdirAll(filepath.Dir(dup), 0o755)
	os.WriteFile(dup, append(append([]byte(nil), lines[2]...), data...), 0o644)
	root := filepath.Join(dir, "store")
	code, out, errOut := runScribe(t, "--root", root, "append", dup)
	if code != 0 || !strings.Contains(out, "1 inscribed") {
		t.Errorf("a rollout that starts with a line written twice: %d\n%s%s", code, out, errOut)
	}

	// The first line, being written.
	partial := filepath.Join(dir, "partial", rel)
	os.MkdirAll(filepath.Dir(partial), 0o755)
	os.WriteFile(partial, lines[0][:len(lines[0])/2], 0o644)
	root = filepath.Join(dir, "store2")
	code, out, errOut = runScribe(t, "--root", root, "append", partial)
	if code != 0 || !strings.Contains(errOut, partial+":1:") {
		t.Errorf("a rollout whose first line is being written: %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(partial, data, 0o644)
	code, out, errOut = runScribe(t, "--root", root, "append", partial)
	if code != 0 || !strings.Contains(out, "1 inscribed") {
		t.Errorf("the same rollout, whole: %d\n%s%s", code, out, errOut)
	}
}

// TestCodexUnknownRecordsWarnOnce: a rollout with many records of a type
// scribe does not know gives one warning for them, with their count, not
// one a line (issue 32, 11).
func TestCodexUnknownRecordsWarnOnce(t *testing.T) {
	rel := filepath.Join("2026", "11", "23", "rollout-2026-11-23T16-52-29-01a20952-c650-7460-8240-fe79e3d5153c.jsonl")
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions", rel))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.Write(data)
	for i := 0; i < 200; i++ {
		b.WriteString(`{"timestamp":"2026-11-23T16:59:00.000Z","type":"future_thing","payload":{"n":1}}` + "\n")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "sessions", rel)
	os.MkdirAll(filepath.Dir(src), 0o755)
	os.WriteFile(src, b.Bytes(), 0o644)
	code, out, errOut := runScribe(t, "--root", filepath.Join(dir, "store"), "append", src)
	if code != 0 {
		t.Fatalf("append: %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "future_thing"); n != 1 || !strings.Contains(errOut, "199 more lines like it") {
		t.Errorf("%d warnings name the unknown type:\n%s", n, errOut)
	}
}
