package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// BenchmarkHookAppend is what every Claude Code turn's Stop hook costs on
// a store of many sessions (issue 33): `scribe append --hook`, run as the
// binary runs it, fed the hook's JSON on stdin, after a turn (a prompt and
// its reply) was added to one session's transcript. The store holds
// SCRIBE_BENCH_SESSIONS (10,000) small sessions, 100 to a project folder:
// the multiturn sample's first round under new ids (bench/mksessions.py's
// sessions), inscribed with --no-redact once and kept in
// $SCRIBE_BENCH_DIR (default: the temporary directory) for the next run.
// Each iteration appends to the same session. cpu-s/op is user and system
// time.
func BenchmarkHookAppend(b *testing.B) {
	n, dir := benchSessions(b)
	projects := filepath.Join(dir, fmt.Sprintf("hook-projects-%d", n))
	root := filepath.Join(dir, fmt.Sprintf("hook-store-%d", n))
	benchSmallSessions(b, projects, n)
	stamp := filepath.Join(root, ".inscribed")
	if _, err := os.Stat(stamp); err != nil {
		os.RemoveAll(root)
		var stderr bytes.Buffer
		if code := run([]string{"--root", root, "inscribe", "--no-redact", projects}, strings.NewReader(""), io.Discard, &stderr); code != exitOK {
			b.Fatalf("inscribing %d sessions: status %d\n%s", n, code, stderr.Bytes())
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	id := benchSmallID(n / 2)
	transcript := filepath.Join(projects, fmt.Sprintf("-home-dev-src-p%03d", n/2/100), id+".jsonl")
	input := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"hook_event_name":"Stop"}`, id, transcript)
	args := []string{"--root", root, "append", "--hook"}

	defer benchMemory()()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		benchTurn(b, transcript, id)
		runtime.GC()
		debug.FreeOSMemory()
		c0 := benchCPU()
		b.StartTimer()
		var stderr bytes.Buffer
		if code := run(args, strings.NewReader(input), io.Discard, &stderr); code != exitOK || stderr.Len() > 0 {
			b.Fatalf("scribe append --hook: status %d\n%s", code, stderr.Bytes())
		}
		b.StopTimer()
		cpu += benchCPU() - c0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// benchSmallID is the session id of benchSmallSessions's i-th session.
func benchSmallID(i int) string { return fmt.Sprintf("005c0be0-0000-4000-8000-%012x", i) }

// benchSmallSessions makes, unless it is there, a projects tree of n
// copies of the multiturn sample's first round (its lines 1-3, 18 and
// 20) under new session ids, 100 to a project folder.
func benchSmallSessions(b *testing.B, projects string, n int) {
	b.Helper()
	done := filepath.Join(projects, ".made")
	if _, err := os.Stat(done); err == nil {
		return
	}
	os.RemoveAll(projects)
	const sample = "22222222-2222-4222-8222-222222222222"
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(b), "testdata", "claude", "projects", "-home-dev-src-multiturn", sample+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var first []byte
	for _, k := range []int{1, 2, 3, 18, 20} {
		first = append(first, lines[k-1]...)
	}
	for i := 0; i < n; i++ {
		d := filepath.Join(projects, fmt.Sprintf("-home-dev-src-p%03d", i/100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		id := benchSmallID(i)
		if err := os.WriteFile(filepath.Join(d, id+".jsonl"), bytes.ReplaceAll(first, []byte(sample), []byte(id)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
}

// benchTurn appends a turn to a transcript: a prompt and its reply, each
// the child of the line before it.
func benchTurn(b *testing.B, path, id string) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	turn := bytes.Count(data, []byte(`"type":"user"`))
	parent := "null"
	if i := bytes.LastIndex(data, []byte(`"uuid":"`)); i >= 0 {
		parent = string(data[i+7 : i+7+38])
	}
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).Add(time.Duration(turn) * time.Minute).Format("2006-01-02T15:04:05.000Z")
	var w bytes.Buffer
	for k, msg := range []string{
		fmt.Sprintf(`"type":"user","message":{"role":"user","content":"question %d"}`, turn),
		fmt.Sprintf(`"type":"assistant","message":{"id":"msg_t%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d"}]}`, turn, turn),
	} {
		uuid := fmt.Sprintf("7e000000-0000-4000-8000-%012d", 2*turn+k)
		fmt.Fprintf(&w, `{"parentUuid":%s,"isSidechain":false,%s,"uuid":"%s","timestamp":"%s","cwd":"/home/dev/src/bench","sessionId":"%s"}`+"\n", parent, msg, uuid, at, id)
		parent = `"` + uuid + `"`
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(w.Bytes()); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
