// Command scribe turns AI-agent sessions into a durable, readable, searchable
// archive, and back again. See the README and docs/FORMAT.md.
package main

import (
	"os"
	"runtime/debug"

	"github.com/scribe-archive/scribe/session/source"
)

func main() {
	// scribe's live heap is small (a round at a time) and it allocates
	// briskly while decoding: collecting at 300% rather than 100% growth
	// takes a fifth off a bulk inscribe (mkarchive --sessions 200: 5.9 s to
	// 4.8 s, CPU 8.8 s to 7.3 s) for a peak of ~52 MB instead of ~33 MB.
	// GOGC, when set, still decides. The soft limit takes the headroom back
	// where it would matter: scribe's memory is bounded by its longest
	// line (docs/FORMAT.md, section 9), so the limit is a base for
	// everything else plus two such lines, raised as longer lines come.
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(300)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(memoryBase)
		source.OnLongerLine(func(n int64) { debug.SetMemoryLimit(memoryBase + 2*n) })
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// memoryBase is the soft memory limit before any long line: the Go heap of
// an inscription of many ordinary lines, with room to spare for GOGC.
const memoryBase = 48 << 20
