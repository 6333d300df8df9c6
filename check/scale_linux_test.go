package check_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
)

func openDescriptors(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // ReadDir's own
}

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Checking many sessions, over their sources and in the store, holds as
// many descriptors and as much memory at the end as after the first few,
// and leaves no scratch folder behind. A leak of one descriptor per session
// would exhaust the lowered limit and show as false "backing store is
// damaged" findings, as it did over 10,000 sessions (issue 14).
func TestCheckManySessionsFewDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: checks 200 sessions")
	}
	const n = 200
	projects := filepath.Join(t.TempDir(), "projects")
	storetest.Generate(t, projects, n)
	ts, err := storetest.Claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	s, err := inscribe.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, tr := range ts {
		for _, r := range s.Update(tr, inscribe.Options{Verify: true}) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			docs = append(docs, r.Doc)
		}
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	small := lim
	small.Cur = uint64(openDescriptors(t)) + 40
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &small); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)

	ok := func(what string, reps ...*check.Report) {
		t.Helper()
		for _, r := range reps {
			if !r.OK() {
				t.Fatalf("%s %s with at most %d descriptors: %+v", what, r.Source, small.Cur, r.Findings)
			}
		}
	}
	const warm = 20
	var fds int
	var heap uint64
	for i, tr := range ts {
		if i == warm {
			fds, heap = openDescriptors(t), liveHeap()
		}
		reps, err := check.Session(tr, claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		ok("check", reps...)
	}
	for _, md := range docs {
		rep, err := check.Stored(storetest.Doc(t, md), claudeFormat)
		if err != nil {
			t.Fatal(err)
		}
		ok("check --store", rep)
	}
	if got := openDescriptors(t); got != fds {
		t.Errorf("%d descriptors open after checking %d sessions twice, %d after %d", got, n, fds, warm)
	}
	// The runtime keeps some slack; a kilobyte per session is a leak.
	if got := liveHeap(); got > heap+n*1024/2 {
		t.Errorf("live heap %d KB after checking %d sessions, %d KB after %d", got>>10, n, heap>>10, warm)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("check left %d scratch folders, such as %s", len(left), left[0].Name())
	}
}

// A check that fails, or panics, in its export leaves no scratch folder
// behind (issue 14).
func TestCheckRemovesItsScratchFolders(t *testing.T) {
	s, projects := storetest.Samples(t)
	ts, err := storetest.Claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := s.FindDoc(ts[0].ID)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	boom := errors.New("boom")
	for name, f := range map[string]check.Format{
		"an export that fails": {Source: storetest.Claude,
			Export:     func(*inscribe.Doc, string) error { return boom },
			Transcript: func(*inscribe.Doc, io.Writer) ([]error, error) { return nil, boom }},
		"an export that panics": {Source: storetest.Claude,
			Export:     func(*inscribe.Doc, string) error { panic(boom) },
			Transcript: func(*inscribe.Doc, io.Writer) ([]error, error) { panic(boom) }},
	} {
		for _, run := range []func(){
			func() { check.Session(ts[0], f) },
			func() { check.Stored(storetest.Doc(t, md), f) },
		} {
			func() {
				defer func() { recover() }()
				run()
			}()
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("%s: check left %s behind", name, left[0].Name())
			}
		}
	}
}
