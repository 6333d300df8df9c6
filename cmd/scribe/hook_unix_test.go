//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
)

// TestHookLockBusy: while another scribe writes the document (here the test,
// holding the lock of the document's folder as scribe takes it: an flock
// on <folder>/.lock), append --hook waits briefly, leaves the document and
// exits 0: not a failure, the next append catches up, and does.
func TestHookLockBusy(t *testing.T) {
	dir, transcript := hookDir(t, 30) // two rounds and a bit
	root := filepath.Join(dir, "data")
	if code, _, stderr := runHook(hookJSON(transcript), "--root", root, "append", "--hook"); code != exitOK {
		t.Fatalf("first append: status %d\n%s", code, stderr)
	}
	md := filepath.Join(root, "sessions", "claude", hookSession+".md")
	before, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	_, whole := hookDir(t, 0)
	data, _ := os.ReadFile(whole)
	if err := os.WriteFile(transcript, data, 0o644); err != nil {
		t.Fatal(err)
	}

	f, err := os.OpenFile(filepath.Join(inscribe.Folder(md), ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr := runHook(hookJSON(transcript), "--root", root, "append", "--hook")
	took := time.Since(start)
	if code != exitOK {
		t.Errorf("status %d while the lock is held, want 0 (not a failure)", code)
	}
	if want := "scribe: another scribe is writing " + md + "; left for the next append\n"; stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if want := "0 inscribed, 0 appended, 0 unchanged, 0 warnings, 0 failed, 1 left for the next append\n"; stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if took > 15*time.Second { // loosely: it must not wait out the 30 s of a plain append
		t.Errorf("append --hook waited %v for the lock", took)
	}
	if after, _ := os.ReadFile(md); string(after) != string(before) {
		t.Fatal("the document changed while another scribe held its lock")
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)

	// The next append catches up: the document is what inscribing the
	// whole transcript gives.
	code, stdout, stderr = runHook(hookJSON(transcript), "--root", root, "append", "--hook")
	if code != exitOK || !strings.Contains(stdout, "appended   ") {
		t.Fatalf("the next append: status %d\n%s%s", code, stdout, stderr)
	}
	refDir, refTranscript := hookDir(t, 0)
	if code, _, stderr := runHook("", "--root", filepath.Join(refDir, "data"), "inscribe", refTranscript); code != exitOK {
		t.Fatalf("reference: status %d\n%s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(refDir, "data", "sessions", "claude", hookSession+".md"))
	if string(want) == string(before) {
		t.Fatal("the first append already had the whole session: nothing to catch up")
	}
	if got, _ := os.ReadFile(md); string(got) != string(want) {
		t.Errorf("after the next append, the document is not the whole inscription")
	}
}
