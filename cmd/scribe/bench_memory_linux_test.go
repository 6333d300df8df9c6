package main

// Benchmarks of peak memory against the bound of issue 18: 64 MB plus
// twice the session's longest line, whatever the session's size. Two
// shapes, built from the bundled long sample (a prompt, then 160 tool
// calls):
//
//   - one line of about 100 MB: a tool result whose output the transcript
//     holds twice (the message's content and toolUseResult.stdout, 50 MB
//     each), or a prompt of 100 MB;
//   - a session of about 300 MB of ordinary lines: the sample repeated with
//     fresh uuids.
//
//	go test ./cmd/scribe -run '^$' -bench 'Memory' -benchtime 1x
//	SCRIBE_BENCH_LINE_MB=20 SCRIBE_BENCH_SESSION_MB=50 go test ./cmd/scribe -run '^$' -bench 'Memory' -benchtime 1x
//
// Each runs the command as the binary does (run, with main's collector
// settings) and reports peak-RSS-MB (VmHWM of the test process, reset
// before each command; about 10 MB of it is the test binary's own),
// bound-MB (64 + 2 × the longest line), cpu-s/op and MB/s of source.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

const (
	benchSample   = "99999999-9999-4999-8999-999999999999" // -home-dev-src-long
	benchSampleIn = "-home-dev-src-long"
)

// benchMemory sets the collector as main does, and returns what puts the
// test's settings back.
func benchMemory() func() {
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	limit := debug.SetMemoryLimit(-1)
	stop := setMemory()
	return func() {
		stop()
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// benchMB returns the size in MB that the environment variable name sets,
// or def.
func benchMB(b *testing.B, name string, def int) int64 {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("%s=%s is not a number of MB", name, s)
		}
		return int64(n) << 20
	}
	return int64(def) << 20
}

