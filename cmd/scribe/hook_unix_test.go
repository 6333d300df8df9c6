//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
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

	unlock, err := storetest.Doc(t, md).Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
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
	unlock()

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

// TestHookIndexBusy: while another process writes what an append writes
// after the document (the document's session.db and the store's
// sessions.db, each in a transaction of another scribe, as a reindex or a
// bulk inscribe holds them, and the catalogs' lock), append --hook writes
// the document, waits briefly for each, leaves them and exits 0: an index
// in use is not damaged, so nothing is set aside. The next append brings
// indexes and catalogs up to date.
func TestHookIndexBusy(t *testing.T) {
	dir, transcript := hookDir(t, 30)
	root := filepath.Join(dir, "data")
	if code, _, stderr := runHook(hookJSON(transcript), "--root", root, "append", "--hook"); code != exitOK {
		t.Fatalf("first append: status %d\n%s", code, stderr)
	}
	_, whole := hookDir(t, 0)
	data, _ := os.ReadFile(whole)
	if err := os.WriteFile(transcript, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(root, "sessions")
	md := filepath.Join(sessions, "claude", hookSession+".md")

	d := storetest.Doc(t, md)
	store, err := inscribe.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	release := holdIndexes(t, d.IndexPath(), store.IndexPath())
	unlockCatalogs, err := store.LockCatalogs(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlockCatalogs()

	cmd := scribeCmd("--root", root, "append", "--hook")
	cmd.Stdin = strings.NewReader(hookJSON(transcript))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Errorf("append --hook with its indexes busy: %v, want status 0\n%s", err, stderr.String())
	}
	if took > 15*time.Second { // loosely: it must not wait out SQLite's 30 s
		t.Errorf("append --hook waited %v for the indexes", took)
	}
	for _, want := range []string{
		"held it locked for 1.5s; its indexes are left for its next append",
		"another scribe is updating the catalogs in " + sessions + "; left for the next append",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "set aside") || strings.Contains(stderr.String(), "damaged") {
		t.Errorf("an index in use was taken for damaged:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "0 inscribed, 1 appended") {
		t.Errorf("the document was not appended:\n%s", stdout.String())
	}
	release()
	unlockCatalogs()

	// The next append catches up: search finds the rounds the busy one
	// added, and the catalogs are those of a whole inscription.
	if code, _, stderr := runHook(hookJSON(transcript), "--root", root, "append", "--hook"); code != exitOK || stderr != "" {
		t.Fatalf("the next append: status %d\n%s", code, stderr)
	}
	code, out, errOut := runHook("", "--root", root, "search", "fifth")
	if code != exitOK || !strings.Contains(out, "fifth") {
		t.Errorf("search after the next append: status %d\n%s%s", code, out, errOut)
	}
	refDir, refTranscript := hookDir(t, 0)
	refRoot := filepath.Join(refDir, "data")
	if code, _, stderr := runHook("", "--root", refRoot, "inscribe", refTranscript); code != exitOK {
		t.Fatalf("reference: status %d\n%s", code, stderr)
	}
	for _, catalog := range []string{"index.md", filepath.Join("claude", "index.md")} {
		want, _ := os.ReadFile(filepath.Join(refRoot, "sessions", catalog))
		got, _ := os.ReadFile(filepath.Join(sessions, catalog))
		if string(got) != string(want) {
			t.Errorf("%s after the next append:\n%s\nwant:\n%s", catalog, got, want)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(sessions, "*", "*", "*.damaged-*")); len(matches) > 0 {
		t.Errorf("set aside: %v", matches)
	}
}

// holdIndexes starts another process that holds each index at paths in a
// write transaction, as another scribe writing it does, until release.
func holdIndexes(t *testing.T, paths ...string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SCRIBE_TEST_HOLD_INDEXES="+strings.Join(paths, string(os.PathListSeparator)))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "held\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("holding %v: %q, %v", paths, line, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("holding %v: %v", paths, err)
			}
		})
	}
	t.Cleanup(release)
	return release
}
