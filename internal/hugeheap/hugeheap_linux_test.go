//go:build linux && (amd64 || arm64)

package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestAdvised: the init advised the chunk the heap allocates in, and the
// kernel marked it so (VmFlags "hg" in /proc/self/smaps), where the
// system gives huge pages at all.
func TestAdvised(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("this kernel gives no transparent huge pages (%q, %v)", mode, err)
	}
	if disabled(os.Getenv("GODEBUG")) {
		t.Skip("GODEBUG=disablethp=1 turns the package off")
	}
	if len(advised) == 0 {
		t.Fatal("no chunk advised")
	}
	for _, base := range advised {
		flags, huge := vmFlags(t, base)
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("the mapping of chunk %#x has VmFlags %q, without hg", base, flags)
		}
		t.Logf("chunk %#x: VmFlags %s, AnonHugePages %d kB", base, flags, huge)
	}
	n := len(advised)
	Advise()
	if len(advised) > n+1 {
		t.Errorf("Advise advised %d chunks, want one at most", len(advised)-n)
	}
	for i, a := range advised {
		for _, b := range advised[:i] {
			if a == b {
				t.Errorf("chunk %#x advised twice", a)
			}
		}
	}
}

// vmFlags reads the VmFlags and AnonHugePages of the mapping holding addr.
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
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(strings.Fields(line)[0], ":") {
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

// TestDisabled: GODEBUG=disablethp=1 turns the package off, its last
// setting counting as for the runtime.
func TestDisabled(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"gctrace=1,disablethp=1":    true,
		"disablethp=1,disablethp=0": false,
		"disablethp=0":              false,
		"xdisablethp=1":             false,
	} {
		if got := disabled(godebug); got != want {
			t.Errorf("disabled(%q) = %v, want %v", godebug, got, want)
		}
	}
	if os.Getenv("HUGEHEAP_CHILD") != "" {
		if len(advised) != 0 {
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
