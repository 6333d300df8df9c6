//go:build unix

package views_test

// Benchmarks over a large, realistic projects tree. They are skipped unless
// SCRIBE_BENCH_ARCHIVE names one; bench/run builds the archives and runs
// them, and bench/README.md says what each measures and what it gave.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session/source"
)

// benchArchive returns the projects tree named by SCRIBE_BENCH_ARCHIVE, or
// skips the benchmark.
func benchArchive(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("SCRIBE_BENCH_ARCHIVE")
	if dir == "" {
		b.Skip("SCRIBE_BENCH_ARCHIVE is not set: build a projects tree with " +
			"`python3 ../shared/bench/mkarchive.py --sessions 300 --seed 1 ../shared/corpus/claude-code-2.1.328 /tmp/scribe-bench/a300` " +
			"and run SCRIBE_BENCH_ARCHIVE=/tmp/scribe-bench/a300 go test ./inscribe/views -run '^$' -bench . -benchtime 1x (or use bench/run)")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		b.Fatalf("SCRIBE_BENCH_ARCHIVE=%s is not a directory", dir)
	}
	return dir
}

// benchSources discovers the archive's transcripts and returns their total
// size, reading every source once (benchWarm).
func benchSources(b *testing.B, archive string) ([]source.Session, int64) {
	b.Helper()
	ts, err := storetest.Claude.Discover(archive)
	if err != nil {
		b.Fatal(err)
	}
	total := benchWarm(b, ts)
	if len(ts) == 0 || total == 0 {
		b.Fatalf("%s holds no transcripts", archive)
	}
	return ts, total
}

// benchWarm reads every source once, so that a timed run starts from a warm
// page cache (the floors in ../shared/bench/README.md are warm-cache too),
// and returns their total size. Call it just before the run: the machine
// these numbers come from pages out idle page cache within seconds (DAMON
// reclaim).
func benchWarm(b *testing.B, ts []source.Session) int64 {
	b.Helper()
	var total int64
	warm := func(p string) {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		n, err := io.Copy(io.Discard, f)
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	for _, t := range ts {
		if t.Path != "" {
			warm(t.Path)
		}
		for _, sa := range t.Sidechains {
			warm(sa.Path)
		}
	}
	return total
}

// benchRun does what `scribe inscribe` (opts.Verify) or `scribe append`
// does over a projects tree, in process: open the store, discover, update
// in parallel with the CLI's worker count, refresh the index files of the
// agents that changed, close the index. It fails the benchmark on any error.
func benchRun(b *testing.B, root, archive string, opts inscribe.Options) []inscribe.Result {
	rs, _ := benchRunSerial(b, root, archive, opts)
	return rs
}

// benchRunSerial is benchRun, also returning how long the run wrote the
// store's sessions.db (Views.SerialTime): the part no worker can share.
func benchRunSerial(b *testing.B, root, archive string, opts inscribe.Options) ([]inscribe.Result, time.Duration) {
	b.Helper()
	st, err := inscribe.OpenStore(root)
	if err != nil {
		b.Fatal(err)
	}
	s := views.Open(st)
	ts, err := storetest.Claude.Discover(archive)
	if err != nil {
		b.Fatal(err)
	}
	planned := 0 // as cmd/scribe's updateAll tells the views
	for _, t := range ts {
		planned += len(t.Sidechains)
		if t.Path != "" {
			planned++
		}
	}
	s.Plan(planned)
	out := make([][]inscribe.Result, len(ts))
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(max(2, runtime.GOMAXPROCS(0)*2), 8) // as cmd/scribe's updateAll
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = s.Update(ts[i], opts)
			}
		}()
	}
	for i := range ts {
		next <- i
	}
	close(next)
	wg.Wait()
	var flat []inscribe.Result
	for _, rs := range out {
		for _, r := range rs {
			if r.Err != nil {
				b.Fatalf("%s: %v", r.Source, r.Err)
			}
			flat = append(flat, r)
		}
	}
	if err := s.RefreshAfter(flat); err != nil {
		b.Fatal(err)
	}
	if err := s.CloseIndex(); err != nil {
		b.Fatal(err)
	}
	return flat, s.SerialTime()
}

