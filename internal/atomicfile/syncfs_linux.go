//go:build linux && (amd64 || arm64)

package atomicfile

import (
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// sysSyncfs is syncfs(2), which the syscall package does not name on every
// architecture.
var sysSyncfs = map[string]uintptr{"amd64": 306, "arm64": 267}[runtime.GOARCH]

// syncfs flushes the file system holding f. ok is false where it cannot.
//
// The batches that commit at the same time on one file system share their
// flushes (fsSync): a syncfs writes out every dirty page of the file
// system, the other writers' too, so each writer calling its own would
// make every call wait for everyone's data, and more of them the more
// writers there are.
func syncfs(f *os.File) (ok bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return false, nil
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return rawSyncfs(f)
	}
	g, _ := fsSyncs.LoadOrStore(st.Dev, &fsSync{})
	return g.(*fsSync).sync(f)
}

// fsSyncs holds an fsSync for each file system (device) flushed so far.
var fsSyncs sync.Map

// An fsSync makes the syncfs calls on one file system one at a time, each
// serving every caller that came before it started (a group commit). A
// caller needs a flush that starts after its call: one already running may
// have started before its files were written, so it waits for the next,
// which then also serves whoever came in meanwhile.
type fsSync struct {
	mu      sync.Mutex
	cond    sync.Cond
	running bool
	started uint64 // flushes begun
	done    uint64 // flushes ended
	// failed is the last flush that failed or could not run, and ok and
	// err what it returned: a caller it served gets them.
	failed uint64
	ok     bool
	err    error
	flush  func(*os.File) (bool, error) // rawSyncfs; tests count the calls
}

func (g *fsSync) sync(f *os.File) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond.L == nil {
		g.cond.L = &g.mu
	}
	want := g.started + 1
	for g.done < want {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		n := g.started
		flush := g.flush
		if flush == nil {
			flush = rawSyncfs
		}
		g.mu.Unlock()
		ok, err := flush(f)
		g.mu.Lock()
		g.running, g.done = false, n
		if !ok || err != nil {
			g.failed, g.ok, g.err = n, ok, err
		}
		g.cond.Broadcast()
	}
	if g.failed >= want {
		return g.ok, g.err
	}
	return true, nil
}

// rawSyncfs is syncfs(2) on f.
func rawSyncfs(f *os.File) (ok bool, err error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return false, nil
	}
	var errno syscall.Errno
	if cerr := conn.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(sysSyncfs, fd, 0, 0)
	}); cerr != nil {
		return false, nil
	}
	if errno == syscall.ENOSYS {
		return false, nil
	}
	if errno != 0 {
		return true, errno
	}
	return true, nil
}

// fadvDontneed is POSIX_FADV_DONTNEED on Linux.
const fadvDontneed = 4

// dropPages has the kernel drop name's pages from the page cache
// (posix_fadvise POSIX_FADV_DONTNEED). It only drops clean pages, so it
// follows the batch's flush. A failure costs nothing but the cache, so it
// is not reported.
func dropPages(name string) {
	f, err := osfile.Open(name)
	if err != nil {
		return
	}
	dropFilePages(f)
	f.Close()
}

// dropFilePages is dropPages through an open file.
func dropFilePages(f *os.File) {
	syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontneed, 0, 0)
}
