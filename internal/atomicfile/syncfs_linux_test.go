//go:build linux && (amd64 || arm64)

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// Every caller of a shared syncfs returns only once a flush that began after
// its call has ended, and callers at the same time share flushes.
func TestSyncfsServesEveryCallerWithALaterFlush(t *testing.T) {
	var begun, ended atomic.Int64
	g := &fsSync{flush: func(*os.File) (bool, error) {
		begun.Add(1)
		time.Sleep(time.Millisecond)
		ended.Add(1)
		return true, nil
	}}
	const callers = 64
	var wg sync.WaitGroup
	var late atomic.Int64
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			before := begun.Load() // flushes that may have begun before this caller's writes
			if ok, err := g.sync(nil); !ok || err != nil {
				t.Errorf("sync: %v, %v", ok, err)
			}
			// Flushes run one at a time, in order: flush before+1 began
			// after this call, and it has ended.
			if ended.Load() < before+1 {
				late.Add(1)
			}
		}()
	}
	wg.Wait()
	if late.Load() > 0 {
		t.Errorf("%d callers returned before a flush that began after their call ended", late.Load())
	}
	if n := begun.Load(); n < 1 || n > callers {
		t.Errorf("%d flushes for %d callers", n, callers)
	}
	t.Logf("%d callers, %d flushes", callers, begun.Load())
}

// A flush that fails fails every caller it served.
func TestSyncfsSharesAFailure(t *testing.T) {
	boom := errors.New("boom")
	g := &fsSync{flush: func(*os.File) (bool, error) { return true, boom }}
	if _, err := g.sync(nil); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	g.flush = func(*os.File) (bool, error) { return true, nil }
	if _, err := g.sync(nil); err != nil {
		t.Fatalf("a later flush that succeeds: got %v", err)
	}
}

// The files a batch was asked to uncache leave the page cache when the
// batch commits, those whose descriptors it kept and the others alike; the
// other files stay.
func TestCommitUncaches(t *testing.T) {
	dir := droppableDir(t)
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i)
	}
	var b Batch
	names := []string{"kept"}
	for i := 0; i < maxHeld+2; i++ { // the last two are reopened to be dropped
		names = append(names, fmt.Sprintf("uncached-%d", i))
	}
	for _, name := range names {
		p, err := b.Create(filepath.Join(dir, name), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if name != "kept" {
			p.Uncache()
		}
		if _, err := p.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if b.held != maxHeld {
		t.Errorf("%d descriptors kept, want %d", b.held, maxHeld)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if b.held != 0 {
		t.Errorf("%d descriptors still kept after the commit", b.held)
	}
	if n := residentPages(t, filepath.Join(dir, "kept")); n == 0 {
		t.Fatalf("kept: no page cached after the commit; the check below cannot tell")
	}
	for _, name := range names[1:] {
		if n := residentPages(t, filepath.Join(dir, name)); n != 0 {
			t.Errorf("%s: %d pages still cached after the commit, want 0", name, n)
		}
	}
}

// droppableDir is a temporary folder on a file system whose clean pages
// can be dropped: not tmpfs or ramfs, whose pages are the files (the test
// temporary folder often is, then the package's folder is tried).
func droppableDir(t *testing.T) string {
	t.Helper()
	const tmpfsMagic, ramfsMagic = 0x01021994, 0x858458f6
	inMemory := func(dir string) bool {
		var st syscall.Statfs_t
		return syscall.Statfs(dir, &st) == nil && (st.Type == tmpfsMagic || st.Type == ramfsMagic)
	}
	dir := t.TempDir()
	if !inMemory(dir) {
		return dir
	}
	dir, err := os.MkdirTemp(".", "uncache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if inMemory(dir) {
		t.Skip("the temporary folder and the package's are in memory (tmpfs): there is no page cache to leave")
	}
	return dir
}

// residentPages counts name's pages in the page cache (mincore(2)).
func residentPages(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// A batch that aborts closes the descriptors it kept and leaves no file.
func TestAbortReleasesHeld(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 3; i++ {
		p, err := b.Create(filepath.Join(dir, fmt.Sprint(i)), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		p.Uncache()
		if _, err := p.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b.Abort()
	if b.held != 0 {
		t.Errorf("%d descriptors still kept after the abort", b.held)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
