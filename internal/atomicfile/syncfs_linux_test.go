//go:build linux && (amd64 || arm64)

package atomicfile

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
