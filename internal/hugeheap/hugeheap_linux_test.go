//go:build linux && (amd64 || arm64)

package hugeheap

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestAdvised: the init advised the chunk the heap allocates in, and the
// kernel marked it so (VmFlags "hg" in /proc/self/smaps), where the
// system gives huge pages at all; Advise advises no chunk twice, and two
// at most.
func TestAdvised(t *testing.T) {
	if !on {
		t.Skip("huge pages are off here (transparent_hugepage never, GODEBUG=disablethp, or pages not of 4 KiB)")
	}
	if len(advised) == 0 {
		if refused != nil {
			t.Skipf("the kernel refuses MADV_HUGEPAGE here: %v", refused)
		}
		t.Fatal("no chunk advised")
	}
	for _, base := range advised {
		flags, kB := vmFlags(t, base)
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("the mapping of chunk %#x has VmFlags %q, without hg", base, flags)
		}
		t.Logf("chunk %#x: VmFlags %s, AnonHugePages %d kB, collapses %v, %v", base, flags, kB, collapsed[base], collapsed[base+huge])
	}
	for range 3 {
		Advise()
	}
	if len(advised) > most {
		t.Errorf("%d chunks advised, want %d at most", len(advised), most)
	}
	for i, a := range advised {
		for _, b := range advised[:i] {
			if a == b {
				t.Errorf("chunk %#x advised twice", a)
			}
		}
	}
}

// TestCollapse: a chunk whose lower half was never touched and whose
// upper half was gets a huge page for its upper half, its contents kept
// (a collapse asked for the whole chunk stops at the lower half).
func TestCollapse(t *testing.T) {
	if !on {
		t.Skip("huge pages are off here")
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	var major, minor int
	fmt.Sscanf(string(rel), "%d.%d", &major, &minor)
	if major < 6 || major == 6 && minor < 1 {
		t.Skipf("kernel %s has no MADV_COLLAPSE (6.1)", rel)
	}
	mem, err := syscall.Mmap(-1, 0, 2*chunk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	start := uintptr(unsafe.Pointer(&mem[0]))
	base := (start + chunk - 1) &^ (chunk - 1)
	upper := mem[base+huge-start : base+chunk-start]
	copy(upper[12345:], "kept as it was")
	if err := advise(base); err != nil {
		t.Skipf("the kernel refuses MADV_HUGEPAGE here: %v", err)
	}
	switch err := collapsed[base+huge]; {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOMEM), errors.Is(err, syscall.EBUSY):
		t.Skipf("no huge page to spare now: %v", err)
	case err != nil:
		t.Fatalf("the touched half was not collapsed: %v", err)
	}
	if _, kB := vmFlags(t, base+huge); kB < 2048 {
		t.Errorf("AnonHugePages %d kB after the collapse, want 2048", kB)
	}
	if got := string(upper[12345 : 12345+14]); got != "kept as it was" {
		t.Errorf("the collapse changed the page: %q", got)
	}
}

// vmFlags reads the VmFlags and AnonHugePages (kB) of the mapping holding
// addr.
func vmFlags(t *testing.T, addr uintptr) (string, int) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	huge := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		field := strings.Fields(line)
		if len(field) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(field[0], "-"); ok && !strings.HasSuffix(field[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			fmt.Sscan(v, &huge)
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			return strings.TrimSpace(v), huge
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return "", 0
}

// TestDisabled: GODEBUG's disablethp turns the package off as it does the
// runtime's huge pages: an integer other than 0, the last setting
// counting.
func TestDisabled(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"disablethp=2":              true,
		"gctrace=1,disablethp=1":    true,
		"disablethp=1,disablethp=0": false,
		"disablethp=0":              false,
		"disablethp=x":              false,
		"xdisablethp=1":             false,
	} {
		if got := disabled(godebug); got != want {
			t.Errorf("disabled(%q) = %v, want %v", godebug, got, want)
		}
	}
	if os.Getenv("HUGEHEAP_CHILD") != "" {
		if len(advised) != 0 || on {
			fmt.Printf("advised %d chunks\n", len(advised))
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDisabled$")
	cmd.Env = append(os.Environ(), "HUGEHEAP_CHILD=1", "GODEBUG=disablethp=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with GODEBUG=disablethp=1: %v\n%s", err, out)
	}
}