// benchFreshProcess puts the caches back as a new process has them (the
// adapter's fork cache would otherwise spare later runs their reads).
func benchFreshProcess() {
	storetest.Claude = claude.New()
}

// benchDeleted is when a benchmark last deleted a store. On an ext4 file
// system without a journal (as on the machine these numbers come from),
// the inode allocator skips inodes freed in the last minute or so
// (recently_deleted in fs/ext4/ialloc.c), one by one: creating 10,000
// files just after deleting 10,000 takes about three times as long. So
// no benchmark deletes a store while it runs (they are removed with the
// benchmark's temporary directory), and a timed run waits until the last
// removal has settled.
var benchDeleted time.Time

// benchDir returns a temporary directory removed after the benchmark,
// noting when if it held many files.
func benchDir(b *testing.B) string {
	many := false
	// Cleanups run last first: this one runs after TempDir's removal...
	b.Cleanup(func() {
		if many {
			benchDeleted = time.Now()
		}
	})
	d := b.TempDir()
	// ...and this one before it.
	b.Cleanup(func() { many = countFiles(d) > 1000 })
	return d
}

// benchSettle is how long a timed run waits after a removal:
// SCRIBE_BENCH_SETTLE seconds, 65 unless set.
func benchSettle() time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv("SCRIBE_BENCH_SETTLE"), 64); err == nil {
		return time.Duration(v * float64(time.Second))
	}
	return 65 * time.Second
}

// benchQuiesce prepares a timed run: it flushes what setup left dirty, so
// that the run's syncfs(2) does not pay for it; waits for a recent removal
// to settle (see benchDeleted); and resets the process's peak RSS to its
// current RSS, so that VmHWM afterwards is the timed run's peak.
func benchQuiesce(b *testing.B) {
	syscall.Sync()
	if wait := benchSettle() - time.Since(benchDeleted); wait > 0 && !benchDeleted.IsZero() {
		b.Logf("waiting %v for the last removal to settle (SCRIBE_BENCH_SETTLE)", wait.Round(time.Second))
		time.Sleep(wait)
	}
	benchResetPeak()
}

// benchResetPeak returns free memory to the system and resets the
// process's peak RSS (VmHWM) to its current RSS.
func benchResetPeak() {
	runtime.GC()
	debug.FreeOSMemory()
	// "5" resets the peak resident set size (VmHWM) of the process.
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// procStatusKB returns a field of /proc/self/status in KiB (VmHWM, VmRSS).
func procStatusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// procIO returns the process's rchar and wchar from /proc/self/io: the
// bytes its read and write system calls (pread and pwrite too) moved, page
// cache hits included.
func procIO() (rchar, wchar int64) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "rchar":
			rchar = n
		case "wchar":
			wchar = n
		}
	}
	return rchar, wchar
}

