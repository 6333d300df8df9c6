package main

import (
	"runtime/debug"
	"testing"
)

// TestMemoryLimit: the Go heap's soft limit is memoryBase plus twice the
// longest line; it gives way to the memory the rest of the process holds
// where that leaves less of memoryBudget, but never below what the heap
// needs (the live heap and its headroom).
func TestMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	limit := func(l *memoryLimit) int64 {
		t.Helper()
		l.set()
		return debug.SetMemoryLimit(-1)
	}
	l := &memoryLimit{}
	l.on.Store(true)
	if got := limit(l); got != memoryBase {
		t.Errorf("limit %d, want memoryBase %d", got, memoryBase)
	}
	l.others.Store(20 << 20) // leaves more than memoryBase
	if got := limit(l); got != memoryBase {
		t.Errorf("others of 20 MiB: limit %d, want memoryBase %d", got, memoryBase)
	}
	l.others.Store(40 << 20)
	if got, want := limit(l), int64(memoryBudget-40<<20); got != want {
		t.Errorf("others of 40 MiB: limit %d, want %d", got, want)
	}
	l.longest.Store(100 << 20)
	if got, want := limit(l), int64(memoryBudget+200<<20-40<<20); got != want {
		t.Errorf("a line of 100 MiB: limit %d, want %d", got, want)
	}
	l.longest.Store(0)
	l.others.Store(70 << 20) // more than the budget: the floor and memoryHeadroom
	l.live.Store(2 << 20)
	if got, want := limit(l), int64(2<<20+memoryHeadroom); got != want {
		t.Errorf("others of 70 MiB: limit %d, want %d", got, want)
	}
	l.others.Store(40 << 20)
	l.live.Store(30 << 20) // the floor: the live heap and its headroom
	l.scan.Store(4 << 20)
	l.overhead.Store(1 << 20)
	if got, want := limit(l), int64(30<<20+2<<20+1<<20); got != want {
		t.Errorf("live heap of 30 MiB: limit %d, want the floor %d", got, want)
	}
	l.on.Store(false)
	before := debug.SetMemoryLimit(12345)
	l.set()
	if got := debug.SetMemoryLimit(before); got != 12345 {
		t.Errorf("a stopped limit was set: %d", got)
	}
}

// TestResidentBytes: the process's resident memory reads, where the
// system says it.
func TestResidentBytes(t *testing.T) {
	n, ok := residentBytes()
	if !ok {
		t.Skip("this system does not say a process's resident memory (/proc/self/statm)")
	}
	if n < 1<<20 || n > 1<<40 {
		t.Errorf("resident %d bytes", n)
	}
}