// benchSampleLines returns the lines of the bundled long sample.
func benchSampleLines(b *testing.B) [][]byte {
	data, err := os.ReadFile(filepath.Join(testenv.Projects(b), benchSampleIn, benchSample+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// benchText writes about n bytes of command output, JSON-escaped, to w:
// numbered lines of words, with tabs, quotes and non-ASCII letters.
func benchText(w *bufio.Writer, n int64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 18))
	words := strings.Fields("the of and to in is that for it with as was on are be by this an at from or have not but which file error build test go func return value line main package import struct string int err nil")
	var sb strings.Builder
	for i := 0; n > 0; i++ {
		sb.Reset()
		fmt.Fprintf(&sb, "%06d\t", i)
		for j := 0; j < 8; j++ {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%q é→ %s\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		q, _ := json.Marshal(sb.String())
		w.Write(q[1 : len(q)-1])
		n -= int64(sb.Len())
	}
}

// benchSampleFile creates the long sample's transcript in projects, for a
// benchmark to write it as it needs.
func benchSampleFile(b *testing.B, projects string) (string, *os.File) {
	b.Helper()
	dir := filepath.Join(projects, benchSampleIn)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, benchSample+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, f
}

// benchLongLine writes the long sample into projects with one line made
// long: its first prompt (shape "prompt") or its first tool result, output
// in both content and toolUseResult.stdout (shape "tool-result"), size
// bytes of text in all. It returns the file and the long line's number.
func benchLongLine(b *testing.B, projects, shape string, size int64) (string, int) {
	b.Helper()
	path, f := benchSampleFile(b, projects)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	long := 0
	const mark = "\x00text\x00"
	for i, line := range benchSampleLines(b) {
		if long == 0 {
			var e map[string]any
			json.Unmarshal(line, &e)
			msg, _ := e["message"].(map[string]any)
			var texts int
			switch {
			case shape == "prompt" && e["type"] == "user" && msg["content"] != nil:
				if _, ok := msg["content"].(string); ok {
					msg["content"] = mark
					texts = 1
				}
			case shape == "tool-result" && e["toolUseResult"] != nil:
				parts, _ := msg["content"].([]any)
				res, _ := e["toolUseResult"].(map[string]any)
				if len(parts) == 1 && res != nil {
					parts[0].(map[string]any)["content"] = mark
					res["stdout"] = mark
					texts = 2
				}
			}
			if texts > 0 {
				long = i + 1
				line, _ = json.Marshal(e)
				pieces := bytes.Split(line, []byte(`\u0000text\u0000`))
				for k, p := range pieces {
					w.Write(p)
					if k < texts {
						benchText(w, size/int64(texts), uint64(k))
					}
				}
				w.WriteByte('\n')
				continue
			}
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if long == 0 {
		b.Fatalf("the sample has no line to make a %s of", shape)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return path, long
}

// benchLongSession writes into projects a session of at least size bytes:
// the long sample again and again, each copy with fresh uuids but the
// session's, chained to the copy before it, and later timestamps.
func benchLongSession(b *testing.B, projects string, size int64) string {
	b.Helper()
	path, f := benchSampleFile(b, projects)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	lines := benchSampleLines(b)
	rng := rand.New(rand.NewPCG(1, 18))
	var n int64
	last := ""
	for copyN := 0; n < size; copyN++ {
		fresh := map[string]string{benchSample: benchSample}
		for _, line := range lines {
			if copyN > 0 {
				line = testenv.FreshUUIDs(line, fresh, rng)
				line = bytes.ReplaceAll(line, []byte(`"timestamp":"2026-`), fmt.Appendf(nil, `"timestamp":"%04d-`, 2026+copyN))
				if last != "" {
					line = bytes.Replace(line, []byte(`"parentUuid":null`), []byte(`"parentUuid":"`+last+`"`), 1)
				}
			}
			var e struct {
				Type, UUID string
			}
			json.Unmarshal(line, &e)
			if e.UUID != "" && (e.Type == "user" || e.Type == "assistant" || e.Type == "system" || e.Type == "attachment") {
				last = e.UUID
			}
			w.Write(line)
			w.WriteByte('\n')
			n += int64(len(line)) + 1
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchPeak runs scribe with args once per iteration, args(i) giving them
// (each iteration its own store, so that none is a no-op), and reports its
// peak RSS, CPU and speed over size bytes of source.
func benchPeak(b *testing.B, size, longest int64, setup func(i int), args func(i int) []string) {
	b.Helper()
	defer benchMemory()()
	var peak int64
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if setup != nil {
			setup(i)
		}
		a := args(i)
		runtime.GC()
		debug.FreeOSMemory()
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
		c0 := benchCPU()
		b.StartTimer()
		var stderr bytes.Buffer
		if code := run(a, strings.NewReader(""), io.Discard, &stderr); code != exitOK {
			b.Fatalf("scribe %s: status %d\n%s", strings.Join(a, " "), code, stderr.Bytes())
		}
		b.StopTimer()
		cpu += benchCPU() - c0
		peak = max(peak, procKB("VmHWM"))
	}
	b.SetBytes(size)
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
	b.ReportMetric(float64(64<<20+2*longest)/(1<<20), "bound-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemoryLongLine is inscribe (with and without redaction), append
// (of the rest of the session, the long line first, to a store holding
// the lines before it) and export-claude of a session with one long line.
func BenchmarkMemoryLongLine(b *testing.B) {
	size := benchMB(b, "SCRIBE_BENCH_LINE_MB", 100)
	for _, shape := range []string{"tool-result", "prompt"} {
		dir := b.TempDir()
		projects := filepath.Join(dir, "projects")
		path, long := benchLongLine(b, projects, shape, size)
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := os.ReadFile(path) // the longest line's length, and the cut before it
		lines := bytes.SplitAfter(data, []byte("\n"))
		longest := int64(len(lines[long-1]))
		cut := 0
		for _, l := range lines[:long-1] {
			cut += len(l)
		}
		data, lines = nil, nil
		store := func(name string, i int) string { return filepath.Join(dir, fmt.Sprintf("%s-%d", name, i)) }
		b.Run(shape+"/inscribe", func(b *testing.B) {
			benchPeak(b, fi.Size(), longest, nil, func(i int) []string {
				return []string{"--root", store("inscribe", i), "inscribe", projects}
			})
		})
		b.Run(shape+"/inscribe-no-redact", func(b *testing.B) {
			benchPeak(b, fi.Size(), longest, nil, func(i int) []string {
				return []string{"--root", store("noredact", i), "inscribe", "--no-redact", projects}
			})
		})
		b.Run(shape+"/append", func(b *testing.B) {
			cutDir := filepath.Join(dir, "cut", "projects")
			benchPeak(b, fi.Size()-int64(cut), longest, func(i int) {
				// The store holds the lines before the long one; the
				// source then gets the rest.
				src, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				defer src.Close()
				to := filepath.Join(cutDir, benchSampleIn, benchSample+".jsonl")
				os.MkdirAll(filepath.Dir(to), 0o755)
				dst, err := os.Create(to)
				if err != nil {
					b.Fatal(err)
				}
				defer dst.Close()
				if _, err := io.CopyN(dst, src, int64(cut)); err != nil {
					b.Fatal(err)
				}
				if code := run([]string{"--root", store("append", i), "inscribe", cutDir}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
					b.Fatalf("inscribing the cut session: status %d", code)
				}
				if _, err := io.Copy(dst, src); err != nil {
					b.Fatal(err)
				}
			}, func(i int) []string {
				return []string{"--root", store("append", i), "append", cutDir}
			})
		})
		b.Run(shape+"/export-claude", func(b *testing.B) {
			root := store("export", 0)
			if code := run([]string{"--root", root, "inscribe", projects}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
				b.Fatalf("inscribing: status %d", code)
			}
			benchPeak(b, fi.Size(), longest, nil, func(i int) []string {
				return []string{"--root", root, "export-claude", "--force", "--out", filepath.Join(dir, "export"), benchSample}
			})
		})
	}
}

// BenchmarkMemoryLongSession is inscribe of a session of ordinary lines
// (300 MB, SCRIBE_BENCH_SESSION_MB), with and without redaction.
func BenchmarkMemoryLongSession(b *testing.B) {
	dir := b.TempDir()
	if d := os.Getenv("SCRIBE_BENCH_KEEP"); d != "" {
		dir = d // the session is left there, to time the binary on it
	}
	projects := filepath.Join(dir, "projects")
	path := benchLongSession(b, projects, benchMB(b, "SCRIBE_BENCH_SESSION_MB", 300))
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var longest int64
	for _, l := range benchSampleLines(b) {
		longest = max(longest, int64(len(l))+1)
	}
	for _, flags := range [][]string{nil, {"--no-redact"}} {
		name := "inscribe"
		if flags != nil {
			name += flags[0]
		}
		b.Run(name, func(b *testing.B) {
			benchPeak(b, fi.Size(), longest, nil, func(i int) []string {
				return append([]string{"--root", filepath.Join(dir, fmt.Sprintf("%s-%d", name, i)), "inscribe"}, append(flags, projects)...)
			})
		})
	}
}