// countFiles counts the regular files under root.
func countFiles(root string) int {
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// BenchmarkInscribe inscribes the whole archive into a fresh store per
// iteration, as `scribe inscribe` does (Verify, the CLI's worker pool, the
// index files). MB/s counts source bytes; peak-RSS-MB is the process's
// VmHWM, reset before each run; files is how many files the store holds
// afterwards.
func BenchmarkInscribe(b *testing.B) {
	archive := benchArchive(b)
	ts, total := benchSources(b, archive)
	tmp := benchDir(b)
	b.SetBytes(total)
	b.ReportAllocs()
	var elapsed, cpu, serial time.Duration
	var peakKB int64
	files := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := filepath.Join(tmp, fmt.Sprintf("store-%d", i))
		benchFreshProcess()
		benchQuiesce(b)
		benchWarm(b, ts)
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		rs, ser := benchRunSerial(b, root, archive, inscribe.Options{Verify: true})
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		serial += ser
		b.StopTimer()
		peakKB = max(peakKB, procStatusKB("VmHWM"))
		for _, r := range rs {
			if r.Outcome != inscribe.Inscribed {
				b.Fatalf("%s: %s, want inscribed", r.Doc, r.Outcome)
			}
		}
		files = countFiles(root) // the store stays until the end (see benchDeleted)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(total)*float64(b.N)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	// The serial share: the time the run spent writing sessions.db, which
	// one writer does at a time, over its CPU time (Amdahl's law caps the
	// speed-up of more cores at 100 / serial-%).
	b.ReportMetric(serial.Seconds()/float64(b.N), "serial-s/op")
	b.ReportMetric(100*serial.Seconds()/cpu.Seconds(), "serial-%")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
	b.ReportMetric(float64(files), "files")
}

// BenchmarkRoundFilesFloor measures, at the same moment as the other
// benchmarks, what this file system charges for the files a full
// inscription of the 300-session archive creates: 10,800 files of 70 KB
// in 317 folders, with the CLI's worker count, each written beside its
// target and renamed into place (mode=temp+rename, as scribe does, but
// without fsync), or created in place (mode=create). On a virtual machine
// this cost varies a lot from one minute to the next, so read the
// inscription's time next to it.
func BenchmarkRoundFilesFloor(b *testing.B) {
	benchArchive(b)
	const dirs, perDir, size = 317, 34, 70 << 10
	data := bytes.Repeat([]byte("x"), size)
	workers := min(max(2, runtime.GOMAXPROCS(0)*2), 8)
	for _, mode := range []string{"create", "temp+rename"} {
		b.Run("mode="+mode, func(b *testing.B) {
			tmp := benchDir(b)
			b.SetBytes(dirs * perDir * size)
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				root := filepath.Join(tmp, strconv.Itoa(i))
				benchQuiesce(b)
				b.StartTimer()
				cpu0 := cpuTime()
				next := make(chan int)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var failed error
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for d := range next {
							if err := benchFloorDir(filepath.Join(root, strconv.Itoa(d), "rounds"), perDir, data, mode == "temp+rename"); err != nil {
								mu.Lock()
								failed = err
								mu.Unlock()
							}
						}
					}()
				}
				for d := 0; d < dirs; d++ {
					next <- d
				}
				close(next)
				wg.Wait()
				cpu += cpuTime() - cpu0
				b.StopTimer()
				if failed != nil {
					b.Fatal(failed)
				}
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(dirs*perDir, "files")
		})
	}
}

