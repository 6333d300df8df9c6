package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecoverCompletesACommit: a commit killed after its journal was
// written and its first rename made is completed by Recover: every target
// holds its new contents, no temporary file and no journal is left; a
// second Recover finds nothing to do.
func TestRecoverCompletesACommit(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "rounds")
	os.Mkdir(sub, 0o700)
	names := []string{filepath.Join(sub, "001.json"), filepath.Join(dir, "rounds.tsv"), filepath.Join(dir, "state.json")}
	for _, n := range names {
		os.WriteFile(n, []byte("old"), 0o600)
	}
	var b Batch
	b.Journal(filepath.Join(dir, "local", "journal.json"))
	os.Mkdir(filepath.Join(dir, "local"), 0o700)
	for _, n := range names {
		if _, err := b.WriteIfChangedIn(dir, n, []byte("new "+filepath.Base(n)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Commit, cut after the first rename.
	for _, p := range b.files {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.writeJournal(b.files); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b.files[0].f.Name(), names[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(names[1]); string(got) != "old" {
		t.Fatalf("%s: %q before Recover", names[1], got)
	}
	done, err := Recover(b.journal)
	if err != nil || !done {
		t.Fatalf("Recover: %v, %v", done, err)
	}
	for _, n := range names {
		if got, _ := os.ReadFile(n); string(got) != "new "+filepath.Base(n) {
			t.Errorf("%s: %q after Recover", n, got)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if isTempName(e.Name()) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if _, err := os.Stat(b.journal); err == nil {
		t.Error("the journal is left")
	}
	if done, err := Recover(b.journal); done || err != nil {
		t.Errorf("a second Recover: %v, %v", done, err)
	}
}

// TestCommitWithJournal: a commit that ends leaves no journal.
func TestCommitWithJournal(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	b.Journal(filepath.Join(dir, "journal.json"))
	for _, n := range []string{"a", "b"} {
		if _, err := b.WriteIfChanged(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("after the commit: %v", ents)
	}
}

func isTempName(name string) bool { return len(name) > 0 && name[0] == '.' }
