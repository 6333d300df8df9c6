package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/scribe-archive/scribe/session/source"
)

// setMemory sets the garbage collector's pace and the soft memory limit,
// and returns what stops the limit's upkeep (for benchmarks).
//
// scribe's live heap is small (a round at a time) and it allocates
// briskly while decoding: collecting at 300% rather than 100% growth
// takes a fifth off a bulk inscribe (mkarchive --sessions 200: 5.9 s to
// 4.8 s, CPU 8.8 s to 7.3 s). GOGC, when set, still decides.
//
// The soft limit takes that headroom back: scribe holds about two copies
// of its longest line (bench/README.md), so the limit is a base for
// everything else plus two such lines, raised as longer lines come. A
// limit below the live heap would have the collector run without pause,
// so after each collection the limit is also kept above what survived it,
// by half as much again up to 32 MiB (of what may hold pointers: what the
// collector marks), plus the runtime's own memory beside the heap's
// objects (which the limit counts). GOMEMLIMIT, when set, decides instead.
func setMemory() (stop func()) {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(300)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return func() {}
	}
	l := &memoryLimit{}
	l.on.Store(true)
	l.set()
	source.OnLongerLine(func(n int64) {
		l.longest.Store(n)
		l.set()
	})
	l.watch()
	return func() {
		l.on.Store(false)
		source.OnLongerLine(nil)
	}
}

// memoryBase is the soft memory limit of the Go heap before any long line.
// An inscription of ordinary lines then peaks near 53 MB of RSS (the
// executable's pages and SQLite's memory, 10 to 20 MB while a document is
// indexed, come on top of the Go heap); a session of a million tiny lines
// below 64 MB (issue 33's bound). A lower base costs CPU: collections grow
// more frequent, and each marks what is live. The base was 34 MiB while
// redaction linked gitleaks, whose rules were 6 to 9 MB of the live heap;
// without them, 28 MiB costs a300's inscription no CPU that its noise
// shows (26 MiB: 5 to 8% more user time; bench/README.md, stop 42).
// Several documents updated at once (a bulk inscription's workers) share
// it: a raise of 5 MiB for each beyond the first saved 1% of a300's CPU
// and cost it 5 to 9 MB of RSS (bench/README.md, stop 11).
const memoryBase = 28 << 20

// memoryBudget is what the whole process may hold (its RSS) before any
// long line, with a margin under issue 33's bound of 64 MiB: the Go heap
// gives way to the memory that is not its own when that grows (SQLite's,
// the executable's pages). While a repair rebuilt the index of a session
// of 500,000 rounds, SQLite held 16 MB and the executable's pages 20 MB
// beside a Go heap at its limit: 65.2 MB in all.
const memoryBudget = 60 << 20

// memoryHeadroom is what the heap keeps above its floor however much the
// rest of the process holds: at the floor itself, a heap of few pointers
// would be collected at almost every allocation.
const memoryHeadroom = 4 << 20

// memoryLimit keeps the soft memory limit at memoryBase plus twice the
// longest line (less where the memory that is not the Go runtime's,
// others, leaves less of memoryBudget plus twice the longest line, down to
// memoryHeadroom above the floor), or at the floor: the heap live after
// the last collection and half as much again of its part that may hold
// pointers (at most 32 MiB more) plus the runtime's overhead, whichever is
// more.
type memoryLimit struct {
	on       atomic.Bool
	longest  atomic.Int64
	live     atomic.Uint64
	scan     atomic.Uint64 // of live, the bytes that may hold pointers
	overhead atomic.Uint64
	others   atomic.Int64 // the process's resident memory that is not the Go runtime's
}

func (l *memoryLimit) set() {
	if !l.on.Load() {
		return
	}
	live, longest := int64(l.live.Load()), l.longest.Load()
	// The headroom pays for the collections, whose work is the live
	// heap's pointers: the bytes that hold none (a long line and its
	// text, the tables of offsets of a long session's graph and round
	// headers) take no headroom.
	scan := min(int64(l.scan.Load()), live)
	floor := live + min(scan/2, 32<<20) + int64(l.overhead.Load())
	limit := memoryBase + 2*longest
	if others := l.others.Load(); others > 0 {
		limit = min(limit, max(memoryBudget+2*longest-others, floor+memoryHeadroom))
	}
	debug.SetMemoryLimit(max(limit, floor))
}

// watch reads the live heap after each collection (a finalizer runs once
// an object is found unreachable, so once per cycle) and sets the limit.
func (l *memoryLimit) watch() {
	// (An object of its own: the finalizer of a tiny one, sharing its
	// block with others, may never run.)
	runtime.SetFinalizer(new([64]byte), func(*[64]byte) {
		if !l.on.Load() {
			return
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/free:bytes"}, {Name: "/gc/scan/heap:bytes"}}
		metrics.Read(s)
		ok := true
		for _, v := range s {
			ok = ok && v.Value.Kind() == metrics.KindUint64
		}
		if ok {
			l.live.Store(s[0].Value.Uint64())
			l.scan.Store(s[5].Value.Uint64())
			// What the limit counts beside the heap's objects and its
			// free pages: the runtime's metadata, partly used spans,
			// stacks.
			total, rest := s[1].Value.Uint64(), s[2].Value.Uint64()+s[3].Value.Uint64()+s[4].Value.Uint64()
			l.overhead.Store(total - min(rest, total))
			// What the process holds beside the runtime's mapped memory
			// (its total less what it released to the system).
			if rss, ok := residentBytes(); ok {
				mapped := int64(total - min(s[2].Value.Uint64(), total))
				l.others.Store(max(rss-mapped, 0))
			}
		}
		l.set()
		l.watch()
	})
}