func benchFloorDir(dir string, n int, data []byte, temp bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var pending []*os.File
	for r := 1; r <= n; r++ {
		name := filepath.Join(dir, roundName(r))
		var f *os.File
		var err error
		if temp {
			f, err = os.CreateTemp(dir, "."+roundName(r)+".tmp-*")
		} else {
			f, err = os.Create(name)
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
		if temp {
			pending = append(pending, f) // renamed together, as a batch does
			continue
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	for r, f := range pending {
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), filepath.Join(dir, roundName(r+1))); err != nil {
			return err
		}
	}
	return nil
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNoopAppend times `scribe append` over the whole archive when
// nothing changed, after one full inscription outside the timer (timed on
// its own: full-s). noop/full-% is the no-op run's time as a percentage of
// the full run's; read-B/op the bytes it read (sources and store).
func BenchmarkNoopAppend(b *testing.B) { benchNoop(b, inscribe.Options{}) }

// BenchmarkNoopInscribe is BenchmarkNoopAppend for `scribe inscribe`, which
// checks every round file and every source that changed since its note from
// the start: over an unchanged archive it reads neither.
func BenchmarkNoopInscribe(b *testing.B) { benchNoop(b, inscribe.Options{Verify: true}) }

func benchNoop(b *testing.B, opts inscribe.Options) {
	archive := benchArchive(b)
	ts, _ := benchSources(b, archive)
	root := filepath.Join(benchDir(b), "store")
	benchFreshProcess()
	benchQuiesce(b)
	benchWarm(b, ts)
	start := time.Now()
	benchRun(b, root, archive, inscribe.Options{Verify: true})
	full := time.Since(start)
	b.ReportAllocs()
	var elapsed time.Duration
	var read, written int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		benchFreshProcess()
		benchQuiesce(b)
		benchWarm(b, ts)
		r0, w0 := procIO()
		b.StartTimer()
		start := time.Now()
		rs := benchRun(b, root, archive, opts)
		elapsed += time.Since(start)
		b.StopTimer()
		r1, w1 := procIO()
		read += r1 - r0
		written += w1 - w0
		for _, r := range rs {
			if r.Outcome != inscribe.Unchanged {
				b.Fatalf("%s: %s, want unchanged", r.Doc, r.Outcome)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	per := elapsed / time.Duration(b.N)
	b.ReportMetric(full.Seconds(), "full-s")
	b.ReportMetric(float64(per.Microseconds())/1000, "noop-ms")
	b.ReportMetric(100*per.Seconds()/full.Seconds(), "noop/full-%")
	b.ReportMetric(float64(read)/float64(b.N), "read-B/op")
	b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
}

// BenchmarkAppendTail times appending 10 new lines to one session of 1, 10
// and 50 MB: the session less its last 10 lines is inscribed outside the
// timer, the 10 lines are appended to the source, and inscribe.Update (inscribe.Options{},
// as `scribe append` runs it, with the index opened and closed as a new
// process would) is timed. Each further iteration appends the next 10
// lines; once the session has grown by a tenth it is put back to its
// prefix and inscribed again (outside the timer). read-B/op and
// written-B/op are the bytes the append's system calls read and wrote
// (source, store and indexes); peak-RSS-MB the process's VmHWM during the
// append, reset to the RSS before it. All of them should stay flat as the
// session grows. inscribe-peak-RSS-MB is the VmHWM of inscribing the
// session (less its last 10 lines) into an empty store, which should stay
// flat too.
//
// The session is the archive's largest session, cut at a line boundary
// once it reaches the size; if it is too small, it is continued with copies
// of itself with fresh uuids (as mkarchive.py builds sessions).
func BenchmarkAppendTail(b *testing.B) {
	archive := benchArchive(b)
	tmpl, sid := benchLargestSession(b, archive)
	for _, mb := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("size=%dMB", mb), func(b *testing.B) {
			benchAppendTail(b, tmpl, sid, int64(mb)<<20)
		})
	}
}

func benchAppendTail(b *testing.B, tmpl, sid string, size int64) {
	const batch = 10
	dir := benchDir(b)
	gen := filepath.Join(dir, "stream.jsonl")
	ends := benchGrow(b, tmpl, sid, gen, size, size/10, batch)
	// The session is the first m lines (the first to reach size); its
	// prefix the first m-batch.
	m := sort.Search(len(ends), func(i int) bool { return ends[i] >= size }) + 1
	prefixEnd := ends[m-batch-1]
	batches := (len(ends) - (m - batch)) / batch
	for batches > 1 && ends[m-1+(batches-1)*batch]-ends[m-1] > size/10 {
		batches--
	}
	stream, err := os.Open(gen)
	if err != nil {
		b.Fatal(err)
	}
	defer stream.Close()
	src := filepath.Join(dir, "projects", "-home-dev-src-bench", sid+".jsonl")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "store")
	// reset puts the source back to its prefix and inscribes it afresh.
	resets := 0
	var inscribeKB int64 // peak RSS of inscribing the session
	reset := func() {
		out, err := os.Create(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, io.NewSectionReader(stream, 0, prefixEnd)); err != nil {
			b.Fatal(err)
		}
		if err := out.Close(); err != nil {
			b.Fatal(err)
		}
		if _, err := os.Stat(root); err == nil {
			// Set aside, not deleted (see benchDeleted).
			resets++
			if err := os.Rename(root, fmt.Sprintf("%s.%d", root, resets)); err != nil {
				b.Fatal(err)
			}
		}
		benchFreshProcess()
		benchResetPeak()
		benchRun(b, root, filepath.Dir(src), inscribe.Options{Verify: true})
		inscribeKB = max(inscribeKB, procStatusKB("VmHWM"))
	}
	reset()
	next := 0
	ts, err := storetest.Claude.Discover(src)
	if err != nil || len(ts) != 1 {
		b.Fatalf("discover %s: %v", src, err)
	}
	tr := ts[0]
	b.ReportAllocs()
	var read, written, peakKB int64
	var maxNs int64
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		if next == batches {
			reset()
			next = 0
		}
		from, to := ends[m-batch-1+next*batch], ends[m-1+next*batch]
		next++
		out, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, io.NewSectionReader(stream, from, to-from)); err != nil {
			b.Fatal(err)
		}
		out.Close()
		st, err := inscribe.OpenStore(root)
		if err != nil {
			b.Fatal(err)
		}
		s := views.Open(st)
		benchFreshProcess()
		benchQuiesce(b)
		r0, w0 := procIO()
		start := time.Now()
		b.StartTimer()
		tr.Adapter = storetest.Claude
		rs := s.Update(tr, inscribe.Options{})
		cerr := s.CloseIndex()
		b.StopTimer()
		maxNs = max(maxNs, int64(time.Since(start)))
		r1, w1 := procIO()
		read += r1 - r0
		written += w1 - w0
		peakKB = max(peakKB, procStatusKB("VmHWM"))
		if cerr != nil {
			b.Fatal(cerr)
		}
		for _, r := range rs {
			if r.Err != nil || r.Outcome == inscribe.Unchanged {
				b.Fatalf("%s: %s %v, want appended", r.Doc, r.Outcome, r.Err)
			}
		}
	}
	b.ReportMetric(float64(size)/(1<<20), "session-MB")
	b.ReportMetric(float64(maxNs)/1e6, "max-ms")
	b.ReportMetric(float64(read)/float64(b.N), "read-B/op")
	b.ReportMetric(float64(written)/float64(b.N), "written-B/op")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
	b.ReportMetric(float64(inscribeKB)/1024, "inscribe-peak-RSS-MB")
}

