// Package room makes room in the heap for a long buffer before it is
// allocated: scribe holds about two copies of a session's longest line
// (a line and its text), and the command's soft memory limit is set to
// that (cmd/scribe/memory.go); see [Make].
package room

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Make makes room for an allocation of n bytes that is about to be made
// (the buffer of a long line, of a long text, of a long message): when
// the heap's objects, the dead not yet collected among them, and n would
// pass the soft memory limit (debug.SetMemoryLimit, which the command
// sets), it collects first. The collector starts when an allocation takes
// the heap past its goal, and one of 100 MB takes it past at once, with
// the garbage of the text decoded before it, as long, still beside it; a
// second long allocation while that collection runs goes past again
// (append of a 100 MB prompt: 317 -> 256 MiB, issue 33). Without a limit,
// or for a short n, it does nothing.
func Make(n int) {
	if n < Min {
		return
	}
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64()+uint64(n) > uint64(limit) {
		runtime.GC()
	}
}

// Min is the shortest allocation Make considers: a collection costs a few
// milliseconds, reading the bytes of one of 16 MiB about as much.
const Min = 16 << 20
