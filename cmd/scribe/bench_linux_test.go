package main

// Benchmarks of the commands that read a whole store, over a store of many
// small sessions (10,000 by default): copies of the bundled samples under
// new session ids (storetest.Generate), inscribed once and kept in
// $SCRIBE_BENCH_DIR (default: the temporary directory) for the next run.
//
//	go test ./cmd/scribe -run '^$' -bench 'Store' -benchtime 1x
//	SCRIBE_BENCH_SESSIONS=1000 go test ./cmd/scribe -run '^$' -bench 'StoreSearch'
//
// Building the store of 10,000 sessions takes a few minutes and about
// 5 GB (1.9 GB of sources, 3 GB of store); later runs reuse it. Each
// benchmark runs the command as the binary does (run), its output
// discarded, and reports its peak RSS and the descriptors open after it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
)

// benchStore returns the root of a store of n generated sessions, building
// it the first time.
func benchStore(b *testing.B) (root string, n int) {
	b.Helper()
	n, dir := benchSessions(b)
	projects := filepath.Join(dir, fmt.Sprintf("projects-%d", n))
	root = filepath.Join(dir, fmt.Sprintf("store-%d", n))
	storetest.Generate(b, projects, n)
	stamp := filepath.Join(root, ".inscribed")
	if _, err := os.Stat(stamp); err != nil {
		os.RemoveAll(root)
		if code := run([]string{"--root", root, "inscribe", projects}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
			b.Fatalf("inscribing %d sessions: status %d", n, code)
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root, n
}

// benchSessions is how many sessions a benchmark's store holds
// (SCRIBE_BENCH_SESSIONS, 10,000) and where it is kept (SCRIBE_BENCH_DIR).
func benchSessions(b *testing.B) (n int, dir string) {
	n = 10000
	if s := os.Getenv("SCRIBE_BENCH_SESSIONS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("SCRIBE_BENCH_SESSIONS=%s is not a number of sessions", s)
		}
	}
	dir = os.Getenv("SCRIBE_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "scribe-bench-store")
	}
	return n, dir
}

// benchRun runs scribe b.N times with args and reports its peak RSS and
// the descriptors open afterwards.
func benchRun(b *testing.B, args ...string) {
	b.Helper()
	defer benchMemory()()
	runtime.GC()
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
	fds := openFDs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run(args, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
			b.Fatalf("scribe %s: status %d", strings.Join(args, " "), code)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(procKB("VmHWM"))/1024, "peak-RSS-MB")
	b.ReportMetric(float64(openFDs()-fds), "fds-left")
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// procKB returns a field of /proc/self/status in KiB.
func procKB(field string) int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkStoreCheck is check --store over every document.
func BenchmarkStoreCheck(b *testing.B) {
	root, n := benchStore(b)
	benchRun(b, "--root", root, "check", "--store")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/session")
}

// BenchmarkStoreReindex is reindex: every index rebuilt from the round
// files.
func BenchmarkStoreReindex(b *testing.B) {
	root, n := benchStore(b)
	benchRun(b, "--root", root, "reindex")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/session")
}

// BenchmarkStoreSearch is search, for a word in every session, a word in
// few, a prefix and an FTS5 phrase.
func BenchmarkStoreSearch(b *testing.B) {
	root, _ := benchStore(b)
	for _, q := range []struct{ name, query, flag string }{
		{"common", "question", ""},
		{"rare", "compaction", ""},
		{"prefix", "hel*", ""},
		{"phrase", `"hello world"`, "--fts"},
	} {
		b.Run(q.name, func(b *testing.B) {
			args := []string{"--root", root, "search", q.query}
			if q.flag != "" {
				args = append(args, q.flag)
			}
			benchRun(b, args...)
		})
	}
}

// BenchmarkStoreSearchDuringReindex is search while reindex rebuilds every
// index of the store (in another goroutine, as another process would: its
// own store and its own connections): each search is timed from the
// command's start to its end, exit included, and a reindex that ends is
// started again (outside the timer) until every search ran during one.
// A search reads the index as it was before the reindex (issue 30: it
// waited up to 30 s for the reindex to end). max-ms is the slowest.
func BenchmarkStoreSearchDuringReindex(b *testing.B) {
	root, _ := benchStore(b)
	sdb := filepath.Join(root, ".scribe", "sessions.db")
	var done chan int
	reindexing := false
	start := func() {
		done, reindexing = make(chan int, 1), true
		go func() {
			done <- run([]string{"--root", root, "reindex"}, strings.NewReader(""), io.Discard, io.Discard)
		}()
		// Until the reindex holds the index's write lock.
		for {
			select {
			case code := <-done:
				b.Fatalf("reindex ended (status %d) before it held the index", code)
			default:
			}
			db, err := index.Open(sdb)
			if err == nil {
				busy, _ := db.WriterActive(context.Background())
				db.Close()
				if busy {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// running reports whether the reindex still runs (once it is seen
	// to end, until the next start).
	running := func() bool {
		if !reindexing {
			return false
		}
		select {
		case code := <-done:
			reindexing = false
			if code != exitOK {
				b.Fatalf("reindex: status %d", code)
			}
			return false
		default:
			return true
		}
	}
	start()
	var lat []time.Duration
	queries := []string{"question", "compaction", "hel*", "hello world"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if !running() {
			start()
		}
		b.StartTimer()
		t0 := time.Now()
		if code := run([]string{"--root", root, "search", queries[i%len(queries)]}, strings.NewReader(""), io.Discard, io.Discard); code != exitOK {
			b.Fatalf("search: status %d", code)
		}
		d := time.Since(t0)
		b.StopTimer()
		if !running() {
			// It ended while the search ran: not a search during a reindex.
			i--
			b.StartTimer()
			continue
		}
		lat = append(lat, d)
		b.StartTimer()
	}
	b.StopTimer()
	for running() {
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
