package inscribe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockWait: an update that finds its document locked by another writer
// gives up after Options.LockWait with a *LockError, leaving the document as
// it was; once the lock is free, the next update catches up.
func TestLockWait(t *testing.T) {
	whole, rel := sample(t, "-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222")
	l := newLive(t)
	l.put(rel, prefixLines(whole, 30))
	l.update(false)
	md := filepath.Join(l.root, "data", "sessions", "claude", "22222222-2222-4222-8222-222222222222.md")
	before, _ := os.ReadFile(md)
	l.put(rel, whole)

	unlock, err := lockDoc(folderOf(md), 0) // another writer: a lock of its own
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = updateErr(t, l, Options{LockWait: 50 * time.Millisecond})
	waited := time.Since(start)
	unlock()
	var le *LockError
	if !errors.As(err, &le) || le.Path != folderOf(md) {
		t.Fatalf("error %v, want a LockError on %s", err, folderOf(md))
	}
	if waited >= lockTimeout {
		t.Errorf("the update waited %v, the default wait, not LockWait", waited)
	}
	if after, _ := os.ReadFile(md); string(after) != string(before) {
		t.Fatal("the document changed while another writer held its lock")
	}
	for _, r := range l.update(false) {
		if r.Doc == md && r.Outcome != Appended {
			t.Errorf("the update after the lock was freed gave %s, want %s", r.Outcome, Appended)
		}
	}
}
