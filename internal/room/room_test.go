package room

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

var sink []byte

// TestMake: a long allocation that would pass the limit beside the
// garbage before it collects first; a short one, one within the limit, or
// one without a limit does not.
func TestMake(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // only the limit and Make collect
	cycles := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC
	}
	runtime.GC()
	for _, c := range []struct {
		limit   int64
		n       int
		collect bool
	}{
		{math.MaxInt64, 64 << 20, false},
		{256 << 20, Min - 1, false},
		{256 << 20, 64 << 20, false},
		{64 << 20, 64 << 20, true},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		sink = make([]byte, 32<<20) // garbage once dropped
		sink = nil
		debug.SetMemoryLimit(c.limit)
		before := cycles()
		Make(c.n)
		if got := cycles() > before; got != c.collect {
			t.Errorf("limit %d, n %d: collected %v, want %v", c.limit, c.n, got, c.collect)
		}
	}
}