// BenchmarkAppendLongRound is BenchmarkAppendTail on a session that is one
// long round: one prompt, then tool calls and their results (about 4.6 KB
// each) until the session reaches 1, 10 or 50 MB, as an agent working alone
// for hours writes it. An append re-reads and rewrites the open round, so
// here its cost grows with the round (see bench/README.md). It needs no
// archive.
func BenchmarkAppendLongRound(b *testing.B) {
	for _, mb := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("size=%dMB", mb), func(b *testing.B) {
			size := int64(mb) << 20
			sid := "abcdabcd-0000-4000-8000-000000000001"
			tmpl := filepath.Join(b.TempDir(), sid+".jsonl")
			benchLongRound(b, tmpl, sid, size+size/5+1<<20)
			benchAppendTail(b, tmpl, sid, size)
		})
	}
}

// benchLongRound writes a session of one round of about size bytes.
func benchLongRound(b *testing.B, path, sid string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"run the long job"},"uuid":"00000000-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"%s"}`+"\n", sid)
	out := strings.Repeat("output line of a long command\\n", 140)
	parent := "00000000-0000-4000-8000-000000000000"
	var n int64
	for i := 1; n < size; i++ {
		a, r := fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i), fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+1)
		k, _ := fmt.Fprintf(w, `{"parentUuid":"%s","isSidechain":false,"message":{"id":"msg_%d","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"step %d"}}]},"type":"assistant","uuid":"%s","timestamp":"2026-01-01T00:00:01.000Z","sessionId":"%s"}`+"\n", parent, i, i, i, a, sid)
		m, _ := fmt.Fprintf(w, `{"parentUuid":"%s","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%d: %s"}]},"uuid":"%s","timestamp":"2026-01-01T00:00:02.000Z","sessionId":"%s"}`+"\n", a, i, i, out, r, sid)
		n += int64(k + m)
		parent = r
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchLargestSession returns the largest session transcript in the
// archive and its session id.
func benchLargestSession(b *testing.B, archive string) (string, string) {
	b.Helper()
	ts, err := storetest.Claude.Discover(archive)
	if err != nil {
		b.Fatal(err)
	}
	best, id, bestSize := "", "", int64(-1)
	for _, t := range ts {
		if t.Path == "" {
			continue
		}
		if fi, err := os.Stat(t.Path); err == nil && fi.Size() > bestSize {
			best, id, bestSize = t.Path, t.ID, fi.Size()
		}
	}
	if best == "" {
		b.Fatalf("%s holds no session", archive)
	}
	return best, id
}

