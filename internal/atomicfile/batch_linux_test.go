package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func ctime(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}

// fineGrained reports whether the file system of dir stamps a change of a
// file whose time was read with a time later than the last one, within a
// clock tick (Linux's multigrain timestamps).
func fineGrained(t *testing.T, dir string) bool {
	p := filepath.Join(dir, "probe")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	later := 0
	for range 20 {
		before := ctime(t, p)
		os.Chmod(p, 0o600)
		if ctime(t, p).After(before) {
			later++
		}
	}
	return later == 20
}

// TestCommitStampsLastAfterFolders: where the file system keeps
// fine-grained times, a batch's last file is stamped later than the
// folders its other files went into, and a change of such a folder after
// the batch is stamped no earlier than the last file.
func TestCommitStampsLastAfterFolders(t *testing.T) {
	dir := t.TempDir()
	if !fineGrained(t, dir) {
		t.Skip("this file system stamps files with a coarse clock: the times of a batch's files may be equal")
	}
	rounds := filepath.Join(dir, "rounds")
	if err := os.Mkdir(rounds, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		var b Batch
		for _, name := range []string{filepath.Join(rounds, "001.json"), filepath.Join(rounds, "002.json"), filepath.Join(dir, "state.json")} {
			if _, err := b.WriteIfChanged(name, []byte{byte(i)}, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		note := ctime(t, filepath.Join(dir, "state.json"))
		if !ctime(t, rounds).Before(note) {
			t.Fatalf("batch %d: the rounds folder's change time %v is not before the last file's %v", i, ctime(t, rounds), note)
		}
		if err := os.Remove(filepath.Join(rounds, "001.json")); err != nil {
			t.Fatal(err)
		}
		if ctime(t, rounds).Before(note) {
			t.Fatalf("batch %d: a file removed after the batch left its folder's change time before the last file's", i)
		}
	}
}
