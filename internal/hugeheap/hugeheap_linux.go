//go:build linux && (amd64 || arm64)

package hugeheap

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	// chunk is the unit in which the runtime maps its heap (its page
	// allocator's chunk, pallocChunkBytes), aligned to it.
	chunk = 4 << 20
	// huge is a huge page where pages are 4 KiB.
	huge = 2 << 20
	// most is how many chunks are advised at most.
	most = 2
	// madvCollapse is MADV_COLLAPSE, which syscall does not name.
	madvCollapse = 25
)

// advised are the chunks advised, so that none is advised twice; refused
// is the last advice's error, if one was refused.
var (
	advised []uintptr
	refused error
)

// on says huge pages may be asked for.
var on bool

// probe is an object on the heap, in the chunk it grows in.
var probe *[16]byte

func init() {
	godebug, _ := syscall.Getenv("GODEBUG")
	on = syscall.Getpagesize() == 4<<10 && !disabled(godebug) && !never()
	Advise()
}

// Advise asks for huge pages for the chunk of heap the runtime allocates
// in now, unless it did already or did for two: the heap's start lies
// anywhere in its first chunk (the runtime picks it at random), so the
// initializations after the package's own may have grown it into the
// next.
func Advise() {
	if !on || len(advised) >= most {
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
	if refused = advise(base); refused == nil {
		advised = append(advised, base)
	}
}

// advise asks for huge pages for the chunk at base (MADV_HUGEPAGE), and
// has the kernel gather the small pages already touched there into huge
// ones (MADV_COLLAPSE), a huge page at a time: a call for both stops at a
// half never touched. It returns the advice's error; each collapse's is
// in collapsed (nil: done). A collapse refused (no huge page to spare, a
// kernel before 6.1, a half not touched yet) leaves the pages as they
// were; the advice stands for those not touched yet.
func advise(base uintptr) error {
	if err := madvise(base, chunk, syscall.MADV_HUGEPAGE); err != nil {
		return err
	}
	for h := uintptr(0); h < chunk; h += huge {
		collapsed[base+h] = madvise(base+h, huge, madvCollapse)
	}
	return nil
}

// collapsed are the collapses' errors, by huge page, for the tests.
var collapsed = map[uintptr]error{}

func madvise(at, n uintptr, advice int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, at, n, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}

// disabled reports whether GODEBUG's value godebug turns huge pages off for
// the heap, as the runtime reads it: disablethp set to an integer other
// than 0, its last setting counting.
func disabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			n, err := strconv.Atoi(v)
			off = err == nil && n != 0
		}
	}
	return off
}

// never reports whether the system gives no program huge pages
// (transparent_hugepage "never"), which a collapse would not heed.
func never() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err != nil || bytes.Contains(mode, []byte("[never]"))
}