// benchGrow writes to out the lines of the session tmpl (id sid), then as
// many copies of it as needed, until the file holds size bytes and then at
// least extra more bytes and 2*batch more lines. A copy gets fresh uuids
// (all but the session id), its roots are chained to the last entry before
// it and its timestamps move later, so the result parses like one long
// session. It returns each line's end offset.
func benchGrow(b *testing.B, tmpl, sid, out string, size, extra int64, batch int) []int64 {
	b.Helper()
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	var ends []int64
	var off int64
	var sizeLine int
	lastLeaf := ""
	for copyN := 0; ; copyN++ {
		in, err := os.Open(tmpl)
		if err != nil {
			b.Fatal(err)
		}
		lr := source.NewLineReader(in, 1, 0)
		mapping := map[string]string{sid: sid}
		for {
			l, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if !l.Terminated {
				break // a torn last line stays out
			}
			line := l.Raw
			var env struct {
				Type       string  `json:"type"`
				UUID       string  `json:"uuid"`
				ParentUUID *string `json:"parentUuid"`
			}
			json.Unmarshal(line, &env)
			chained := env.Type == "user" || env.Type == "assistant" || env.Type == "system" || env.Type == "attachment"
			if copyN > 0 {
				line = testenv.FreshUUIDs(line, mapping, rng)
				line = benchShiftTimes(line, time.Duration(copyN)*1000*time.Hour)
				if chained && env.ParentUUID == nil && lastLeaf != "" {
					line = bytes.Replace(line, []byte(`"parentUuid":null`), []byte(`"parentUuid":"`+lastLeaf+`"`), 1)
				}
			}
			if chained && env.UUID != "" {
				lastLeaf = env.UUID
				if m, ok := mapping[env.UUID]; ok {
					lastLeaf = m
				}
			}
			w.Write(line)
			w.WriteByte('\n')
			off += int64(len(line)) + 1
			ends = append(ends, off)
			if sizeLine == 0 && off >= size {
				sizeLine = len(ends)
			}
			if sizeLine > 0 && off >= size+extra && len(ends) >= sizeLine+2*batch {
				in.Close()
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
				if sizeLine <= batch {
					b.Fatalf("%s: a %d-byte session has only %d lines", tmpl, size, sizeLine)
				}
				return ends
			}
		}
		in.Close()
		if off == 0 {
			b.Fatalf("%s is empty", tmpl)
		}
	}
}

// benchShiftTimes moves every "timestamp" of a line d later.
func benchShiftTimes(line []byte, d time.Duration) []byte {
	key := []byte(`"timestamp":"`)
	const layout = "2006-01-02T15:04:05.000Z"
	var out []byte
	last := 0
	for from := 0; ; {
		i := bytes.Index(line[from:], key)
		if i < 0 {
			break
		}
		at := from + i + len(key)
		from = at
		if at+len(layout) > len(line) {
			break
		}
		t, err := time.Parse(layout, string(line[at:at+len(layout)]))
		if err != nil {
			continue
		}
		out = append(out, line[last:at]...)
		out = append(out, t.Add(d).UTC().Format(layout)...)
		last = at + len(layout)
	}
	if out == nil {
		return line
	}
	return append(out, line[last:]...)
}

