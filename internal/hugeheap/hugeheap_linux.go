//go:build linux && (amd64 || arm64)

package hugeheap

import (
	"strings"
	"syscall"
	"unsafe"
)

const (
	// chunk is the unit in which the runtime maps its heap (its page
	// allocator's chunk, pallocChunkBytes), aligned to it.
	chunk = 4 << 20
	// madvCollapse is MADV_COLLAPSE, which syscall does not name.
	madvCollapse = 25
)

// advised are the chunks advised, for the tests and so that none is
// advised twice.
var advised []uintptr

// on says huge pages may be asked for.
var on bool

// probe is an object on the heap, in the chunk it grows in.
var probe *[16]byte

func init() {
	godebug, _ := syscall.Getenv("GODEBUG")
	on = syscall.Getpagesize() == 4<<10 && !disabled(godebug)
	Advise()
}

// Advise asks for huge pages for the chunk of heap the runtime allocates
// in now, unless it did already: the heap's start lies anywhere in its
// first chunk (the runtime picks it at random), so the initializations
// after the package's own may have grown it into the next.
func Advise() {
	if !on {
		return
	}
	probe = new([16]byte)
	base := uintptr(unsafe.Pointer(probe)) &^ (chunk - 1)
	probe = nil
	for _, a := range advised {
		if a == base {
			return
		}
	}
	if madvise(base, syscall.MADV_HUGEPAGE) != nil {
		return
	}
	advised = append(advised, base)
	// An error here (no huge page to spare, a kernel before 6.1, a half
	// of the chunk not yet touched) leaves the pages as they were; the
	// advice stands for those not touched yet.
	_ = madvise(base, madvCollapse)
}

func madvise(base uintptr, advice int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, base, chunk, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}

// disabled reports whether GODEBUG's value godebug sets disablethp=1 (its
// last setting counts, as for the runtime).
func disabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			off = v == "1"
		}
	}
	return off
}