// BenchmarkRoundTimes measures what a session's timestamps cost: one
// session of short prompt/reply rounds whose entries each have a time of
// their own (distinct), all the same time (equal: an import, a client
// that writes coarse times), or none (missing). inscribe is `scribe
// inscribe` of the session into a new store (10,000 rounds); append is
// one more round appended to a session of 10 or 10,000 rounds, as
// `scribe append` does it (a store opened afresh, the index closed after),
// each iteration a round more. Rounds that share a time once cost time
// quadratic in their number in the store's index (issue 34). It needs no
// archive; cpu-s/op is user and system time.
func BenchmarkRoundTimes(b *testing.B) {
	for _, times := range []string{"distinct", "equal", "missing"} {
		b.Run("inscribe/times="+times+"/rounds=10000", func(b *testing.B) {
			dir := benchDir(b)
			src := filepath.Join(dir, "projects", "-home-dev-src-bench")
			benchTimedSession(b, filepath.Join(src, benchTimesID+".jsonl"), times, 0, 10000)
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				root := filepath.Join(dir, fmt.Sprintf("store-%d", i))
				benchFreshProcess()
				benchQuiesce(b)
				b.StartTimer()
				cpu0 := cpuTime()
				benchRun(b, root, src, inscribe.Options{Verify: true})
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
	for _, n := range []int{10, 10000} {
		for _, times := range []string{"distinct", "equal", "missing"} {
			b.Run(fmt.Sprintf("append/times=%s/rounds=%d", times, n), func(b *testing.B) {
				dir := benchDir(b)
				src := filepath.Join(dir, "projects", "-home-dev-src-bench", benchTimesID+".jsonl")
				root := filepath.Join(dir, "store")
				benchTimedSession(b, src, times, 0, n)
				benchRun(b, root, filepath.Dir(src), inscribe.Options{Verify: true})
				ts, err := storetest.Claude.Discover(src)
				if err != nil || len(ts) != 1 {
					b.Fatalf("discover %s: %v", src, err)
				}
				var cpu time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					benchTimedSession(b, src, times, n+i, n+i+1)
					benchFreshProcess()
					benchQuiesce(b)
					b.StartTimer()
					cpu0 := cpuTime()
					st, err := inscribe.OpenStore(root)
					if err != nil {
						b.Fatal(err)
					}
					s := views.Open(st)
					ts[0].Adapter = storetest.Claude
					rs := s.Update(ts[0], inscribe.Options{})
					cerr := s.CloseIndex()
					cpu += cpuTime() - cpu0
					b.StopTimer()
					if cerr != nil {
						b.Fatal(cerr)
					}
					for _, r := range rs {
						if r.Err != nil || r.Outcome != inscribe.Appended {
							b.Fatalf("%s: %s %v, want appended", r.Doc, r.Outcome, r.Err)
						}
					}
					b.StartTimer()
				}
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// benchTimesID is BenchmarkRoundTimes's session.
const benchTimesID = "abcdabcd-0000-4000-8000-000000000034"

// benchTimedSession appends rounds from to to (a prompt and its reply
// each) to the session at path, creating it (and its folder) with round
// 0: distinct times ten seconds apart, equal times, or missing ones.
func benchTimedSession(b *testing.B, path, times string, from, to int) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	for r := from; r < to; r++ {
		parent := "null"
		if r > 0 {
			parent = `"` + id(2*r) + `"`
		}
		for k, msg := range []string{
			fmt.Sprintf(`"type":"user","message":{"role":"user","content":"question %d about the index"}`, r),
			fmt.Sprintf(`"type":"assistant","message":{"id":"msg_%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d"}]}`, r, r),
		} {
			stamp := ""
			switch times {
			case "distinct":
				stamp = `,"timestamp":"` + t0.Add(time.Duration(10*r+k)*time.Second).Format("2006-01-02T15:04:05.000Z") + `"`
			case "equal":
				stamp = `,"timestamp":"2026-01-01T00:00:00.000Z"`
			}
			fmt.Fprintf(w, `{"parentUuid":%s,"isSidechain":false,%s,"uuid":"%s"%s,"cwd":"/home/dev/src/bench","sessionId":"%s"}`+"\n",
				parent, msg, id(2*r+k+1), stamp, benchTimesID)
			parent = `"` + id(2*r+k+1) + `"`
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
